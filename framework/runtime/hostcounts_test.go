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

// TestHostCountsKept: each pending job keeps the host counts of its own
// diagnosis, whatever other jobs are diagnosed after it, in its cycle and
// later ones. h1 (2 slots, 1000 MB) is full with job 1; h2 (4000 MB) is
// closed. Job 2 (any host) pends for slots on h1; job 3 (more than 2000
// MB) finds h1 unfit; job 4 is job 3 again at the next cycle.
func TestHostCountsKept(t *testing.T) {
	spec := ct.Spec{Hosts: []ct.Host{{Name: "h1", Slots: 2, Mem: 1000}, {Name: "h2", Slots: 2, Mem: 4000, Status: cluster.HostClosed}},
		Queues: []cluster.Queue{{Name: "normal", Policy: cluster.PolicyFirstFit}},
		Jobs: []ct.Job{{ID: 1, Min: 2, Runtime: 100}, {ID: 2, Min: 1}, {ID: 3, Min: 1, ResReq: "select[mem>2000]"},
			{ID: 4, Min: 2, Submit: 1, ResReq: "select[mem>2000]"}}}
	s, err := runtime.New(ct.Build(spec), runtime.Options{Registry: plugins.NewInTreeRegistry()})
	if err != nil {
		t.Fatal(err)
	}
	counts := func(j *framework.Job) map[framework.Reason]int {
		m := map[framework.Reason]int{}
		for _, hc := range j.Reasons.Hosts {
			m[hc.Reason] += hc.Hosts
		}
		return m
	}
	want := map[cluster.JobID]map[framework.Reason]int{
		2: {framework.HostNotEnoughSlots: 1, framework.HostClosed: 1},
		3: {framework.HostSelect: 1, framework.HostClosed: 1},
		4: {framework.HostSelect: 1, framework.HostClosed: 1},
	}
	for now := int64(0); now <= 1; now++ {
		if _, err := s.Cycle(context.Background(), now); err != nil {
			t.Fatal(err)
		}
		for _, j := range s.Jobs[1:] {
			if j.Spec.Submit > now {
				continue
			}
			if got, w := counts(j), want[j.Spec.ID]; j.State != framework.Pending || len(got) != len(w) || got[framework.HostClosed] != 1 ||
				got[framework.HostNotEnoughSlots] != w[framework.HostNotEnoughSlots] || got[framework.HostSelect] != w[framework.HostSelect] {
				t.Errorf("t=%d: job %d %v, host counts %v, want %v", now, j.Spec.ID, j.State, j.Reasons.Hosts, w)
			}
		}
	}
}
