package runtime_test

import (
	"context"
	"fmt"
	"math"
	"testing"

	"pgregory.net/rapid"

	"github.com/xce-sched/xce/cluster"
	"github.com/xce-sched/xce/framework"
	"github.com/xce-sched/xce/framework/plugins"
	"github.com/xce-sched/xce/framework/runtime"
	ct "github.com/xce-sched/xce/internal/clustertest"
	"github.com/xce-sched/xce/sim"
)

// Estimate kinds for genTrace.
const (
	estExact = iota // every estimate equals the runtime
	estAny          // too long, exact or too short (the job overruns it)
)

// genTrace draws a small cluster and trace for the backfilling properties.
func genTrace(t *rapid.T, est int) ct.Spec {
	spec := ct.Spec{}
	total := 0
	for i := range rapid.IntRange(1, 3).Draw(t, "hosts") {
		n := rapid.IntRange(1, 4).Draw(t, "slots")
		total += n
		spec.Hosts = append(spec.Hosts, ct.Host{Name: fmt.Sprintf("h%d", i), Slots: n, Mem: float64(rapid.IntRange(2, 8).Draw(t, "mem"))})
	}
	shapes := []string{"", "", "span[hosts=1]", "rusage[mem=1]", "rusage[mem=2] span[ptile=2]"}
	for i := range rapid.IntRange(1, 12).Draw(t, "jobs") {
		rt := int64(rapid.IntRange(1, 30).Draw(t, "runtime"))
		e := rt
		if est == estAny {
			switch rapid.IntRange(0, 2).Draw(t, "estimate kind") {
			case 0:
				e += int64(rapid.IntRange(1, 20).Draw(t, "slack"))
			case 1:
				e = int64(rapid.IntRange(1, int(rt)).Draw(t, "under"))
			}
		}
		spec.Jobs = append(spec.Jobs, ct.Job{ID: cluster.JobID(i + 1), Submit: int64(rapid.IntRange(0, 40).Draw(t, "submit")),
			Min: rapid.IntRange(1, total).Draw(t, "tasks"), ResReq: rapid.SampledFrom(shapes).Draw(t, "resreq"), Runtime: rt, Estimate: e})
	}
	return spec
}

// bruteCheck verifies, at integer times from now on, that the running jobs
// (until their estimated ends) and the pending jobs' reservations never
// need more slots or more of any consumable (mem, GPUs) on any host than
// it has: no reservation is over-committed by a job started in the cycle
// or by another reservation.
// It is written independently of the projection code: a plain time-stepped
// tally.
func bruteCheck(c *cluster.Cluster, s *runtime.Scheduler, now int64) error {
	type span struct {
		from, to int64
		a        *cluster.JobAlloc
	}
	var spans []span
	horizon := now + 1
	for _, j := range s.Jobs {
		switch {
		case j.State == framework.Running:
			end := max(j.Start+j.SuspendedFor+j.Spec.Estimate, now+1)
			spans = append(spans, span{now, end, j.Alloc})
			horizon = max(horizon, end)
		case j.State == framework.Suspended && j.Held != nil:
			// What it keeps, until it resumes: at least until the
			// horizon.
			spans = append(spans, span{now, math.MaxInt64, j.Held})
		case j.State == framework.Pending && j.Reserved != nil:
			spans = append(spans, span{j.Reserved.Start, j.Reserved.End, j.Reserved.Alloc})
			horizon = max(horizon, j.Reserved.End)
		}
	}
	for t := now; t < horizon; t++ {
		nres := len(c.Resources)
		slots := make([]int, len(c.Hosts))
		used := make([]float64, len(c.Hosts)*nres)
		for _, sp := range spans {
			if sp.from <= t && t < sp.to {
				for _, h := range sp.a.Hosts {
					slots[h.Host] += h.Slots
					for _, r := range h.Res {
						used[int(h.Host)*nres+int(r.Res)] += r.Amount
					}
				}
			}
		}
		for h := range c.Hosts {
			if slots[h] > c.Hosts[h].Slots {
				return fmt.Errorf("t=%d host %s: %d slots of %d", t, c.Hosts[h].Name, slots[h], c.Hosts[h].Slots)
			}
			for r, name := range c.Resources {
				if u, capacity := used[h*nres+r], c.Hosts[h].Capacity[r]; u > capacity+1e-9 {
					return fmt.Errorf("t=%d host %s: %v %s of %v", t, c.Hosts[h].Name, u, name, capacity)
				}
			}
		}
	}
	return nil
}

// overrunMeets reports whether some job overran its estimate during
// [from, to) by the cycle at now: it ran past start + estimate, until its
// end or, still running, until now + 1 (where projections assume it ends).
func overrunMeets(s *runtime.Scheduler, now, from, to int64) bool {
	for _, j := range s.Jobs {
		if j.State == framework.Pending {
			continue
		}
		due := j.Start + j.Spec.Estimate
		until := now + 1
		if j.State == framework.Done {
			until = j.End
		}
		if due < until && due < to && from < until {
			return true
		}
	}
	return false
}

