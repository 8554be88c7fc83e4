package sim_test

import (
	"context"
	"math"
	"testing"

	"github.com/xce-sched/xce/cluster"
	"github.com/xce-sched/xce/framework/plugins"
	"github.com/xce-sched/xce/sim"
	"github.com/xce-sched/xce/workload/swf"
)

func rec(id, submit, procs, run, req int64) swf.Job {
	return swf.Job{ID: id, Submit: submit, Wait: -1, Run: run, AllocProcs: procs, AvgCPU: -1, UsedMem: -1, ReqProcs: procs,
		ReqTime: req, ReqMem: -1, Status: 1, User: 1, Group: -1, Executable: -1, Queue: -1, Partition: -1, PrecedingID: -1, ThinkTime: -1}
}

// TestSimulateFCFS: 2 hosts × 1 slot, strict FCFS. Worked by hand:
//
//	job 1 t=0  2 procs 100 s: starts 0, ends 100
//	job 4 t=5  3 procs: larger than the cluster, rejected (does not hold the queue)
//	job 2 t=10 1 proc  50 s: waits behind job 1; starts 100, ends 150
//	job 3 t=20 1 proc   5 s: waits behind job 2 (fcfs); starts 100, ends 105
//
// waits 0, 90, 80 (mean 56.67, median 80, p95 90); responses 100, 140, 85
// (mean 108.33); bounded slowdowns 1, 140/50 = 2.8, 85/10 = 8.5 (mean 4.1);
// makespan 150; utilization (2·100 + 50 + 5) / (2 · 150) = 0.85; cycles at
// the 7 event times 0, 5, 10, 20, 100, 105, 150. Pending
// time: job 2 NotEnoughSlots 90 s; job 3 Priority 80 s; job 4, rejected,
// is left out (no BadRequest time).
func TestSimulateFCFS(t *testing.T) {
	w := &sim.Workload{Header: swf.Header{MaxNodes: 2, MaxProcs: 2, UnixStartTime: -1},
		Jobs: []swf.Job{rec(1, 0, 2, 100, 200), rec(4, 5, 3, 10, 10), rec(2, 10, 1, 50, 60), rec(3, 20, 1, 5, 60)}}
	prep, err := sim.Prepare(w, sim.Setup{Policy: cluster.PolicyFCFS, Clean: true})
	if err != nil {
		t.Fatal(err)
	}
	_, _, got, err := sim.Replay(context.Background(), prep, plugins.NewInTreeRegistry(), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := sim.Summary{Jobs: 3, Rejected: 1, Cycles: 7, MakespanS: 150, Utilization: 0.85,
		WaitMeanS: 170.0 / 3, WaitMedianS: 80, WaitP95S: 90, ResponseMeanS: 325.0 / 3,
		SlowdownMean: (1 + 2.8 + 17) / 3, BSLDMean: 4.1,
		PendingByReasonS: map[string]float64{"NotEnoughSlots": 90, "Priority": 80}}
	approx := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
	if got.Jobs != want.Jobs || got.Rejected != want.Rejected || got.Unfinished != 0 || got.MakespanS != want.MakespanS ||
		!approx(got.Utilization, want.Utilization) || !approx(got.WaitMeanS, want.WaitMeanS) || got.WaitMedianS != want.WaitMedianS ||
		got.WaitP95S != want.WaitP95S || !approx(got.ResponseMeanS, want.ResponseMeanS) || !approx(got.BSLDMean, want.BSLDMean) ||
		!approx(got.SlowdownMean, want.SlowdownMean) || got.Cycles != want.Cycles {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
	if len(got.PendingByReasonS) != len(want.PendingByReasonS) {
		t.Errorf("pending reasons %v, want %v", got.PendingByReasonS, want.PendingByReasonS)
	}
	for k, v := range want.PendingByReasonS {
		if !approx(got.PendingByReasonS[k], v) {
			t.Errorf("pending %s: got %v, want %v", k, got.PendingByReasonS[k], v)
		}
	}
}
