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

// genTrace draws a small cluster and trace for the backfilling properties.
// With exact, every estimate equals the runtime.
func genTrace(t *rapid.T, exact bool) ct.Spec {
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
		est := rt
		if !exact {
			est += int64(rapid.IntRange(0, 20).Draw(t, "slack"))
		}
		spec.Jobs = append(spec.Jobs, ct.Job{ID: cluster.JobID(i + 1), Submit: int64(rapid.IntRange(0, 40).Draw(t, "submit")),
			Min: rapid.IntRange(1, total).Draw(t, "tasks"), ResReq: rapid.SampledFrom(shapes).Draw(t, "resreq"), Runtime: rt, Estimate: est})
	}
	return spec
}

// bruteCheck verifies, at integer times from now on, that the running jobs
// (until their estimated ends) and the pending jobs' reservations never
// need more slots or mem on any host than it has: no reservation is
// over-committed by a job started in the cycle or by another reservation.
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
			end := max(j.Start+j.Spec.Estimate, now+1)
			spans = append(spans, span{now, end, j.Alloc})
			horizon = max(horizon, end)
		case j.State == framework.Pending && j.Reserved != nil:
			spans = append(spans, span{j.Reserved.Start, j.Reserved.End, j.Reserved.Alloc})
			horizon = max(horizon, j.Reserved.End)
		}
	}
	for t := now; t < horizon; t++ {
		slots := make([]int, len(c.Hosts))
		mem := make([]float64, len(c.Hosts))
		for _, sp := range spans {
			if sp.from <= t && t < sp.to {
				for _, h := range sp.a.Hosts {
					slots[h.Host] += h.Slots
					for _, r := range h.Res {
						mem[h.Host] += r.Amount
					}
				}
			}
		}
		for h := range c.Hosts {
			if slots[h] > c.Hosts[h].Slots || mem[h] > c.Hosts[h].Capacity[0]+1e-9 {
				return fmt.Errorf("t=%d host %s: %d slots, %v mem of %d, %v", t, c.Hosts[h].Name, slots[h], mem[h], c.Hosts[h].Slots, c.Hosts[h].Capacity[0])
			}
		}
	}
	return nil
}

// TestPropertyConservative: over random small traces, conservative
// backfilling completes every job that can run, never over-commits, and
// after every cycle the running jobs and all reservations fit together at
// every future second (a job started early never delays a reservation).
// With exact estimates, no job starts later than its first reservation.
func TestPropertyConservative(t *testing.T) {
	for _, exact := range []bool{false, true} {
		t.Run(fmt.Sprintf("exact=%v", exact), func(t *testing.T) {
			rapid.Check(t, func(t *rapid.T) {
				spec := genTrace(t, exact)
				spec.Queues = []cluster.Queue{{Name: "normal", Policy: cluster.PolicyConservative, Picker: "priority"}}
				c := ct.Build(spec)
				s, err := runtime.New(c, runtime.Options{Registry: plugins.NewInTreeRegistry()})
				if err != nil {
					t.Fatal(err)
				}
				first := map[*framework.Job]int64{}
				observe := func(e *sim.Event) {
					if err := s.State.CheckInvariants(); err != nil {
						t.Fatalf("t=%d: %v", e.Now, err)
					}
					if err := bruteCheck(c, s, e.Now); err != nil {
						t.Fatalf("after the cycle at %d: %v", e.Now, err)
					}
					for _, j := range e.Considered {
						if _, seen := first[j]; !seen && j.Reserved != nil {
							first[j] = j.Reserved.Start
						}
					}
				}
				if _, err := sim.Run(context.Background(), s, sim.Options{Until: math.MaxInt64, ZeroRuntimeEnds: true, Observe: observe}); err != nil {
					t.Fatal(err)
				}
				for _, j := range s.Jobs {
					if j.State != framework.Done && j.Reasons.Main != framework.BadRequest {
						t.Fatalf("job %d did not complete: %v %v", j.Spec.ID, j.State, j.Reasons.Main)
					}
					if r, ok := first[j]; ok && exact && j.Start > r {
						t.Fatalf("job %d started at %d, after its first reservation at %d", j.Spec.ID, j.Start, r)
					}
				}
			})
		})
	}
}
