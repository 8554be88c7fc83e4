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
