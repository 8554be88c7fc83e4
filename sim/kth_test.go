package sim_test

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/xce-sched/xce/cluster"
	"github.com/xce-sched/xce/framework"
	"github.com/xce-sched/xce/sim"
)

// traceDir finds ../shared/traces (or $XCE_TRACES).
func traceDir(t testing.TB) string {
	if raceEnabled {
		t.Skip("whole-trace replays are skipped under -race; .ci/run runs them without it")
	}
	dir := os.Getenv("XCE_TRACES")
	if dir == "" {
		dir = filepath.Join("..", "..", "shared", "traces")
	}
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("traces folder %s absent (set XCE_TRACES): %v", dir, err)
	}
	return dir
}

// replayAllKTH replays the KTH log under policy and requires every one of
// its 28,481 jobs to complete.
func replayAllKTH(t *testing.T, policy cluster.Policy) sim.Summary {
	sum := replayKTH(t, nil, policy)
	if sum.Jobs != 28481 || sum.Rejected != 0 || sum.Unfinished != 0 {
		t.Fatalf("jobs %d rejected %d unfinished %d; want all 28481", sum.Jobs, sum.Rejected, sum.Unfinished)
	}
	return sum
}

// TestKTHFCFS replays the 28,481-job cleaned KTH SP2 log under strict FCFS
// on its 100 × 1 machine. Two independent simulators give a mean bounded
// slowdown (τ = 10 s) of 6,815 and 6,819 on this file, and utilization
// 0.685 (issue 5): xce must be within 1% and ±0.005.
func TestKTHFCFS(t *testing.T) {
	sum := replayAllKTH(t, cluster.PolicyFCFS)
	if math.Abs(sum.BSLDMean-6815)/6815 > 0.01 {
		t.Errorf("bsld_mean %.2f, want within 1%% of 6815", sum.BSLDMean)
	}
	if math.Abs(sum.Utilization-0.685) > 0.005 {
		t.Errorf("utilization %.4f, want 0.685 ± 0.005", sum.Utilization)
	}
	t.Logf("bsld_mean %.2f utilization %.4f wait_mean %.0f s cycles %d", sum.BSLDMean, sum.Utilization, sum.WaitMeanS, sum.Cycles)
}

// TestKTHEASY replays the KTH log under EASY backfilling with requested
// times as estimates. The artifact of the SC'15 paper "Improving backfilling
// by using machine learning to predict running times" records a mean
// bounded slowdown of 92.58 for plain EASY on this file (τ = 10 s, all
// jobs): xce must be within 2% (docs/backfill.md explains the variant).
func TestKTHEASY(t *testing.T) {
	sum := replayAllKTH(t, cluster.PolicyEASY)
	if math.Abs(sum.BSLDMean-92.58)/92.58 > 0.02 {
		t.Errorf("bsld_mean %.2f, want within 2%% of 92.58", sum.BSLDMean)
	}
	// One cycle per event time gives 92.69 (docs/backfill.md); per-event
	// cycles are TestKTHEASYPerEvent.
	if math.Abs(sum.BSLDMean-92.69) > 0.005 {
		t.Errorf("bsld_mean %.4f, want 92.69 (one cycle per event time)", sum.BSLDMean)
	}
	t.Logf("bsld_mean %.2f utilization %.4f", sum.BSLDMean, sum.Utilization)
}

// TestKTHConservative replays the KTH log under conservative backfilling
// with compression, requested times as estimates. On one host of 100
// slots (a plain processor count, as pyss models the machine) pyss, the
// simulator of the SC'15 paper's artifact, gives a mean bounded slowdown
// of 88.997 (τ = 10 s): xce must be within 0.5%. On KTH's own 100
// single-slot hosts, one host class (docs/host-classes.md), a reservation
// is a count of hosts as on one host of 100 slots, never particular
// hosts, so the figure must agree with that one within 0.5% too (issue
// 15; hosts held one by one gave 85.40, docs/backfill.md). On
// both, the cleaned log has no run time above its estimate, so no
// reservation may ever move later, and no job may start after the first
// reservation it got.
func TestKTHConservative(t *testing.T) {
	for _, m := range []struct{ hosts, slots int }{{1, 100}, {100, 1}} {
		t.Run(fmt.Sprintf("%dx%d", m.hosts, m.slots), func(t *testing.T) {
			first := map[*framework.Job]int64{}
			last := map[*framework.Job]int64{}
			moved, late := 0, 0
			observe := func(e *sim.Event) {
				for _, j := range e.Considered {
					switch {
					case j.State == framework.Running:
						if f, ok := first[j]; ok && j.Start > f {
							late++
						}
					case j.Reserved != nil:
						if l, ok := last[j]; ok && j.Reserved.Start > l {
							moved++
						}
						last[j] = j.Reserved.Start
						if _, ok := first[j]; !ok {
							first[j] = j.Reserved.Start
						}
					}
				}
			}
			sum := replayKTHOn(t, nil, sim.Setup{Policy: cluster.PolicyConservative, Clean: true, Hosts: m.hosts, Slots: m.slots}, observe)
			if sum.Jobs != 28481 || sum.Rejected != 0 || sum.Unfinished != 0 {
				t.Fatalf("jobs %d rejected %d unfinished %d; want all 28481", sum.Jobs, sum.Rejected, sum.Unfinished)
			}
			if moved != 0 || late != 0 {
				t.Errorf("%d reservations moved later, %d jobs started after their first reservation; want 0 and 0", moved, late)
			}
			if math.Abs(sum.BSLDMean-88.997)/88.997 > 0.005 {
				t.Errorf("bsld_mean %.3f, want within 0.5%% of pyss's 88.997", sum.BSLDMean)
			}
			t.Logf("bsld_mean %.3f utilization %.4f reservations %d", sum.BSLDMean, sum.Utilization, len(first))
		})
	}
}

// TestKTHEASYPerEvent: with one cycle after every single event
// (submissions before ends within a second), EASY on the KTH log gives
// pyss's figure from the SC'15 artifact, 92.5765, within 0.02%.
func TestKTHEASYPerEvent(t *testing.T) {
	sum := replayKTHOn(t, nil, sim.Setup{Policy: cluster.PolicyEASY, Clean: true, PerEvent: true}, nil)
	if sum.Jobs != 28481 || sum.Rejected != 0 || sum.Unfinished != 0 {
		t.Fatalf("jobs %d rejected %d unfinished %d; want all 28481", sum.Jobs, sum.Rejected, sum.Unfinished)
	}
	if math.Abs(sum.BSLDMean-92.5765)/92.5765 > 0.0002 {
		t.Errorf("bsld_mean %.4f, want within 0.02%% of 92.5765", sum.BSLDMean)
	}
	t.Logf("bsld_mean %.4f cycles %d", sum.BSLDMean, sum.Cycles)
}
