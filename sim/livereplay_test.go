package sim_test

import (
	"context"
	"testing"
	"time"

	"github.com/xce-sched/xce/framework/plugins"
	"github.com/xce-sched/xce/internal/event"
	"github.com/xce-sched/xce/internal/state"
	"github.com/xce-sched/xce/sim"
)

// TestLiveReplay: a log written by hand (one host of 2 slots, times in
// seconds): job 1 (2 tasks) placed at 100.0, ended at 105.5; job 2 (1
// task) submitted at 101, placed by the cycle at 105.6, ended at 107.6;
// job 3 (1 task) submitted at 102, placed by the same cycle, ended at
// 106.6. Replayed as recorded, every placement and end comes back at the
// same instant. Under a policy that cannot change these decisions (fcfs)
// too; with job 1 running 1.5 s less (a log where its end comes at 104),
// jobs 2 and 3 start at the first cycle after it, at 104 + cycle_interval.
func TestLiveReplay(t *testing.T) {
	sub := func(id int64, tasks int) *event.Submit {
		return &event.Submit{Job: id, User: "u", Queue: "normal", TasksMin: tasks, TasksMax: tasks, Command: []string{"true"}, Cwd: "/"}
	}
	placed := func(id int64, slots int) event.Placement {
		return event.Placement{Job: id, Attempt: 1, Hosts: []event.HostAlloc{{Host: "h1", Slots: slots}}}
	}
	fin := func(id int64) *event.Finished { return &event.Finished{Job: id, Attempt: 1} }
	log := func(end1 float64) []event.Event {
		evs := []event.Event{
			{At: 99e9, Type: event.ConfigReloaded, Config: &event.Config{Text: "hosts: [{name: h1, slots: 2}]\nqueues: [{name: normal}]\n"}},
			{At: 99e9, Type: event.ServerStarted, SkipOK: true, Server: &event.Server{PID: 1}},
			{At: 99e9, Type: event.HostRegistered, Host: &event.Host{Name: "h1"}},
			{At: 100e9, Type: event.JobSubmitted, Submit: sub(1, 2)},
			{At: 100e9, Type: event.CycleDecided, Cycle: &event.Cycle{Number: 1, Now: 100, Started: []event.Placement{placed(1, 2)}}},
			{At: 101e9, Type: event.JobSubmitted, Submit: sub(2, 1)},
			{At: 101e9 + 1e7, Type: event.CycleDecided, Cycle: &event.Cycle{Number: 2, Now: 101, Pending: []event.Pending{{Job: 2, Reason: "NotEnoughSlots"}}}},
			{At: 102e9, Type: event.JobSubmitted, Submit: sub(3, 1)},
			{At: 102e9 + 1e7, Type: event.CycleDecided, Cycle: &event.Cycle{Number: 3, Now: 102, Pending: []event.Pending{{Job: 3, Reason: "NotEnoughSlots"}}}},
			{At: int64(end1 * 1e9), Type: event.JobFinished, Finished: fin(1)},
			{At: 105.51e9, Type: event.CycleDecided, Cycle: &event.Cycle{Number: 4, Now: 105, Started: []event.Placement{placed(2, 1), placed(3, 1)}}},
			{At: 106.51e9, Type: event.JobFinished, Finished: fin(3)},
			{At: 107.51e9, Type: event.JobFinished, Finished: fin(2)},
		}
		for i := range evs {
			evs[i].Index = uint64(i + 1)
		}
		return evs
	}
	replay := func(evs []event.Event, opts sim.VerifyOptions, recorded *state.State) *state.State {
		var cycles []int64
		for _, e := range evs {
			if e.Type == event.CycleDecided {
				cycles = append(cycles, e.At)
			}
		}
		lr := sim.NewLiveReplay(opts, recorded, cycles, 20*time.Millisecond)
		for _, e := range evs {
			if err := lr.Add(context.Background(), e); err != nil {
				t.Fatal(err)
			}
		}
		if err := lr.Finish(context.Background()); err != nil {
			t.Fatal(err)
		}
		return lr.State()
	}
	fold := func(evs []event.Event) *state.State {
		st := state.New()
		for _, e := range evs {
			if err := st.Apply(e); err != nil {
				t.Fatal(err)
			}
		}
		return st
	}
	check := func(name string, st *state.State, want map[int64][2]float64) {
		for id, w := range want {
			j := st.Job(id)
			if j.State != state.Done || j.StartTime != int64(w[0]*1e9) || j.EndTime != int64(w[1]*1e9) {
				t.Errorf("%s: job %d: %s from %d to %d, want DONE from %v to %v", name, id, j.State, j.StartTime, j.EndTime, w[0], w[1])
			}
		}
	}
	reg := plugins.NewInTreeRegistry()
	rec := log(105.5)
	recorded := map[int64][2]float64{1: {100, 105.5}, 2: {105.51, 107.51}, 3: {105.51, 106.51}}
	check("as recorded", replay(rec, sim.VerifyOptions{Registry: reg}, fold(rec)), recorded)
	check("fcfs", replay(rec, sim.VerifyOptions{Registry: reg, Policy: "fcfs"}, fold(rec)), recorded)

	// Job 1 ran 4 s, not 5.5: the replay takes the run times it is given
	// and makes its own cycles: job 1's end at 104 asks for one then,
	// which starts jobs 2 and 3 (the recorded cycle at 105.51 then has
	// nothing left to start).
	short := fold(log(104))
	check("a shorter job 1", replay(rec, sim.VerifyOptions{Registry: reg}, short),
		map[int64][2]float64{1: {100, 104}, 2: {104, 106}, 3: {104, 105}})
}
