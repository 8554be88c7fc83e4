package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/xce-sched/xce/cluster"
	"github.com/xce-sched/xce/framework"
	"github.com/xce-sched/xce/framework/plugins"
	"github.com/xce-sched/xce/framework/runtime"
	ct "github.com/xce-sched/xce/internal/clustertest"
	"github.com/xce-sched/xce/resreq"
)

// liveScheduler builds a scheduler over hosts with no jobs, its queues
// under policy.
func liveScheduler(t *testing.T, policy cluster.Policy, hosts ...ct.Host) (*cluster.Cluster, *runtime.Scheduler) {
	t.Helper()
	c := ct.Build(ct.Spec{Hosts: hosts, Queues: []cluster.Queue{{Name: "normal", Policy: policy, Picker: "priority"}}})
	s, err := runtime.New(c, runtime.Options{Registry: plugins.NewInTreeRegistry()})
	if err != nil {
		t.Fatal(err)
	}
	return c, s
}

// spec returns a job of tasks tasks with request rr, submitted at submit,
// estimated to run est seconds.
func spec(t *testing.T, id cluster.JobID, submit int64, tasks int, rr string, est int64) *cluster.Job {
	t.Helper()
	req, err := resreq.Parse(rr)
	if err != nil {
		t.Fatal(err)
	}
	return &cluster.Job{ID: id, Submit: submit, TasksMin: tasks, TasksMax: tasks, ResReq: rr, Req: req, Estimate: est}
}

func cycle(t *testing.T, s *runtime.Scheduler, now int64) {
	t.Helper()
	if _, err := s.Cycle(context.Background(), now); err != nil {
		t.Fatal(err)
	}
	if err := s.State.CheckInvariants(); err != nil {
		t.Fatal(err)
	}
}

// TestLiveSubmitCancelRequeue, worked by hand on one host of 4 slots under
// conservative backfilling:
//   - t=0: job 1 (4 slots, 100 s) starts; job 2 (2 slots) is submitted at
//     t=5 and job 3 (2 slots, 50 s) at t=6: job 2 is reserved at 100,
//     job 3 at 100 beside it.
//   - t=7: job 2 is cancelled: it is Done and pending no more.
//   - t=8: job 1 is requeued (its host was lost, say): it pends again,
//     first in submit order but without a reservation, so it is planned
//     like a new arrival around job 3's kept one (2 slots at 100–150): its
//     4 slots for 100 s fit from 150 only (Priority: it fits now but would
//     push job 3 back). Job 3 is then compressed: with 4 slots free now and
//     job 1 reserved from 150, it starts at once (8–58).
func TestLiveSubmitCancelRequeue(t *testing.T) {
	c, s := liveScheduler(t, cluster.PolicyConservative, ct.Host{Name: "h", Slots: 4, Mem: -1})
	j1, err := s.Submit(spec(t, 1, 0, 4, "", 100))
	if err != nil {
		t.Fatal(err)
	}
	cycle(t, s, 0)
	if got := state(c, j1); got != "RUN@0 h*4" {
		t.Fatalf("job 1: %s", got)
	}
	j2, _ := s.Submit(spec(t, 2, 5, 2, "", 0))
	j3, _ := s.Submit(spec(t, 3, 6, 2, "", 50))
	cycle(t, s, 5)
	cycle(t, s, 6)
	if got, want := state(c, j2), "PEND NotEnoughSlots reserved@100 h*2"; got != want {
		t.Errorf("job 2: %s, want %s", got, want)
	}
	if got, want := state(c, j3), "PEND NotEnoughSlots reserved@100 h*2"; got != want {
		t.Errorf("job 3: %s, want %s", got, want)
	}
	if err := s.Cancel(j2, 7); err != nil {
		t.Fatal(err)
	}
	if err := s.Cancel(j2, 7); !errors.Is(err, runtime.ErrNotPending) {
		t.Errorf("second cancel: %v, want ErrNotPending", err)
	}
	if err := s.Cancel(j1, 7); !errors.Is(err, runtime.ErrNotPending) {
		t.Errorf("cancel of a running job: %v, want ErrNotPending", err)
	}
	cycle(t, s, 7)
	for _, j := range s.Pending() {
		if j == j2 {
			t.Error("a cancelled job is still pending")
		}
	}
	if j2.State != framework.Done || j2.End != 7 || j2.Alloc != nil {
		t.Errorf("cancelled job 2: %v end %d alloc %v", j2.State, j2.End, j2.Alloc)
	}
	s.Requeue(j1, 8)
	if j1.State != framework.Pending || s.State.TotalFreeSlots() != 4 {
		t.Fatalf("requeued job 1: %v, %d slots free", j1.State, s.State.TotalFreeSlots())
	}
	cycle(t, s, 8)
	if got, want := state(c, j1), "PEND Priority reserved@150 h*4"; got != want {
		t.Errorf("requeued job 1: %s, want %s", got, want)
	}
	if got, want := state(c, j3), "RUN@8 h*2"; got != want {
		t.Errorf("job 3: %s, want %s", got, want)
	}
}

