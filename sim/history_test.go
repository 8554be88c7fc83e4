package sim_test

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/xce-sched/xce/cluster"
	"github.com/xce-sched/xce/framework/plugins"
	"github.com/xce-sched/xce/internal/event"
	"github.com/xce-sched/xce/internal/live"
	"github.com/xce-sched/xce/internal/state"
	"github.com/xce-sched/xce/sim"
)

const historyConfig = "hosts: [{name: h1, slots: 2}]\nqueues: [{name: normal, policy: firstfit}]\n"

// historyState is a folded log by hand (times in seconds, as ns):
//
//	job 1: submitted 100.2, placed 100.7, ended 110.1, 1 task, -W 20
//	job 2: submitted 101.5, placed 103.0, ended 104.9, 2 tasks
//	job 3: killed while pending (never ran)
//	job 4: still pending
func historyState() *state.State {
	ns := func(s float64) int64 { return int64(math.Round(s * 1e9)) }
	sub := func(id int64, tasks int, est int64) event.Submit {
		return event.Submit{Job: id, User: "u", Queue: "normal", TasksMin: tasks, TasksMax: tasks, Estimate: est}
	}
	return &state.State{Config: historyConfig, Cycles: 3, Jobs: []*state.Job{
		{Submit: sub(1, 1, 20), State: state.Done, SubmitTime: ns(100.2), StartTime: ns(100.7), EndTime: ns(110.1),
			Hosts: []event.HostAlloc{{Host: "h1", Slots: 1}}},
		{Submit: sub(2, 2, 0), State: state.Done, SubmitTime: ns(101.5), StartTime: ns(103.0), EndTime: ns(104.9),
			Hosts: []event.HostAlloc{{Host: "h1", Slots: 2}}},
		{Submit: sub(3, 1, 0), State: state.Exit, SubmitTime: ns(102), EndTime: ns(103), KilledBy: "u"},
		{Submit: sub(4, 3, 0), State: state.Pend, SubmitTime: ns(102.5)},
	}}
}

// TestFromHistory: the replay's jobs and the recorded metrics, worked by
// hand, on a clock of whole seconds and of half seconds.
//
// Whole seconds, from the first submit (100): job 1 submit 0, start 0,
// end 10 (wait 0, run 10); job 2 submit 1, start 3, end 4 (wait 2, run 1).
// Recorded: wait mean 1, response mean (10 + 3)/2 = 6.5, makespan 10,
// utilization (10·1 + 1·2)/(2·10) = 0.6. Simulated under firstfit: job 2
// needs both slots and waits for job 1's end at 10: wait mean (0 + 9)/2 =
// 4.5, makespan 11.
//
// Half seconds (origin 200): job 1 submit 0, start 1, end 20; job 2 submit
// 3, start 6, end 9: waits 1 and 3 ticks (mean 1 s), responses 20 and 6
// ticks (mean 6.5 s), makespan 20 ticks (10 s), utilization (19·1 +
// 3·2)/(2·20) = 0.625; job 1's estimate 20 s is 40 ticks.
func TestFromHistory(t *testing.T) {
	for _, c := range []struct {
		tick                                       time.Duration
		waitMean, respMean, util, simWait          float64
		makespan, simMakespan, est1, run1, submit2 int64
	}{
		{time.Second, 1, 6.5, 0.6, 4.5, 10, 11, 20, 10, 1},
		{500 * time.Millisecond, 1, 6.5, 0.625, 4.5, 10, 10, 40, 19, 3},
	} {
		h, err := sim.FromHistory(historyState(), nil, "", c.tick)
		if err != nil {
			t.Fatal(err)
		}
		jobs := h.Prepared.Cluster.Jobs
		if len(jobs) != 2 || h.NeverRan != 1 || h.Unfinished != 1 {
			t.Fatalf("tick %v: %d jobs, %d never ran, %d unfinished; want 2, 1, 1", c.tick, len(jobs), h.NeverRan, h.Unfinished)
		}
		if jobs[0].Estimate != c.est1 || jobs[0].Runtime != c.run1 || jobs[1].Submit != c.submit2 || jobs[1].TasksMin != 2 {
			t.Errorf("tick %v: jobs %+v", c.tick, jobs)
		}
		r := h.Recorded
		if r.Jobs != 2 || r.WaitMeanS != c.waitMean || r.ResponseMeanS != c.respMean || r.MakespanS != c.makespan ||
			math.Abs(r.Utilization-c.util) > 1e-12 || r.Cycles != 3 {
			t.Errorf("tick %v: recorded %+v", c.tick, r)
		}
		_, _, s, err := sim.Replay(context.Background(), h.Prepared, plugins.NewInTreeRegistry(), nil)
		if err != nil {
			t.Fatal(err)
		}
		if c.tick == time.Second && (s.Jobs != 2 || s.WaitMeanS != c.simWait || s.MakespanS != c.simMakespan) {
			t.Errorf("tick %v: simulated %+v; want wait mean %v, makespan %d", c.tick, s, c.simWait, c.simMakespan)
		}
	}
	if _, err := sim.FromHistory(historyState(), nil, "", 0); err == nil {
		t.Error("tick 0: no error")
	}
	st := historyState()
	st.Jobs[1].Queue = "gone"
	if _, err := sim.FromHistory(st, nil, "", time.Second); err == nil {
		t.Error("a job of a queue the configuration lacks: no error")
	}
}

