package sim_test

import (
	"context"
	"reflect"
	"testing"

	"github.com/xce-sched/xce/framework/plugins"
	"github.com/xce-sched/xce/internal/event"
	"github.com/xce-sched/xce/sim"
)

// TestVerifier: a log written by hand. One host of 2 slots; job 1 is
// started by cycle 1 (as the scheduler would); job 2 is recorded left
// pending for Priority by cycle 2, where the scheduler starts it on the
// free slot (the one difference); cycle 3 records its start, which the
// rebuilt scheduler agrees with. Decisions: one pending job before each
// cycle.
func TestVerifier(t *testing.T) {
	const s = int64(1e9)
	sub := func(id int64) *event.Submit {
		return &event.Submit{Job: id, User: "u", Queue: "normal", TasksMin: 1, TasksMax: 1, Command: []string{"true"}, Cwd: "/"}
	}
	start := func(id int64) []event.Placement {
		return []event.Placement{{Job: id, Attempt: 1, Hosts: []event.HostAlloc{{Host: "h1", Slots: 1}}}}
	}
	log := []event.Event{
		{Type: event.ConfigReloaded, Config: &event.Config{Text: "hosts: [{name: h1, slots: 2}]\nqueues: [{name: normal}]\n"}},
		{Type: event.ServerStarted, SkipOK: true, Server: &event.Server{PID: 1}},
		{Type: event.HostRegistered, Host: &event.Host{Name: "h1"}},
		{Type: event.JobSubmitted, Submit: sub(1)},
		{Type: event.CycleDecided, Cycle: &event.Cycle{Number: 1, Now: 100, Started: start(1)}},
		{Type: event.JobSubmitted, Submit: sub(2)},
		{Type: event.CycleDecided, Cycle: &event.Cycle{Number: 2, Now: 101, Pending: []event.Pending{{Job: 2, Reason: "Priority"}}}},
		{Type: event.CycleDecided, Cycle: &event.Cycle{Number: 3, Now: 102, Started: start(2)}},
	}
	at := []int64{99, 99, 99, 100, 100, 101, 101, 102}
	v := sim.NewVerifier(sim.VerifyOptions{Registry: plugins.NewInTreeRegistry()})
	for i, e := range log {
		e.Index, e.At = uint64(i+1), at[i]*s
		if err := v.Add(context.Background(), e); err != nil {
			t.Fatalf("event %d: %v", i+1, err)
		}
	}
	got := v.Report()
	want := &sim.VerifyReport{Events: 8, Cycles: 3, Decisions: 3,
		Differences: []sim.Difference{{Cycle: 2, Time: 101, Job: 2, Live: "pend Priority", Sim: "start 1*h1"}}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("report %+v, want %+v", got, want)
	}
}
