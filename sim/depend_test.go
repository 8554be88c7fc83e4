package sim_test

import (
	"context"
	"strings"
	"testing"

	"github.com/xce-sched/xce/cluster"
	"github.com/xce-sched/xce/framework"
	"github.com/xce-sched/xce/framework/plugins"
	"github.com/xce-sched/xce/sim"
	"github.com/xce-sched/xce/workload/swf"
)

// TestSWFDependencies: SWF fields 17 (preceding job) and 18 (think time)
// as a dependency (Setup.Dependencies), on 4 hosts × 1 slot under
// firstfit, worked by hand:
//
//	job 1 t=0 1 proc 10 s: starts 0, ends 10
//	job 2 t=0 1 proc 5 s, after job 1 with 3 s of think time: starts 13
//	  (not at 0, though slots are free; not at 10: the think time), ends 18
//	job 3 t=1 1 proc 4 s, after job 9, which is not in the trace: no
//	  dependency (Unlinked): starts 1
//	job 4 t=20 1 proc 2 s, after job 2, think time 0: submitted after job 2
//	  ended, starts at once, 20
//
// Without the flag, job 2 starts at 0.
func TestSWFDependencies(t *testing.T) {
	j2, j3, j4 := rec(2, 0, 1, 5, 5), rec(3, 1, 1, 4, 4), rec(4, 20, 1, 2, 2)
	j2.PrecedingID, j2.ThinkTime = 1, 3
	j3.PrecedingID, j3.ThinkTime = 9, 0
	j4.PrecedingID, j4.ThinkTime = 2, 0
	w := &sim.Workload{Header: swf.Header{MaxNodes: 4, MaxProcs: 4, UnixStartTime: -1},
		Jobs: []swf.Job{rec(1, 0, 1, 10, 10), j2, j3, j4}}
	for _, tc := range []struct {
		deps   bool
		starts []int64
	}{{true, []int64{0, 13, 1, 20}}, {false, []int64{0, 0, 1, 20}}} {
		prep, err := sim.Prepare(w, sim.Setup{Policy: cluster.PolicyFirstFit, Clean: true, Dependencies: tc.deps})
		if err != nil {
			t.Fatal(err)
		}
		if tc.deps && (prep.Linked != 2 || prep.Unlinked != 1) {
			t.Errorf("linked %d, unlinked %d; want 2 and 1", prep.Linked, prep.Unlinked)
		}
		s, _, sum, err := sim.Replay(context.Background(), prep, plugins.NewInTreeRegistry(), nil)
		if err != nil {
			t.Fatal(err)
		}
		if sum.Jobs != 4 {
			t.Errorf("dependencies %v: %d jobs completed, want 4", tc.deps, sum.Jobs)
		}
		for _, j := range s.Jobs {
			want := tc.starts[j.Spec.ID-1]
			if j.State != framework.Done || j.Start != want {
				t.Errorf("dependencies %v: job %d %v start %d, want DONE from %d", tc.deps, j.Spec.ID, j.State, j.Start, want)
			}
		}
	}
}

// TestSWFThinkTimeHorizon: think times count in the horizon (10^15 s):
// two chained jobs whose think time alone reaches it are refused.
func TestSWFThinkTimeHorizon(t *testing.T) {
	j2 := rec(2, 0, 1, 5, 5)
	j2.PrecedingID, j2.ThinkTime = 1, cluster.MaxTime
	w := &sim.Workload{Header: swf.Header{MaxNodes: 1, MaxProcs: 1, UnixStartTime: -1}, Jobs: []swf.Job{rec(1, 0, 1, 10, 10), j2}}
	if _, err := sim.Prepare(w, sim.Setup{Clean: true, Dependencies: true}); err == nil || !strings.Contains(err.Error(), "job 2 (record 2): the latest submit time plus the runtimes and the think times") {
		t.Errorf("Prepare: %v", err)
	}
	if _, err := sim.Prepare(w, sim.Setup{Clean: true}); err != nil {
		t.Errorf("without --dependencies the think time is not used: %v", err)
	}
}
