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

// TestStuckSetAside (issue 15): h1 has 1 slot, h2 4 but is closed. Job 1
// needs 4 tasks on one host, so it cannot run even with every open host
// idle (stuck); job 2 (1 task) runs on h1. After the first cycle job 1 is
// set aside: the second cycle does not consider it, and it keeps its
// reason. Opening h2 puts it back: the third cycle starts it there. Job
// 3, stuck too, is killed while set aside and is gone from it.
func TestStuckSetAside(t *testing.T) {
	spec := ct.Spec{Hosts: []ct.Host{{Name: "h1", Slots: 1, Mem: -1}, {Name: "h2", Slots: 4, Mem: -1, Status: cluster.HostClosed}},
		Jobs: []ct.Job{{ID: 1, Min: 4, ResReq: "span[hosts=1]"}, {ID: 2, Min: 1}, {ID: 3, Min: 4, ResReq: "span[hosts=1]"}}}
	c := ct.Build(spec)
	s, err := runtime.New(c, runtime.Options{Registry: plugins.NewInTreeRegistry()})
	if err != nil {
		t.Fatal(err)
	}
	cycle := func(now int64) []*framework.Job {
		t.Helper()
		js, err := s.Cycle(context.Background(), now)
		if err != nil {
			t.Fatal(err)
		}
		return js
	}
	j1, j2, j3 := s.Jobs[0], s.Jobs[1], s.Jobs[2]
	if js := cycle(0); len(js) != 3 || j2.State != framework.Running || !j1.Reasons.Stuck || j1.State != framework.Pending {
		t.Fatalf("cycle 1: considered %d, job 1 %v %+v, job 2 %v", len(js), j1.State, j1.Reasons, j2.State)
	}
	reason := j1.Reasons.Main
	if got := s.Aside(); len(got) != 0 {
		t.Errorf("after cycle 1: Aside() = %d jobs, want none (cycle 1 considered them)", len(got))
	}
	if js := cycle(1); len(js) != 0 {
		t.Errorf("cycle 2 considered %d jobs, want none: both stuck jobs are set aside", len(js))
	}
	if got := s.Aside(); len(got) != 2 || got[0] != j1 || got[1] != j3 || j1.Reasons.Main != reason {
		t.Errorf("after cycle 2: Aside() %v, job 1's reason %v (was %v)", got, j1.Reasons.Main, reason)
	}
	if err := s.Cancel(j3, 2); err != nil {
		t.Fatal(err)
	}
	if got := s.Aside(); len(got) != 1 || got[0] != j1 {
		t.Errorf("after the kill of job 3: Aside() %v, want job 1", got)
	}
	h2, _ := c.HostByName("h2")
	s.SetHostStatus(h2, cluster.HostOK)
	if js := cycle(3); len(js) != 1 || j1.State != framework.Running || j1.Alloc.Hosts[0].Host != h2 {
		t.Errorf("cycle 3 after h2 opened: considered %d, job 1 %v %+v", len(js), j1.State, j1.Reasons)
	}
	if s.Waiting() != 0 {
		t.Errorf("Waiting() = %d, want 0", s.Waiting())
	}
}

// TestStuckFollowsHosts: whether a job is stuck (it could not run with
// every open host idle) is decided anew when a host's status changes.
// Job 1 runs on h2 (4 slots); job 2, 4 tasks on one host, pends behind it,
// not stuck. With h2 closed only h1 (1 slot) is open: job 2 is stuck.
// With h2 open again it is not, though it still pends behind job 1.
func TestStuckFollowsHosts(t *testing.T) {
	spec := ct.Spec{Hosts: []ct.Host{{Name: "h1", Slots: 1, Mem: -1}, {Name: "h2", Slots: 4, Mem: -1}},
		Jobs: []ct.Job{{ID: 1, Min: 4, ResReq: "span[hosts=1]", Runtime: 1000}, {ID: 2, Min: 4, ResReq: "span[hosts=1]"}}}
	c := ct.Build(spec)
	s, err := runtime.New(c, runtime.Options{Registry: plugins.NewInTreeRegistry()})
	if err != nil {
		t.Fatal(err)
	}
	h2, _ := c.HostByName("h2")
	j1, j2 := s.Jobs[0], s.Jobs[1]
	for i, step := range []struct {
		status cluster.HostStatus
		stuck  bool
	}{{cluster.HostOK, false}, {cluster.HostClosed, true}, {cluster.HostOK, false}} {
		s.SetHostStatus(h2, step.status)
		if _, err := s.Cycle(context.Background(), int64(i)); err != nil {
			t.Fatal(err)
		}
		if j1.State != framework.Running || j2.State != framework.Pending || j2.Reasons.Stuck != step.stuck {
			t.Errorf("cycle %d, h2 %v: job 1 %v, job 2 %v %+v, want it stuck: %v", i+1, step.status, j1.State, j2.State, j2.Reasons, step.stuck)
		}
	}
}
