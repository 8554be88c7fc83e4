package sim_test

import (
	"context"
	"testing"

	"github.com/xce-sched/xce/cluster"
	"github.com/xce-sched/xce/framework/plugins"
	"github.com/xce-sched/xce/internal/event"
	"github.com/xce-sched/xce/internal/live"
	"github.com/xce-sched/xce/internal/state"
	"github.com/xce-sched/xce/sim"
)

// TestForecastSaturates: estimates of 2^62 s (stored before the server
// bounded them) make the forecast saturate, not wrap around. On one host
// of 1 slot, at now = 11: job 1 (-W 2^62 s) runs since 10; job 2 (2^62
// s) and job 3 (10 s) pend, in that order. Each long job runs
// MaxForecastRun = 2^32 s in the forecast: job 2 starts at 10 + 2^32,
// job 3 at 10 + 2^33 (before, job 2 started at 10 + 2^62 and job 3 at
// 10 + 2^63, wrapped to a negative time: "starts in -10s"). fcfs,
// firstfit and easy start a job when the one before ends; conservative
// starts it at the reservation it planned, at the end of the one before
// as estimated, one second (LiveSlack) later than it runs: job 2 at 11 +
// 2^32, job 3 at 11 + 2^32 + 2^32 + 1.
func TestForecastSaturates(t *testing.T) {
	for _, c := range []struct {
		policy     string
		job2, job3 int64
	}{
		{"fcfs", 10 + 1<<32, 10 + 1<<33},
		{"firstfit", 10 + 1<<32, 10 + 1<<33},
		{"easy", 10 + 1<<32, 10 + 1<<33},
		{"conservative", 11 + 1<<32, 12 + 1<<33},
	} {
		policy := c.policy
		cl, _, err := cluster.ParseConfig("c", []byte("hosts: [{name: h1, slots: 1}]\nqueues: [{name: normal, policy: "+policy+"}]\n"))
		if err != nil {
			t.Fatal(err)
		}
		st := state.New()
		k, err := live.New(cl, st, plugins.NewInTreeRegistry())
		if err != nil {
			t.Fatal(err)
		}
		sub := func(id, est int64) *event.Submit {
			return &event.Submit{Job: id, User: "u", Queue: "normal", TasksMin: 1, TasksMax: 1, Estimate: est, Command: []string{"true"}, Cwd: "/"}
		}
		apply := func(e event.Event) {
			t.Helper()
			e.Index = st.Index + 1
			if err := k.Apply(e); err != nil {
				t.Fatalf("%s: %s: %v", policy, e.Type, err)
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
		apply(event.Event{At: 10e9, Type: event.JobSubmitted, Submit: sub(1, 1<<62)})
		cycle(10)
		apply(event.Event{At: 11e9, Type: event.JobSubmitted, Submit: sub(2, 1<<62)})
		apply(event.Event{At: 11e9, Type: event.JobSubmitted, Submit: sub(3, 10)})
		cycle(11)
		snap, reserved, err := k.Snapshot(11)
		if err != nil {
			t.Fatal(err)
		}
		fc, err := sim.Forecasts(context.Background(), snap, reserved, plugins.NewInTreeRegistry())
		if err != nil {
			t.Fatal(err)
		}
		for id, want := range map[cluster.JobID]int64{2: c.job2, 3: c.job3} {
			if f, ok := fc[id]; !ok || f.Start != want {
				t.Errorf("%s: job %d: forecast %+v (found %v), want a start at %d", policy, id, f, ok, want)
			}
		}
	}
}

// TestForecastCompoundRunning: a forecast (and so why) of a cluster where
// a compound job runs holds what each of its terms holds where it runs
// (issue 29: it charged every host the largest rusage of any term, and
// failed, "running allocation over-commits", when a host without mem ran
// a term that asks none). h1 has 1 slot and no mem, h3 2 slots and 8000
// MB; firstfit. Job 1, "1*{} + {rusage[mem=1000]}" of 2 tasks, -W 100,
// starts at 10 on h1 (term 1) and h3 (term 2, 1000 MB). Job 2, 1 task of
// rusage[mem=7500], pends: h3 has a slot but 7000 MB free. The forecast
// starts it when job 1 ends, at 10 + 100 = 110.
func TestForecastCompoundRunning(t *testing.T) {
	cl, _, err := cluster.ParseConfig("c", []byte("hosts: [{name: h1, slots: 1}, {name: h3, slots: 2, resources: {mem: 8000}}]\nqueues: [{name: normal, policy: firstfit}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	st := state.New()
	k, err := live.New(cl, st, plugins.NewInTreeRegistry())
	if err != nil {
		t.Fatal(err)
	}
	apply := func(e event.Event) {
		t.Helper()
		e.Index = st.Index + 1
		if err := k.Apply(e); err != nil {
			t.Fatalf("%s: %v", e.Type, err)
		}
	}
	for _, h := range []string{"h1", "h3"} {
		apply(event.Event{At: 0, Type: event.HostRegistered, Host: &event.Host{Name: h}})
	}
	sub := func(id int64, tasks int, rr string, est int64) *event.Submit {
		return &event.Submit{Job: id, User: "u", Queue: "normal", TasksMin: tasks, TasksMax: tasks, ResReq: rr, Estimate: est, Command: []string{"true"}, Cwd: "/"}
	}
	apply(event.Event{At: 10e9, Type: event.JobSubmitted, Submit: sub(1, 2, "1*{} + {rusage[mem=1000]}", 100)})
	apply(event.Event{At: 10e9, Type: event.JobSubmitted, Submit: sub(2, 1, "rusage[mem=7500]", 10)})
	e, ok, err := k.Cycle(context.Background(), 10e9)
	if err != nil || !ok {
		t.Fatalf("cycle: %v %v", ok, err)
	}
	e.Index = st.Index + 1
	if err := k.Commit(e); err != nil {
		t.Fatal(err)
	}
	if j := st.Job(1); j.State != state.Run || len(j.Hosts) != 2 {
		t.Fatalf("job 1: %s on %+v, want running on h1 and h3", j.State, j.Hosts)
	}
	snap, reserved, err := k.Snapshot(11)
	if err != nil {
		t.Fatal(err)
	}
	fc, err := sim.Forecasts(context.Background(), snap, reserved, plugins.NewInTreeRegistry())
	if err != nil {
		t.Fatal(err)
	}
	if f, ok := fc[2]; !ok || f.Start != 110 {
		t.Errorf("job 2: forecast %+v (found %v), want a start at 110", f, ok)
	}
}
