package runtime_test

import (
	"context"
	"math"
	"testing"

	"github.com/xce-sched/xce/cluster"
	"github.com/xce-sched/xce/framework"
	"github.com/xce-sched/xce/framework/plugins"
	"github.com/xce-sched/xce/framework/runtime"
	ct "github.com/xce-sched/xce/internal/clustertest"
	"github.com/xce-sched/xce/sim"
)

// TestMaxJobTest, worked by hand: one host of 2 slots, exact estimates.
// Job 1 (1 task, 10 s), jobs 2 and 3 (2 tasks, 10 s) and job 4 (1 task,
// 5 s) are submitted at 0. Planning every job, job 1 starts at 0, job 2 is
// reserved at 10 and job 3 at 20, and job 4 fits beside job 1 until job
// 2's reservation: it starts at 0. With max_job_test 2 (conservative, or
// Slurm's backfill) the cycle at 0 plans the first two jobs that pend:
// job 1 starts and counts for nothing, jobs 2 and 3 are reserved at 10
// and 20, and job 4 pends with Priority, a note saying why, and no
// reservation. At 10 job 2 starts, and job 4, now second of those that
// pend, is reserved at 30 (though nothing ended early: it was deferred),
// pending for want of slots, where it starts.
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
				// Job 3 is reserved at 20 throughout, and pends for want of
				// slots. Job 4 is deferred at 0 (Priority, with a note
				// saying why), reserved at 30 from 10 on (job 2 holds both
				// slots then).
				want4, why4, note4 := int64(-1), framework.Priority, "not planned yet: the queue plans only its first 2 pending jobs (max_job_test)"
				if now == 10 {
					want4, why4, note4 = 30, framework.NotEnoughSlots, ""
				}
				if reserved(j3) != 20 || j3.Reasons.Main != framework.NotEnoughSlots || j3.Reasons.Note != "" ||
					reserved(j4) != want4 || j4.Reasons.Main != why4 || j4.Reasons.Note != note4 {
					t.Fatalf("%s, max_job_test %d, at %d: job 3 %v %q reserved at %d, job 4 %v %q reserved at %d; want NotEnoughSlots at 20, %v %q at %d",
						policy, c.maxJobTest, now, j3.Reasons.Main, j3.Reasons.Note, reserved(j3), j4.Reasons.Main, j4.Reasons.Note, reserved(j4), why4, note4, want4)
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

// TestMaxJobTestProgress, worked by hand (max_job_test 1 or 2, exact
// estimates), through the simulator's loop:
//
//   - Jobs that can never run do not hold the queue: on one host of 4
//     slots, job 1 asks 100 tasks and job 2 a host type nobody has. They
//     count for nothing, as jobs that start: jobs 3 and 4 (1 task, 10 s)
//     are planned at 0, and start then.
//   - A job deferred behind one that a dependency releases holds nothing:
//     job 1 (4 tasks, 100 s) starts at 0, and job 3 (4 tasks, 10 s) is
//     reserved at 100. At 100 job 1 ends and job 2 (1 task, 10 s,
//     done(1)) is released ahead of job 3, which is deferred: its
//     reservation must not keep job 2 from starting then. Job 2 starts
//     and counts for nothing, so job 3 is planned again in the same
//     cycle, at 110, where it starts.
func TestMaxJobTestProgress(t *testing.T) {
	for _, c := range []struct {
		name   string
		depth  int
		jobs   []ct.Job
		starts map[cluster.JobID]int64
	}{
		{"never runnable ahead", 2, []ct.Job{{ID: 1, Min: 100, Runtime: 10, Estimate: 10},
			{ID: 2, Min: 1, ResReq: "select[type==NOPE]", Runtime: 10, Estimate: 10},
			{ID: 3, Min: 1, Runtime: 10, Estimate: 10}, {ID: 4, Min: 1, Runtime: 10, Estimate: 10}},
			map[cluster.JobID]int64{3: 0, 4: 0}},
		{"released ahead", 1, []ct.Job{{ID: 1, Min: 4, Runtime: 100, Estimate: 100},
			{ID: 2, Min: 1, Depend: "done(1)", Runtime: 10, Estimate: 10}, {ID: 3, Min: 4, Runtime: 10, Estimate: 10}},
			map[cluster.JobID]int64{1: 0, 2: 100, 3: 110}},
	} {
		for _, policy := range []cluster.Policy{cluster.PolicyConservative, "backfill"} {
			spec := ct.Spec{Hosts: []ct.Host{{Name: "h0", Slots: 4, Mem: -1, Type: "X86"}},
				Queues: []cluster.Queue{{Name: "normal", Policy: policy, MaxJobTest: c.depth}}, Jobs: c.jobs}
			s, err := runtime.New(ct.Build(spec), runtime.Options{Registry: plugins.NewInTreeRegistry()})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := sim.Run(context.Background(), s, sim.Options{Until: math.MaxInt64}); err != nil {
				t.Fatal(err)
			}
			for _, j := range s.Jobs {
				want, ok := c.starts[j.Spec.ID]
				if ok && (j.State != framework.Done || j.Start != want) {
					t.Errorf("%s, %s: job %d %v started at %d, want done, started at %d", c.name, policy, j.Spec.ID, j.State, j.Start, want)
				}
			}
		}
	}
}

// TestMaxJobTestPreemption, worked by hand: queue high (conservative,
// max_job_test 1) may preempt queue low, whose job 1 runs on all 4 slots
// of the one host. Jobs 2 to 5 of high (1 task each) pend at 0: only job
// 2 is planned, and only it preempts (job 1 is suspended); jobs 3 to 5 are
// deferred, and a deferred job neither starts nor preempts.
func TestMaxJobTestPreemption(t *testing.T) {
	spec := ct.Spec{Hosts: []ct.Host{{Name: "h0", Slots: 4, Mem: -1}},
		Queues: []cluster.Queue{
			{Name: "high", Priority: 10, Policy: cluster.PolicyConservative, MaxJobTest: 1, Preemptive: []cluster.QueueID{1}},
			{Name: "low", Priority: 1, Policy: cluster.PolicyFCFS}},
		Jobs: []ct.Job{{ID: 1, Queue: "low", Min: 4, Running: map[string]int{"h0": 4}, Runtime: 100, Estimate: 100},
			{ID: 2, Queue: "high", Min: 1, Runtime: 50, Estimate: 50}, {ID: 3, Queue: "high", Min: 1, Runtime: 50, Estimate: 50},
			{ID: 4, Queue: "high", Min: 1, Runtime: 50, Estimate: 50}, {ID: 5, Queue: "high", Min: 1, Runtime: 50, Estimate: 50}}}
	s, err := runtime.New(ct.Build(spec), runtime.Options{Registry: plugins.NewInTreeRegistry()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Cycle(context.Background(), 0); err != nil {
		t.Fatal(err)
	}
	want := []framework.JobState{framework.Suspended, framework.Running, framework.Pending, framework.Pending, framework.Pending}
	for i, j := range s.Jobs {
		if j.State != want[i] || i >= 2 && !j.Deferred {
			t.Errorf("job %d: %v (deferred %v), want %v", j.Spec.ID, j.State, j.Deferred, want[i])
		}
	}
}
