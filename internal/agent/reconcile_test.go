package agent

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/xce-sched/xce/internal/event"
	"github.com/xce-sched/xce/internal/state"
)

// reconcileState is the state the reconciliation table runs against, for
// the agent of h1:
//
//	job 1: RUN on h1, attempt 1, started (pid 101)
//	job 2: RUN on h1, attempt 1, start not reported
//	job 3: RUN on h1, attempt 1, started (pid 103), rerunnable
//	job 4: RUN on h1, attempt 1, start not reported, killed by alice
//	job 5: RUN on h1, attempt 1, started (pid 105), rerunnable, killed by alice
//	job 6: RUN on h2, attempt 1
//	job 7: DONE (ran on h1)
//	job 8: RUN on h1, attempt 2 (attempt 1 was requeued), start not reported
//	job 9: RUN on h2 and h1 (h2 first), attempt 1, started on h2
func reconcileState(t *testing.T) *state.State {
	t.Helper()
	st := state.New()
	apply := func(e event.Event) {
		t.Helper()
		e.Index = st.Index + 1
		if err := st.Apply(e); err != nil {
			t.Fatal(err)
		}
	}
	on := func(hosts ...string) []event.HostAlloc {
		var out []event.HostAlloc
		for _, h := range hosts {
			out = append(out, event.HostAlloc{Host: h, Slots: 1})
		}
		return out
	}
	for id := int64(1); id <= 9; id++ {
		apply(event.Event{Type: event.JobSubmitted, Submit: &event.Submit{Job: id, User: "alice", Queue: "normal", TasksMin: 1, TasksMax: 1,
			Command: []string{"true"}, Cwd: "/", Rerunnable: id == 3 || id == 5 || id == 8}})
	}
	var started []event.Placement
	for id := int64(1); id <= 8; id++ {
		hosts := on("h1")
		if id == 6 {
			hosts = on("h2")
		}
		started = append(started, event.Placement{Job: id, Attempt: 1, Hosts: hosts})
	}
	started = append(started, event.Placement{Job: 9, Attempt: 1, Hosts: on("h2", "h1")})
	apply(event.Event{Type: event.CycleDecided, Cycle: &event.Cycle{Number: 1, Started: started}})
	for _, s := range []event.Started{{Job: 1, Attempt: 1, Host: "h1", PID: 101}, {Job: 3, Attempt: 1, Host: "h1", PID: 103},
		{Job: 5, Attempt: 1, Host: "h1", PID: 105}, {Job: 7, Attempt: 1, Host: "h1", PID: 107}, {Job: 9, Attempt: 1, Host: "h2", PID: 109}} {
		apply(event.Event{Type: event.JobStarted, Started: &s})
	}
	apply(event.Event{Type: event.JobKilled, Killed: &event.Killed{Job: 4, By: "alice"}})
	apply(event.Event{Type: event.JobKilled, Killed: &event.Killed{Job: 5, By: "alice"}})
	apply(event.Event{Type: event.JobFinished, Finished: &event.Finished{Job: 7, Attempt: 1}})
	apply(event.Event{Type: event.JobFinished, Finished: &event.Finished{Job: 8, Attempt: 1, ExitCode: -1, Reason: "host lost", Requeued: true}})
	apply(event.Event{Type: event.CycleDecided, Cycle: &event.Cycle{Number: 2, Started: []event.Placement{{Job: 8, Attempt: 2, Hosts: on("h1")}}}})
	return st
}

