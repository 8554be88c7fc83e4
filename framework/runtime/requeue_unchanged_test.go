package runtime_test

import (
	"context"
	"testing"

	"github.com/xce-sched/xce/cluster"
	"github.com/xce-sched/xce/framework"
	"github.com/xce-sched/xce/framework/plugins"
	"github.com/xce-sched/xce/framework/runtime"
	ct "github.com/xce-sched/xce/internal/clustertest"
)

// TestRequeueOnPlanConservative (found by TestPropertyStandingLive; a bug
// of Requeue, not of the skipping: the oracle decided the same): one host
// of one slot under conservative. Job 1 (10 s estimated) starts at 0 in
// cycle 1 and is requeued at 10, its estimated end, so nothing is off
// plan. Requeue used to leave job.Cycle at 1, the cycle that started it:
// the cycle at 10 (cycle 2) found the job "considered" in the previous
// cycle and Unchanged, conservative skipped it, and it pended with no
// reason on an idle host, for good. A requeued job now starts afresh
// (Cycle 0): it runs again in the cycle at 10.
func TestRequeueOnPlanConservative(t *testing.T) {
	spec := ct.Spec{Hosts: []ct.Host{{Name: "h1", Slots: 1, Mem: -1}},
		Queues: []cluster.Queue{{Name: "normal", Policy: cluster.PolicyConservative}},
		Jobs:   []ct.Job{{ID: 1, Min: 1, Runtime: 10, Estimate: 10}}}
	for _, oracle := range []bool{false, true} {
		s, err := runtime.New(ct.Build(spec), runtime.Options{Registry: plugins.NewInTreeRegistry()})
		if err != nil {
			t.Fatal(err)
		}
		if oracle {
			runtime.ConsiderEveryJob(s)
		}
		j := s.Jobs[0]
		if _, err := s.Cycle(context.Background(), 0); err != nil {
			t.Fatal(err)
		}
		if j.State != framework.Running {
			t.Fatalf("job 1 %v at 0, want running", j.State)
		}
		s.Requeue(j, 10)
		for now := int64(10); now <= 12; now++ {
			considered, err := s.Cycle(context.Background(), now)
			if err != nil {
				t.Fatal(err)
			}
			if j.State != framework.Running {
				t.Errorf("oracle %v: at %d the requeued job 1 %v (%v, unchanged %v, considered %d jobs) on an idle host",
					oracle, now, j.State, j.Reasons.Main, j.Unchanged, len(considered))
			}
		}
	}
}

// TestUnchangedHeldBehindAdmitted (found by TestPropertyStandingLive; a
// bug of Hold, not of the skipping, which a gated job turns off): the
// live core (internal/live, Core.Cycle) records nothing for a considered
// pending job with Unchanged set, whose "decision, reasons and
// reservation stand". One host of 2 slots under strict FCFS; job 1 (1
// task) starts at 0 while job 2 (2 tasks, started(1)) waits on its
// dependency, and job 3 (2 tasks) pends with NotEnoughSlots. At 1 nothing
// was released: job 3 is Unchanged. The gate now admits job 2, which
// pends and blocks, and fcfs holds job 3 behind it: its reason becomes
// Priority, and Hold now clears Unchanged, so the change is recorded
// (before, the live state kept NotEnoughSlots).
func TestUnchangedHeldBehindAdmitted(t *testing.T) {
	spec := ct.Spec{Hosts: []ct.Host{{Name: "h1", Slots: 2, Mem: -1}},
		Queues: []cluster.Queue{{Name: "normal", Policy: cluster.PolicyFCFS}},
		Jobs: []ct.Job{{ID: 1, Min: 1, Runtime: 10, Estimate: 10}, {ID: 2, Min: 2, Runtime: 10, Estimate: 10, Depend: "started(1)"},
			{ID: 3, Min: 2, Runtime: 10, Estimate: 10}}}
	for _, oracle := range []bool{false, true} {
		s, err := runtime.New(ct.Build(spec), runtime.Options{Registry: plugins.NewInTreeRegistry()})
		if err != nil {
			t.Fatal(err)
		}
		if oracle {
			runtime.ConsiderEveryJob(s)
		}
		j3 := s.Jobs[2]
		var last framework.Reason
		for now := int64(0); now <= 2; now++ {
			if _, err := s.Cycle(context.Background(), now); err != nil {
				t.Fatal(err)
			}
			if j3.State != framework.Pending {
				t.Fatalf("oracle %v: job 3 %v at %d", oracle, j3.State, now)
			}
			if j3.Unchanged && j3.Reasons.Main != last {
				t.Errorf("oracle %v: at %d job 3 is Unchanged but pends with %v, %v the cycle before (job 2: %v)",
					oracle, now, j3.Reasons.Main, last, s.Jobs[1].Reasons.Main)
			}
			last = j3.Reasons.Main
		}
	}
}
