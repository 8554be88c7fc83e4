package agent

import (
	"context"
	"testing"
	"time"

	"github.com/xce-sched/xce/internal/event"
	"github.com/xce-sched/xce/internal/state"
)

// TestLostUnstartedRequeued: an agent that was stopping when a start order
// reached it reports the attempt lost and never started (Unstarted); the
// job then goes back to pending even though it is not rerunnable, since
// it cannot have run (found by TestMixedJobs: it ended EXIT without ever
// running). A lost attempt that may have run is requeued only for a
// rerunnable job.
func TestLostUnstartedRequeued(t *testing.T) {
	for _, tc := range []struct {
		unstarted, rerunnable, want bool
	}{{true, false, true}, {false, false, false}, {false, true, true}, {true, true, true}} {
		st := state.New()
		for i, e := range []event.Event{
			{Type: event.HostRegistered, Host: &event.Host{Name: "h1"}},
			{Type: event.JobSubmitted, Submit: &event.Submit{Job: 1, User: "u", Queue: "normal", TasksMin: 1, TasksMax: 1, Rerunnable: tc.rerunnable, Command: []string{"true"}, Cwd: "/"}},
			{Type: event.CycleDecided, Cycle: &event.Cycle{Number: 1, Started: []event.Placement{{Job: 1, Attempt: 1, Hosts: []event.HostAlloc{{Host: "h1", Slots: 1}}}}}},
		} {
			e.Index = uint64(i + 1)
			if err := st.Apply(e); err != nil {
				t.Fatal(err)
			}
		}
		// The hub's reports go through a loop of this test: each request's
		// events are applied to st.
		var applied []event.Event
		h := NewHub(HubOptions{Hosts: []string{"h1"}, Do: func(_ context.Context, mk Make) ([]event.Event, error) {
			evs, err := mk(st, 0)
			for _, e := range evs {
				e.Index = st.Index + 1
				if err := st.Apply(e); err != nil {
					return nil, err
				}
				applied = append(applied, e)
			}
			return evs, err
		}})
		h.hosts["h1"].session = "s"
		rep := Report{Kind: KindFinished, Job: 1, Attempt: 1, ExitCode: -1, Reason: ReasonAgentStopped, Lost: true, Unstarted: tc.unstarted}
		ok, err := h.Report(context.Background(), &ReportRequest{Name: "h1", Session: "s", Reports: []Report{rep}})
		if err != nil || len(ok) != 1 || !ok[0] || len(applied) != 1 {
			t.Fatalf("%+v: applied %v %v %+v", tc, ok, err, applied)
		}
		if got := applied[0].Finished.Requeued; got != tc.want {
			t.Errorf("unstarted %v, rerunnable %v: requeued %v, want %v", tc.unstarted, tc.rerunnable, got, tc.want)
		}
		if want := state.Pend; tc.want && st.Job(1).State != want {
			t.Errorf("job 1: %s, want %s", st.Job(1).State, want)
		}
	}
}

// TestHeartbeats: only hosts with a session are listed, each with when
// its agent was last heard from (by the hub's clock): its registration,
// then its polls.
func TestHeartbeats(t *testing.T) {
	st := state.New()
	now := time.Unix(1000, 0)
	h := NewHub(HubOptions{Hosts: []string{"h1", "h2"}, HeartbeatTimeout: time.Minute, Now: func() time.Time { return now },
		Do: func(_ context.Context, mk Make) ([]event.Event, error) {
			evs, err := mk(st, 0)
			for _, e := range evs {
				e.Index = st.Index + 1
				if err := st.Apply(e); err != nil {
					return nil, err
				}
			}
			return evs, err
		},
		View: func(fn func(*state.State)) { fn(st) }})
	if got := h.Heartbeats(); len(got) != 0 {
		t.Errorf("before any registration: %v, want none", got)
	}
	rep, err := h.Register(context.Background(), &RegisterRequest{Name: "h1"})
	if err != nil {
		t.Fatal(err)
	}
	now = time.Unix(1005, 0)
	if _, err := h.Poll(context.Background(), "h1", rep.Session, 0, 0); err != nil {
		t.Fatal(err)
	}
	got := h.Heartbeats()
	if len(got) != 1 || !got["h1"].Equal(time.Unix(1005, 0)) {
		t.Errorf("Heartbeats %v, want h1 at 1005 only", got)
	}
}
