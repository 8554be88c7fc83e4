package runtime_test

import (
	"context"
	"slices"
	"testing"

	"github.com/xce-sched/xce/cluster"
	"github.com/xce-sched/xce/framework"
	"github.com/xce-sched/xce/framework/plugins"
	"github.com/xce-sched/xce/framework/runtime"
	ct "github.com/xce-sched/xce/internal/clustertest"
)

// TestReleaseSkipsTooLarge (issue 15, runtime.Options.SkipTooLarge),
// worked by hand: one host of 4
// slots. Jobs 1 (2 tasks, 10 s) and 2 (2 tasks, 20 s) start at 0. Job 3
// (1 task, 5 s, submitted at 1), job 4 (4 tasks, 10 s, at 2) and job 5 (1
// task, 100 s, at 3) pend for want of slots (none is free). At 10 job 1
// ends: 2 slots are free. Job 3 starts (1 left).
//
// Under firstfit job 4 (4 tasks, more than the 2 free) is left out of the
// cycle and keeps NotEnoughSlots (Standing: 1 NotEnoughSlots); job 5
// starts on the last slot.
//
// Under EASY the first job that cannot start gets the reservation, so job
// 4, too large as it is, is kept in: it becomes the head, reserved at 20
// (job 2 ends, and job 3 at 15), and job 5, which would hold a slot past
// 20, pends with Priority. Left out, job 4 would have let job 5 start.
func TestReleaseSkipsTooLarge(t *testing.T) {
	for _, tc := range []struct {
		policy     cluster.Policy
		considered []cluster.JobID // at 10
		standing   []runtime.ReasonCount
		running    []cluster.JobID // after the cycle at 10
		reason5    framework.Reason
	}{
		{cluster.PolicyFirstFit, []cluster.JobID{3, 5}, []runtime.ReasonCount{{Reason: framework.NotEnoughSlots, Jobs: 1}}, []cluster.JobID{2, 3, 5}, 0},
		{cluster.PolicyEASY, []cluster.JobID{3, 4, 5}, nil, []cluster.JobID{2, 3}, framework.Priority},
	} {
		t.Run(string(tc.policy), func(t *testing.T) {
			spec := ct.Spec{Hosts: []ct.Host{{Name: "h1", Slots: 4, Mem: -1}},
				Queues: []cluster.Queue{{Name: "normal", Policy: tc.policy}},
				Jobs: []ct.Job{{ID: 1, Min: 2, Runtime: 10}, {ID: 2, Min: 2, Runtime: 20}, {ID: 3, Min: 1, Submit: 1, Runtime: 5},
					{ID: 4, Min: 4, Submit: 2, Runtime: 10}, {ID: 5, Min: 1, Submit: 3, Runtime: 100}}}
			s, err := runtime.New(ct.Build(spec), runtime.Options{Registry: plugins.NewInTreeRegistry(), SkipTooLarge: true})
			if err != nil {
				t.Fatal(err)
			}
			for _, now := range []int64{0, 1, 2, 3} {
				if _, err := s.Cycle(context.Background(), now); err != nil {
					t.Fatal(err)
				}
			}
			s.Finish(s.Jobs[0], 10)
			got, err := s.Cycle(context.Background(), 10)
			if err != nil {
				t.Fatal(err)
			}
			var ids, running []cluster.JobID
			for _, j := range got {
				ids = append(ids, j.Spec.ID)
			}
			for _, j := range s.Jobs {
				if j.State == framework.Running {
					running = append(running, j.Spec.ID)
				}
			}
			if !slices.Equal(ids, tc.considered) || !slices.Equal(s.Standing(), tc.standing) || !slices.Equal(running, tc.running) {
				t.Errorf("at 10: considered %v, standing %v, running %v; want %v, %v, %v", ids, s.Standing(), running, tc.considered, tc.standing, tc.running)
			}
			if r := s.Jobs[3].Reasons.Main; r != framework.NotEnoughSlots {
				t.Errorf("job 4 pends with %v, want NotEnoughSlots", r)
			}
			if tc.policy == cluster.PolicyEASY {
				if r := s.Jobs[3].Reserved; r == nil || r.Start != 20 {
					t.Errorf("job 4 reserved %+v, want from 20", r)
				}
				if r := s.Jobs[4].Reasons.Main; r != tc.reason5 {
					t.Errorf("job 5 pends with %v, want %v", r, tc.reason5)
				}
			}
		})
	}
}