// TestForecasts: a snapshot worked by hand. One host of 2 slots at now =
// 5; job A runs 1 slot from 0 for 10 s. Pending: B 2 slots 5 s, C 1 slot
// 3 s, D 1 slot of unknown length, E 3 slots (never fits).
//
// firstfit: C starts at 5 (ends 8), D at 8 (never ends), so B never
// starts. fcfs: B waits for A (10), runs to 15; then C and D at 15.
func TestForecasts(t *testing.T) {
	for _, c := range []struct {
		policy cluster.Policy
		want   map[cluster.JobID]int64
	}{
		{cluster.PolicyFirstFit, map[cluster.JobID]int64{3: 5, 4: 8}},
		{cluster.PolicyFCFS, map[cluster.JobID]int64{2: 10, 3: 15, 4: 15}},
	} {
		cl, err := cluster.Parse("snapshot.yaml", []byte(`hosts: [{name: h1, slots: 2}]
queues: [{name: normal, policy: `+string(c.policy)+`}]
jobs:
  - {id: 1, tasks: 1, submit: 0, runtime: 10, estimate: 10, running_on: {h1: 1}, start: 0}
  - {id: 2, tasks: 2, submit: 5, runtime: 5, estimate: 5}
  - {id: 3, tasks: 1, submit: 5, runtime: 3, estimate: 3}
  - {id: 4, tasks: 1, submit: 5}
  - {id: 5, tasks: 3, submit: 5, runtime: 1, estimate: 1}
`))
		if err != nil {
			t.Fatal(err)
		}
		got, err := sim.Forecasts(context.Background(), cl, nil, plugins.NewInTreeRegistry())
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(c.want) {
			t.Errorf("%s: forecasts %+v, want starts %v", c.policy, got, c.want)
		}
		for id, start := range c.want {
			if f, ok := got[id]; !ok || f.Start != start || len(f.Hosts) != 1 || f.Hosts[0].Host != 0 {
				t.Errorf("%s: job %d: %+v (found %v), want start %d on h1", c.policy, id, f, ok, start)
			}
		}
	}
}

// TestForecastEndedDependency: a pending job whose dependency names a job
// that has ended is forecast as if the condition were looked up live. On
// one host of 1 slot: job 1 ran and ended DONE; job 2 (-W 100) runs since
// 10; job 3 (done(1) && ended(2)) is forecast to start when job 2 ends,
// at 10 + 100 (its estimate; the scheduler plans LiveSlack more, but a job
// runs its estimate in the forecast), not "never" (before Bind, job 1 was
// unknown to the snapshot); job 4 (exit(1)) never starts: job 1 ended DONE.
func TestForecastEndedDependency(t *testing.T) {
	c, _, err := cluster.ParseConfig("c", []byte("hosts: [{name: h1, slots: 1}]\nqueues: [{name: normal, policy: fcfs}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	st := state.New()
	k, err := live.New(c, st, plugins.NewInTreeRegistry())
	if err != nil {
		t.Fatal(err)
	}
	sub := func(id int64, est int64, dep string) *event.Submit {
		return &event.Submit{Job: id, User: "u", Queue: "normal", TasksMin: 1, TasksMax: 1, Estimate: est, Depend: dep, Command: []string{"true"}, Cwd: "/"}
	}
	apply := func(e event.Event) {
		t.Helper()
		e.Index = st.Index + 1
		if err := k.Apply(e); err != nil {
			t.Fatalf("%s: %v", e.Type, err)
		}
	}
	cycle := func(sec int64) {
		t.Helper()
		e, ok, err := k.Cycle(context.Background(), sec*1e9)
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			e.Index = st.Index + 1
			if err := k.Commit(e); err != nil {
				t.Fatal(err)
			}
		}
	}
	apply(event.Event{At: 0, Type: event.HostRegistered, Host: &event.Host{Name: "h1"}})
	apply(event.Event{At: 0, Type: event.JobSubmitted, Submit: sub(1, 5, "")})
	cycle(0)
	apply(event.Event{At: 1e9, Type: event.JobStarted, Started: &event.Started{Job: 1, Attempt: 1, Host: "h1", PID: 7}})
	apply(event.Event{At: 5e9, Type: event.JobFinished, Finished: &event.Finished{Job: 1, Attempt: 1}})
	apply(event.Event{At: 10e9, Type: event.JobSubmitted, Submit: sub(2, 100, "")})
	cycle(10)
	apply(event.Event{At: 10e9, Type: event.JobStarted, Started: &event.Started{Job: 2, Attempt: 1, Host: "h1", PID: 8}})
	apply(event.Event{At: 11e9, Type: event.JobSubmitted, Submit: sub(3, 10, "done(1) && ended(2)")})
	apply(event.Event{At: 11e9, Type: event.JobSubmitted, Submit: sub(4, 10, "exit(1)")})
	cycle(11)
	snap, reserved, err := k.Snapshot(11)
	if err != nil {
		t.Fatal(err)
	}
	fc, err := sim.Forecasts(context.Background(), snap, reserved, plugins.NewInTreeRegistry())
	if err != nil {
		t.Fatal(err)
	}
	if f, ok := fc[3]; !ok || f.Start != 110 {
		t.Errorf("job 3: forecast %+v (found %v), want a start at 110", f, ok)
	}
	if f, ok := fc[4]; ok {
		t.Errorf("job 4: forecast %+v, want none (it never starts)", f)
	}
}
