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

// TestVerifierGPUs: the devices are part of a decision. Logs written by
// hand on host g of 2 GPUs, jobs of one GPU each: job 1 at 100, job 2 at
// 101, job 1 ends at 102, job 3 at 103.
//   - As the scheduler decides (the lowest free): devices 0, 1, then 0.
//   - A log that put job 1 on device 1: the one difference, naming both
//     devices. The replayed scheduler is rebuilt from the log, which it
//     then follows: job 2 gets 0 (1 is job 1's), job 3 gets 1 (0 is job
//     2's), as that log recorded them.
func TestVerifierGPUs(t *testing.T) {
	const s = int64(1e9)
	sub := func(id int64) *event.Submit {
		return &event.Submit{Job: id, User: "u", Queue: "normal", TasksMin: 1, TasksMax: 1, GPU: "num=1", Command: []string{"true"}, Cwd: "/"}
	}
	start := func(id int64, dev int) []event.Placement {
		return []event.Placement{{Job: id, Attempt: 1, Hosts: []event.HostAlloc{{Host: "g", Slots: 1, Res: map[string]float64{"ngpus_physical": 1}, GPUs: []int{dev}}}}}
	}
	for _, tc := range []struct {
		devs [3]int // of jobs 1, 2 and 3, as the log records them
		diff []sim.Difference
	}{
		{[3]int{0, 1, 0}, []sim.Difference{}},
		{[3]int{1, 0, 1}, []sim.Difference{{Cycle: 1, Time: 100, Job: 1, Live: "start 1*g[1]", Sim: "start 1*g[0]"}}},
	} {
		log := []event.Event{
			{Type: event.ConfigReloaded, Config: &event.Config{Text: "hosts: [{name: g, slots: 4, gpus: 2}]\nqueues: [{name: normal}]\n"}},
			{Type: event.HostRegistered, Host: &event.Host{Name: "g"}},
			{Type: event.JobSubmitted, Submit: sub(1)},
			{Type: event.CycleDecided, Cycle: &event.Cycle{Number: 1, Now: 100, Started: start(1, tc.devs[0])}},
			{Type: event.JobSubmitted, Submit: sub(2)},
			{Type: event.CycleDecided, Cycle: &event.Cycle{Number: 2, Now: 101, Started: start(2, tc.devs[1])}},
			{Type: event.JobFinished, Finished: &event.Finished{Job: 1, Attempt: 1}},
			{Type: event.JobSubmitted, Submit: sub(3)},
			{Type: event.CycleDecided, Cycle: &event.Cycle{Number: 3, Now: 103, Started: start(3, tc.devs[2])}},
		}
		at := []int64{99, 99, 100, 100, 101, 101, 102, 103, 103}
		v := sim.NewVerifier(sim.VerifyOptions{Registry: plugins.NewInTreeRegistry()})
		for i, e := range log {
			e.Index, e.At = uint64(i+1), at[i]*s
			if err := v.Add(context.Background(), e); err != nil {
				t.Fatalf("log %v, event %d: %v", tc.devs, i+1, err)
			}
		}
		if got := v.Report().Differences; !reflect.DeepEqual(got, tc.diff) {
			t.Errorf("log %v: differences %+v, want %+v", tc.devs, got, tc.diff)
		}
	}
}
