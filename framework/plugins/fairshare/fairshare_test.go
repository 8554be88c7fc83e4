package fairshare_test

import (
	"context"
	"math"
	"testing"

	"github.com/xce-sched/xce/cluster"
	"github.com/xce-sched/xce/framework"
	"github.com/xce-sched/xce/framework/plugins"
	"github.com/xce-sched/xce/framework/plugins/fairshare"
	"github.com/xce-sched/xce/framework/runtime"
	ct "github.com/xce-sched/xce/internal/clustertest"
)

func fairQueue(shares ...cluster.UserShare) cluster.Queue {
	return cluster.Queue{Name: "fs", Policy: cluster.PolicyFirstFit, Picker: fairshare.Name, Shares: shares, HalfLife: 3600}
}

// TestPriority pins the dynamic priority formula on hand-computed values:
// shares 3, a 2-slot job running from t=0: at t=3600 it has used 2
// slot-hours, so 3 / (2×0.7 + (1+2)×3) = 3/10.4. It ends then; its 2
// slot-hours decay with a half-life of 3600 s to 1 at t=7200, with no slot
// in use: 3 / (1×0.7 + 1×3) = 3/3.7.
func TestPriority(t *testing.T) {
	c := ct.Build(ct.Spec{Hosts: []ct.Host{{Name: "h", Slots: 4, Mem: -1}}, Queues: []cluster.Queue{fairQueue(cluster.UserShare{User: "alice", Shares: 3})}})
	p := fairshare.New(c, 0)
	job := &framework.Job{Spec: &cluster.Job{ID: 1, User: "alice"}, Alloc: &cluster.JobAlloc{Hosts: []cluster.HostAlloc{{Host: 0, Slots: 2}}}, Start: 0}
	if got, want := p.Priority("alice", 0, 0), 3.0/3; got != want {
		t.Errorf("idle: got %v, want %v", got, want)
	}
	p.JobStarted(job, 0)
	if got, want := p.Priority("alice", 3600, 0), 3/10.4; math.Abs(got-want) > 1e-12 {
		t.Errorf("running: got %v, want %v", got, want)
	}
	p.JobFinished(job, 3600)
	if got, want := p.Priority("alice", 7200, 0), 3/3.7; math.Abs(got-want) > 1e-12 {
		t.Errorf("history: got %v, want %v", got, want)
	}
	// An unlisted user has the default share of 1 and no usage.
	if got, want := p.Priority("bob", 7200, 0), 1.0/3; got != want {
		t.Errorf("default share: got %v, want %v", got, want)
	}
}

// TestOrder: alice has 2 shares, bob 1; each submits three 1-slot jobs;
// 4 slots. Worked by hand: alice 2/3 > bob 1/3 → a1; alice 2/6 = bob 1/3,
// tie to the earlier job → b1; alice 2/6 > bob 1/6 → a2; 2/9 > 1/6 → a3;
// then b2, b3. The first four run.
func TestOrder(t *testing.T) {
	spec := ct.Spec{
		Hosts:  []ct.Host{{Name: "h", Slots: 4, Mem: -1}},
		Queues: []cluster.Queue{fairQueue(cluster.UserShare{User: "alice", Shares: 2}, cluster.UserShare{User: "bob", Shares: 1})},
		Jobs: []ct.Job{
			{ID: 1, User: "alice", Submit: 0, Min: 1}, {ID: 2, User: "alice", Submit: 1, Min: 1}, {ID: 3, User: "alice", Submit: 2, Min: 1},
			{ID: 4, User: "bob", Submit: 0, Min: 1}, {ID: 5, User: "bob", Submit: 1, Min: 1}, {ID: 6, User: "bob", Submit: 2, Min: 1},
		},
	}
	s, err := runtime.New(ct.Build(spec), runtime.Options{Registry: plugins.NewInTreeRegistry()})
	if err != nil {
		t.Fatal(err)
	}
	jobs, err := s.Cycle(context.Background(), 2)
	if err != nil {
		t.Fatal(err)
	}
	var order []cluster.JobID
	var running []cluster.JobID
	for _, j := range jobs {
		order = append(order, j.Spec.ID)
		if j.State == framework.Running {
			running = append(running, j.Spec.ID)
		}
	}
	if want := []cluster.JobID{1, 4, 2, 3, 5, 6}; !equal(order, want) {
		t.Errorf("order %v, want %v", order, want)
	}
	if want := []cluster.JobID{1, 4, 2, 3}; !equal(running, want) {
		t.Errorf("running %v, want %v", running, want)
	}
}

func equal(a, b []cluster.JobID) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