// TestLiveSubmitErrors: a job on no queue or with a bad task count is
// refused and not added.
func TestLiveSubmitErrors(t *testing.T) {
	_, s := liveScheduler(t, cluster.PolicyFirstFit, ct.Host{Name: "h", Slots: 4, Mem: -1})
	bad := spec(t, 1, 0, 1, "", 0)
	bad.Queue = 3
	if _, err := s.Submit(bad); err == nil {
		t.Error("queue 3 accepted")
	}
	bad = spec(t, 2, 0, 2, "", 0)
	bad.TasksMax = 1
	if _, err := s.Submit(bad); err == nil {
		t.Error("tasks 2,1 accepted")
	}
	if len(s.Jobs) != 0 {
		t.Errorf("%d jobs added", len(s.Jobs))
	}
}

// TestLiveHostStatus: on hosts a and b of 2 slots under firstfit, closing
// a sends job 1 to b; with b lost too, job 2 pends (every host closed or
// unavailable: NoHostMatch, as docs/pending-reasons.md rule 7 says of
// hosts that cannot take a task for a reason other than capacity); once a
// opens again job 2 starts there.
func TestLiveHostStatus(t *testing.T) {
	c, s := liveScheduler(t, cluster.PolicyFirstFit, ct.Host{Name: "a", Slots: 2, Mem: -1}, ct.Host{Name: "b", Slots: 2, Mem: -1})
	s.SetHostStatus(0, cluster.HostClosed)
	j1, _ := s.Submit(spec(t, 1, 0, 1, "", 0))
	cycle(t, s, 0)
	if got := state(c, j1); got != "RUN@0 b*1" {
		t.Errorf("job 1: %s, want RUN@0 b*1", got)
	}
	s.SetHostStatus(1, cluster.HostUnavail)
	j2, _ := s.Submit(spec(t, 2, 1, 1, "", 0))
	cycle(t, s, 1)
	if got := state(c, j2); got != "PEND NoHostMatch" {
		t.Errorf("job 2: %s, want PEND NoHostMatch", got)
	}
	s.SetHostStatus(0, cluster.HostOK)
	cycle(t, s, 2)
	if got := state(c, j2); got != "RUN@2 a*1" {
		t.Errorf("job 2: %s, want RUN@2 a*1", got)
	}
}

// TestLiveReservationOnClosedHost: under conservative on hosts a (2 slots)
// and b (2 slots), job 1 holds a×2 and b×1 until 100; job 2 (2 slots,
// span[hosts=1]) is reserved on a at 100. When a is closed, job 2's
// reservation is re-planned on b, at 100 too (job 1 frees b's slot then).
func TestLiveReservationOnClosedHost(t *testing.T) {
	c, s := liveScheduler(t, cluster.PolicyConservative, ct.Host{Name: "a", Slots: 2, Mem: -1}, ct.Host{Name: "b", Slots: 2, Mem: -1})
	s.Submit(spec(t, 1, 0, 3, "", 100))
	cycle(t, s, 0)
	j2, _ := s.Submit(spec(t, 2, 1, 2, "span[hosts=1]", 10))
	cycle(t, s, 1)
	if got, want := state(c, j2), "PEND NotEnoughSlots reserved@100 a*2"; got != want {
		t.Fatalf("job 2: %s, want %s", got, want)
	}
	s.SetHostStatus(0, cluster.HostClosed)
	cycle(t, s, 2)
	if got, want := state(c, j2), "PEND NotEnoughSlots reserved@100 b*2"; got != want {
		t.Errorf("job 2 after a closed: %s, want %s", got, want)
	}
}

