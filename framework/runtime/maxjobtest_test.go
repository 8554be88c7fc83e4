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

// TestMaxJobTest, worked by hand: one host of 2 slots, exact estimates.
// Job 1 (1 task, 10 s), jobs 2 and 3 (2 tasks, 10 s) and job 4 (1 task,
// 5 s) are submitted at 0. Planning every job, job 1 starts at 0, job 2 is
// reserved at 10 and job 3 at 20, and job 4 fits beside job 1 until job
// 2's reservation: it starts at 0. With max_job_test 2 (conservative, or
// Slurm's backfill) the cycle at 0 plans jobs 1 and 2 only: jobs 3 and 4
// pend with Priority, a note saying why, and no reservation. At 10 job 2
// starts and job 3, now second, is reserved at 20 (though nothing ended
// early: it was deferred), pending for want of slots; job 4 is deferred
// again. At 20 job 3 starts and job 4 is reserved at 30, where it starts.
func TestMaxJobTest(t *testing.T) {
	for _, policy := range []cluster.Policy{cluster.PolicyConservative, "backfill"} {
		for _, c := range []struct {
			maxJobTest int
			starts     [4]int64
		}{{0, [4]int64{0, 10, 20, 0}}, {2, [4]int64{0, 10, 20, 30}}} {
			spec := ct.Spec{Hosts: []ct.Host{{Name: "h0", Slots: 2, Mem: -1}},
				Queues: []cluster.Queue{{Name: "normal", Policy: policy, MaxJobTest: c.maxJobTest}},
				Jobs: []ct.Job{{ID: 1, Min: 1, Runtime: 10, Estimate: 10}, {ID: 2, Min: 2, Runtime: 10, Estimate: 10},
					{ID: 3, Min: 2, Runtime: 10, Estimate: 10}, {ID: 4, Min: 1, Runtime: 5, Estimate: 5}}}
			s, err := runtime.New(ct.Build(spec), runtime.Options{Registry: plugins.NewInTreeRegistry()})
			if err != nil {
				t.Fatal(err)
			}
			reserved := func(j *framework.Job) int64 {
				if j.Reserved == nil {
					return -1
				}
				return j.Reserved.Start
			}
			for now := int64(0); now <= 40; now++ {
				for _, j := range s.Jobs {
					if j.State == framework.Running && j.Start+j.Spec.Runtime <= now {
						s.Finish(j, now)
					}
				}
				if _, err := s.Cycle(context.Background(), now); err != nil {
					t.Fatal(err)
				}
				if c.maxJobTest == 0 || now != 0 && now != 10 {
					continue
				}
				j3, j4 := s.Jobs[2], s.Jobs[3]
				// At 0 job 3 is deferred; at 10 it is reserved, and pends
				// for want of slots (job 2 holds both).
				want3, why3 := int64(-1), framework.Priority
				if now == 10 {
					want3, why3 = 20, framework.NotEnoughSlots
				}
				// A deferred job's Priority says why; one planned has no note.
				note3 := now == 0
				if reserved(j3) != want3 || j3.Reasons.Main != why3 || reserved(j4) != -1 || j4.Reasons.Main != framework.Priority ||
					(j3.Reasons.Note != "") != note3 || j4.Reasons.Note != "not planned yet: the queue plans only its first 2 pending jobs (max_job_test)" {
					t.Fatalf("%s, max_job_test %d, at %d: job 3 %v %q reserved at %d, job 4 %v %q reserved at %d; want %v at %d (a note: %v), Priority with its note, none",
						policy, c.maxJobTest, now, j3.Reasons.Main, j3.Reasons.Note, reserved(j3), j4.Reasons.Main, j4.Reasons.Note, reserved(j4), why3, want3, note3)
				}
			}
			for i, j := range s.Jobs {
				if j.State != framework.Done || j.Start != c.starts[i] {
					t.Errorf("%s, max_job_test %d: job %d %v started at %d, want done, started at %d", policy, c.maxJobTest, i+1, j.State, j.Start, c.starts[i])
				}
			}
		}
	}
}