// TestPropertyConservative: over random small traces, conservative
// backfilling completes every job that can run, never over-commits, and
// after every cycle the running jobs and all reservations fit together at
// every future second. Compression (Mu'alem & Feitelson 2001): with any
// estimates, a waiting job's reservation never moves later, and no job
// starts after its latest reservation, unless that reservation overlapped
// a running job's overrun of its estimate. With exact estimates no job
// starts after its first reservation. Half of the traces add a queue of
// lower priority under any policy, which must not disturb the first.
func TestPropertyConservative(t *testing.T) {
	for _, est := range []int{estExact, estAny} {
		t.Run(fmt.Sprintf("estimates=%d", est), func(t *testing.T) {
			checkRounds(t, propertyRounds, func(t *rapid.T) {
				spec := genTrace(t, est)
				spec.Queues = []cluster.Queue{{Name: "normal", Priority: 1, Policy: cluster.PolicyConservative, Picker: "priority"}}
				if rapid.Bool().Draw(t, "second queue") {
					// A queue of lower priority, under any policy, must
					// not disturb the first queue's reservations.
					all := []cluster.Policy{cluster.PolicyFCFS, cluster.PolicyFirstFit, cluster.PolicyEASY, cluster.PolicyConservative}
					spec.Queues = append(spec.Queues, cluster.Queue{Name: "low", Policy: rapid.SampledFrom(all).Draw(t, "low policy"), Picker: "priority"})
					for i := range spec.Jobs {
						spec.Jobs[i].Queue = rapid.SampledFrom([]string{"normal", "low"}).Draw(t, "queue")
					}
				}
				c := ct.Build(spec)
				s, err := runtime.New(c, runtime.Options{Registry: plugins.NewInTreeRegistry()})
				if err != nil {
					t.Fatal(err)
				}
				first := map[*framework.Job]int64{}
				last := map[*framework.Job]framework.Reservation{}
				observe := func(e *sim.Event) {
					if err := s.State.CheckInvariants(); err != nil {
						t.Fatalf("t=%d: %v", e.Now, err)
					}
					if err := bruteCheck(c, s, e.Now); err != nil {
						t.Fatalf("after the cycle at %d: %v", e.Now, err)
					}
					for _, j := range e.Considered {
						if j.Spec.Queue != 0 {
							continue // the guarantee is the first queue's
						}
						prev, had := last[j]
						delete(last, j)
						switch {
						case j.State == framework.Running:
							if had && j.Start > prev.Start && !overrunMeets(s, e.Now, prev.Start, prev.End) {
								t.Fatalf("t=%d: job %d started after its reservation at %d", e.Now, j.Spec.ID, prev.Start)
							}
						case j.Reserved != nil:
							if had && j.Reserved.Start > prev.Start && !overrunMeets(s, e.Now, prev.Start, prev.End) {
								t.Fatalf("t=%d: job %d's reservation moved later, %d to %d", e.Now, j.Spec.ID, prev.Start, j.Reserved.Start)
							}
							last[j] = *j.Reserved
							if _, seen := first[j]; !seen {
								first[j] = j.Reserved.Start
							}
						case had && !overrunMeets(s, e.Now, prev.Start, prev.End):
							t.Fatalf("t=%d: job %d lost its reservation at %d (%v)", e.Now, j.Spec.ID, prev.Start, j.Reasons.Main)
						}
					}
				}
				if _, err := sim.Run(context.Background(), s, sim.Options{Until: math.MaxInt64, ZeroRuntimeEnds: true, Observe: observe}); err != nil {
					t.Fatal(err)
				}
				for _, j := range s.Jobs {
					if j.State != framework.Done && j.Reasons.Main != framework.BadRequest && !j.Reasons.Stuck {
						t.Fatalf("job %d did not complete: %v %v", j.Spec.ID, j.State, j.Reasons.Main)
					}
					if r, ok := first[j]; ok && est == estExact && j.Start > r {
						t.Fatalf("job %d started at %d, after its first reservation at %d", j.Spec.ID, j.Start, r)
					}
				}
			})
		})
	}
}

// propertyRounds is how many rapid runs (of -rapid.checks cases each, 100
// by default) the scheduling properties make at least: 2,000 cases per
// property in a plain test run. RAPID_CHECKS=5000 makes it 100,000.
const propertyRounds = 20

// checkRounds runs prop in rounds rapid runs, each from its own random
// seed.
func checkRounds(t *testing.T, rounds int, prop func(*rapid.T)) {
	for i := range rounds {
		t.Run(fmt.Sprint(i), func(t *testing.T) { rapid.Check(t, prop) })
	}
}