// TestLiveRestore: a job restored with its exact allocation (h×3 and 2,000
// MB of mem, one license) holds all of it: a 2-slot job pends, a 1-slot
// job needing 1,000 MB fits, one needing 1,001 MB does not, and the
// license is gone. Restoring more than is free is refused.
func TestLiveRestore(t *testing.T) {
	c := ct.Build(ct.Spec{Hosts: []ct.Host{{Name: "h", Slots: 4, Mem: 3000}}, Shared: []cluster.Shared{{Name: "lic", Total: 1}},
		Queues: []cluster.Queue{{Name: "normal", Policy: cluster.PolicyFirstFit}}})
	s, err := runtime.New(c, runtime.Options{Registry: plugins.NewInTreeRegistry()})
	if err != nil {
		t.Fatal(err)
	}
	alloc := &cluster.JobAlloc{Hosts: []cluster.HostAlloc{{Host: 0, Slots: 3, Res: []cluster.ResAmount{{Res: 0, Amount: 2000}}}},
		Shared: []cluster.SharedAmount{{Shared: 0, Amount: 1}}}
	if _, err := s.Restore(spec(t, 1, 0, 3, "", 0), alloc, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Restore(spec(t, 9, 0, 2, "", 0), &cluster.JobAlloc{Hosts: []cluster.HostAlloc{{Host: 0, Slots: 2}}}, 0); err == nil {
		t.Error("a second restore over the free slots was accepted")
	}
	j2, _ := s.Submit(spec(t, 2, 0, 2, "", 0))
	j3, _ := s.Submit(spec(t, 3, 0, 1, "rusage[mem=1001]", 0))
	j4, _ := s.Submit(spec(t, 4, 0, 1, "rusage[lic=1]", 0))
	j5, _ := s.Submit(spec(t, 5, 0, 1, "rusage[mem=1000]", 0))
	cycle(t, s, 0)
	for _, tc := range []struct {
		j    *framework.Job
		want string
	}{{j2, "PEND NotEnoughSlots"}, {j3, "PEND NotEnoughResource"}, {j4, "PEND SharedResource"}, {j5, "RUN@0 h*1"}} {
		if got := state(c, tc.j); got != tc.want {
			t.Errorf("job %d: %s, want %s", tc.j.Spec.ID, got, tc.want)
		}
	}
}

// TestEndSlack, worked by hand on one host of 4 slots under conservative
// backfilling: job 1 (4 slots, estimated 10 s) starts at 0, job 2 (4
// slots, 5 s) is reserved at 10, job 3 (2 slots, 3 s) at 15. Job 1 ends
// at end, then job 4 (1 slot, 1 s) is submitted and a cycle runs. A job
// that ends no more than Options.EndSlack seconds early ends on plan: the
// reservations stand (job 2 starts at 10, not now) and job 4 backfills
// into the second left free; one that ends earlier is compressed into.
func TestEndSlack(t *testing.T) {
	for _, tc := range []struct {
		slack, end       int64
		job2, job3, job4 string
	}{
		// No slack: a second early compresses; job 4 waits behind job 3
		// (2 slots at 14-17, 2 left for it).
		{0, 9, "RUN@9 h*4", "PEND NotEnoughSlots reserved@14 h*2", "PEND NotEnoughSlots reserved@14 h*1"},
		// A second of slack: on plan; job 4 runs 9-10 on the free slots.
		{1, 9, "PEND NotEnoughSlots reserved@10 h*4", "PEND NotEnoughSlots reserved@15 h*2", "RUN@9 h*1"},
		// Two seconds early is beyond it: compression as without slack.
		{1, 8, "RUN@8 h*4", "PEND NotEnoughSlots reserved@13 h*2", "PEND NotEnoughSlots reserved@13 h*1"},
		// At its estimated end: job 2 starts as reserved.
		{1, 10, "RUN@10 h*4", "PEND NotEnoughSlots reserved@15 h*2", "PEND NotEnoughSlots reserved@15 h*1"},
	} {
		t.Run(fmt.Sprintf("slack%d-end%d", tc.slack, tc.end), func(t *testing.T) {
			c := ct.Build(ct.Spec{Hosts: []ct.Host{{Name: "h", Slots: 4, Mem: -1}}, Queues: []cluster.Queue{{Name: "normal", Policy: cluster.PolicyConservative, Picker: "priority"}}})
			s, err := runtime.New(c, runtime.Options{Registry: plugins.NewInTreeRegistry(), EndSlack: tc.slack})
			if err != nil {
				t.Fatal(err)
			}
			j1, _ := s.Submit(spec(t, 1, 0, 4, "", 10))
			cycle(t, s, 0)
			j2, _ := s.Submit(spec(t, 2, 1, 4, "", 5))
			cycle(t, s, 1)
			j3, _ := s.Submit(spec(t, 3, 2, 2, "", 3))
			cycle(t, s, 2)
			if got, want := state(c, j3), "PEND NotEnoughSlots reserved@15 h*2"; got != want {
				t.Fatalf("job 3 before: %s, want %s", got, want)
			}
			s.Finish(j1, tc.end)
			j4, _ := s.Submit(spec(t, 4, tc.end, 1, "", 1))
			cycle(t, s, tc.end)
			for _, g := range []struct {
				j    *framework.Job
				want string
			}{{j2, tc.job2}, {j3, tc.job3}, {j4, tc.job4}} {
				if got := state(c, g.j); got != g.want {
					t.Errorf("job %d: %s, want %s", g.j.Spec.ID, got, g.want)
				}
			}
		})
	}
	if _, err := runtime.New(&cluster.Cluster{}, runtime.Options{Registry: plugins.NewInTreeRegistry(), EndSlack: -1}); err == nil {
		t.Error("a negative end slack was taken")
	}
}
