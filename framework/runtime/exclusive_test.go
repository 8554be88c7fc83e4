package runtime_test

import (
	"testing"

	"github.com/xce-sched/xce/cluster"
	"github.com/xce-sched/xce/framework"
	ct "github.com/xce-sched/xce/internal/clustertest"
)

// TestExclusive, worked by hand on hosts h1 and h2 of 2 slots, a firstfit
// queue that takes exclusive jobs, every job one task:
//   - at 0: job 1 (10 s) on h1; job 2, exclusive (5 s), not on h1 (busy)
//     but on h2 (idle), which it fills; job 3 (10 s) beside job 1 on h1;
//     job 4 (20 s) pends: h1 is full, h2 runs an exclusive job
//     (ExclusiveHost: one host each way, the more specific reason wins);
//     job 5, exclusive (3 s), pends too: neither host is idle.
//   - at 5 job 2 ends: job 4 starts on h2 (5-25).
//   - at 10 jobs 1 and 3 end: h1 is idle, job 5 starts there (10-13).
func TestExclusive(t *testing.T) {
	spec := ct.Spec{Hosts: []ct.Host{{Name: "h1", Slots: 2, Mem: -1}, {Name: "h2", Slots: 2, Mem: -1}}, Jobs: []ct.Job{
		{ID: 1, Runtime: 10, Estimate: 10},
		{ID: 2, Runtime: 5, Estimate: 5, Exclusive: true},
		{ID: 3, Runtime: 10, Estimate: 10},
		{ID: 4, Runtime: 20, Estimate: 20},
		{ID: 5, Runtime: 3, Estimate: 3, Exclusive: true},
	}}
	spec.Queues = []cluster.Queue{{Name: "normal", Policy: cluster.PolicyFirstFit, Picker: "priority", Exclusive: true}}
	c, s := runQueues(t, spec, 0)
	for i, want := range []string{"RUN@0 h1*1", "RUN@0 h2*1", "RUN@0 h1*1", "PEND ExclusiveHost", "PEND ExclusiveHost"} {
		if got := state(c, s.Jobs[i]); got != want {
			t.Errorf("t=0 job %d: %s, want %s", i+1, got, want)
		}
	}
	for _, hc := range s.Jobs[3].Reasons.Hosts {
		if want := map[framework.Reason]int{framework.HostNotEnoughSlots: 1, framework.HostExclusive: 1}[hc.Reason]; hc.Hosts != want {
			t.Errorf("job 4's host reasons %+v", s.Jobs[3].Reasons.Hosts)
		}
	}
	c, s = runQueues(t, spec, 100)
	for i, want := range []string{"DONE@0-10", "DONE@0-5", "DONE@0-10", "DONE@5-25", "DONE@10-13"} {
		if got := state(c, s.Jobs[i]); got != want {
			t.Errorf("job %d: %s, want %s", i+1, got, want)
		}
	}
}