// TestReconcile: the reconciliation rule, case by case, with the exact
// events and orders worked out from reconcileState by hand.
func TestReconcile(t *testing.T) {
	st := reconcileState(t)
	const grace = 2500
	fin := func(f event.Finished) event.Event { return event.Event{Type: event.JobFinished, Finished: &f} }
	startEv := func(job int64, pid int) event.Event {
		return event.Event{Type: event.JobStarted, Started: &event.Started{Job: job, Attempt: 1, Host: "h1", PID: pid}}
	}
	kill := func(job int64, attempt int) Order {
		return Order{Kind: KindKill, Job: job, Attempt: attempt, GraceMS: grace}
	}
	start := func(job int64, attempt int) Order {
		j := st.Job(job)
		return Order{Kind: KindStart, Job: job, Attempt: attempt, Submit: &j.Submit, Hosts: j.Hosts, AllowRoot: true}
	}
	// everything: the agent runs all of h1's current attempts.
	everything := []Running{{1, 1, 101}, {2, 1, 202}, {3, 1, 103}, {4, 1, 0}, {5, 1, 105}, {8, 2, 0}}
	for _, c := range []struct {
		name     string
		running  []Running
		finished []Report
		want     Plan
	}{{
		name: "a restarted agent runs nothing",
		// 1 and 5 were started: lost (5 was killed: not requeued); 3 is
		// lost and requeued; 4 was killed before it started: it ends; 2
		// and 8 were never started: started now.
		want: Plan{
			Events: []event.Event{
				fin(event.Finished{Job: 1, Attempt: 1, ExitCode: -1, Reason: ReasonLostByAgent}),
				fin(event.Finished{Job: 3, Attempt: 1, ExitCode: -1, Reason: ReasonLostByAgent, Requeued: true}),
				fin(event.Finished{Job: 4, Attempt: 1, ExitCode: -1, Reason: ReasonKilled}),
				fin(event.Finished{Job: 5, Attempt: 1, ExitCode: -1, Reason: ReasonLostByAgent}),
			},
			Orders: []Order{start(2, 1), start(8, 2)},
		},
	}, {
		name:    "the server restarted: the agent runs everything",
		running: everything,
		// 2's start is recorded; 4 and 5 are killed (again).
		want: Plan{Events: []event.Event{startEv(2, 202)}, Orders: []Order{kill(4, 1), kill(5, 1)}},
	}, {
		name: "stale attempts are killed",
		running: append([]Running{{99, 1, 999}, {6, 1, 606}, {7, 1, 107}, {8, 1, 808}, {9, 1, 109}, {1, 2, 111}},
			everything...),
		want: Plan{Events: []event.Event{startEv(2, 202)},
			Orders: []Order{kill(1, 2), kill(4, 1), kill(5, 1), kill(6, 1), kill(7, 1), kill(8, 1), kill(9, 1), kill(99, 1)}},
	}, {
		name:    "ends the agent could not report",
		running: []Running{{2, 1, 202}, {4, 1, 0}, {8, 2, 0}},
		finished: []Report{
			{Kind: KindFinished, Job: 5, Attempt: 1, ExitCode: 130, Signal: "SIGINT", Reason: ReasonKilled},
			{Kind: KindFinished, Job: 3, Attempt: 1, ExitCode: -1, Lost: true, Reason: ReasonAgentRestarted},
			{Kind: KindFinished, Job: 1, Attempt: 1, ExitCode: 7},
			{Kind: KindFinished, Job: 7, Attempt: 1},                // ended already: nothing
			{Kind: KindFinished, Job: 6, Attempt: 1, ExitCode: 1},   // h2's: nothing
			{Kind: KindFinished, Job: 8, Attempt: 1, ExitCode: 1},   // an old attempt: nothing
			{Kind: KindFinished, Job: 2, Attempt: 1, Lost: true},    // also listed running: the end wins
			{Kind: KindFinished, Job: 99, Attempt: 3, ExitCode: 2}}, // unknown: nothing
		want: Plan{
			Events: []event.Event{
				fin(event.Finished{Job: 1, Attempt: 1, ExitCode: 7}),
				fin(event.Finished{Job: 2, Attempt: 1, Reason: ReasonLostByAgent}),
				fin(event.Finished{Job: 3, Attempt: 1, ExitCode: -1, Reason: ReasonAgentRestarted, Requeued: true}),
				fin(event.Finished{Job: 5, Attempt: 1, ExitCode: 130, Signal: "SIGINT", Reason: ReasonKilled}),
			},
			Orders: []Order{kill(4, 1)},
		},
	}} {
		t.Run(c.name, func(t *testing.T) {
			got := Reconcile(st, "h1", &RegisterRequest{Name: "h1", Running: c.running, Finished: c.finished}, grace, true)
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("got\n%s\nwant\n%s", dump(got), dump(c.want))
			}
			// Every event the plan gives applies, in order, to the state.
			cp, err := state.Unmarshal(must(st.Marshal()))
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range got.Events {
				e.Index = cp.Index + 1
				if err := cp.Apply(e); err != nil {
					t.Errorf("plan event: %v", err)
				}
			}
		})
	}
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}

func dump(p Plan) string {
	out := ""
	for _, e := range p.Events {
		switch {
		case e.Finished != nil:
			out += "  finished " + string(must(json.Marshal(e.Finished))) + "\n"
		case e.Started != nil:
			out += "  started " + string(must(json.Marshal(e.Started))) + "\n"
		}
	}
	for _, o := range p.Orders {
		o.Submit = nil
		out += "  order " + string(must(json.Marshal(o))) + "\n"
	}
	return out
}
