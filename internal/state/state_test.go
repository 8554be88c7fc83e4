package state

import (
	"bytes"
	"fmt"
	"testing"

	"pgregory.net/rapid"

	"github.com/xce-sched/xce/internal/event"
)

func submit(id event.JobID, tasks int) *event.Submit {
	return &event.Submit{Job: id, User: "alice", Queue: "normal", TasksMin: tasks, TasksMax: tasks, Command: []string{"true"}, Cwd: "/tmp"}
}

func place(id event.JobID, attempt int, host string, slots int) event.Placement {
	return event.Placement{Job: id, Attempt: attempt, Hosts: []event.HostAlloc{{Host: host, Slots: slots}}}
}

// gpuPlace places job id's first attempt on h1 with devices gpus.
func gpuPlace(id event.JobID, gpus ...int) event.Placement {
	p := place(id, 1, "h1", 1)
	p.Hosts[0].GPUs = gpus
	return p
}

// TestLife folds one log, worked by hand: job 1 runs and exits 0 (DONE);
// job 2 pends with a reason and a reservation, then is killed (EXIT,
// killed by bob); job 3 runs, its host is lost, it is requeued and runs
// again as attempt 2, which exits 3 (EXIT); host h2 registers, closes and
// is lost.
func TestLife(t *testing.T) {
	log := []event.Event{
		{Type: event.HostRegistered, Host: &event.Host{Name: "h1"}},
		{Type: event.HostRegistered, Host: &event.Host{Name: "h2"}},
		{At: 100, Type: event.JobSubmitted, Submit: submit(1, 2)},
		{At: 110, Type: event.JobSubmitted, Submit: submit(2, 8)},
		{At: 120, Type: event.JobSubmitted, Submit: submit(3, 1)},
		{At: 130, Type: event.CycleDecided, Cycle: &event.Cycle{Number: 1, Started: []event.Placement{place(1, 1, "h1", 2), place(3, 1, "h2", 1)},
			Pending:  []event.Pending{{Job: 2, Reason: "NotEnoughSlots"}},
			Reserved: []event.Reservation{{Job: 2, Start: 60, Hosts: []event.HostAlloc{{Host: "h1", Slots: 8}}}}}},
		{At: 140, Type: event.JobStarted, Started: &event.Started{Job: 1, Attempt: 1, Host: "h1", PID: 77}},
		{At: 150, Type: event.JobFinished, Finished: &event.Finished{Job: 1, Attempt: 1}},
		{At: 160, Type: event.JobKilled, Killed: &event.Killed{Job: 2, By: "bob"}},
		{At: 170, Type: event.HostClosed, Host: &event.Host{Name: "h2", Reason: "maintenance"}},
		{At: 180, Type: event.HostLost, Host: &event.Host{Name: "h2", Reason: "no heartbeat"}},
		{At: 190, Type: event.JobFinished, Finished: &event.Finished{Job: 3, Attempt: 1, Reason: "host lost", Requeued: true}},
		{At: 200, Type: event.CycleDecided, Cycle: &event.Cycle{Number: 2, Now: 1, Started: []event.Placement{place(3, 2, "h1", 1)}}},
		{At: 210, Type: event.JobFinished, Finished: &event.Finished{Job: 3, Attempt: 2, ExitCode: 3}},
	}
	s := New()
	for i := range log {
		log[i].Index = uint64(i + 1)
		if err := s.Apply(log[i]); err != nil {
			t.Fatalf("event %d: %v", i+1, err)
		}
	}
	type want struct {
		state              JobState
		attempt, exit      int
		start, end         int64
		reason, endReason  string
		killedBy           string
		events             string
		reserved, hasHosts bool
	}
	for id, w := range map[event.JobID]want{
		1: {state: Done, attempt: 1, start: 130, end: 150, events: "[3 6 7 8]", hasHosts: true},
		2: {state: Exit, end: 160, endReason: "killed", killedBy: "bob", events: "[4 9]"},
		3: {state: Exit, attempt: 2, exit: 3, start: 200, end: 210, events: "[5 6 12 13 14]", hasHosts: true},
	} {
		j := s.Job(id)
		got := want{j.State, j.Attempt, j.ExitCode, j.StartTime, j.EndTime, j.Reason, j.EndReason, j.KilledBy, fmt.Sprint(j.Events), j.Reserved != nil, j.Hosts != nil}
		if got != w {
			t.Errorf("job %d: %+v, want %+v", id, got, w)
		}
	}
	if s.Job(1).PID != 77 || s.Job(1).Host != "h1" {
		t.Errorf("job 1 pid %d host %q", s.Job(1).PID, s.Job(1).Host)
	}
	if got := s.Host("h1").Status() + " " + s.Host("h2").Status(); got != "ok unavail" {
		t.Errorf("hosts %s, want ok unavail", got)
	}
	if s.Index != 14 || s.Cycles != 2 || s.NextJob() != 4 {
		t.Errorf("index %d cycles %d next job %d", s.Index, s.Cycles, s.NextJob())
	}
}

// TestRefused: events that break a job's life are refused and change
// nothing.
func TestRefused(t *testing.T) {
	base := []event.Event{
		{Index: 1, Type: event.JobSubmitted, Submit: submit(1, 1)},
		{Index: 2, Type: event.JobSubmitted, Submit: submit(2, 1)},
		{Index: 3, Type: event.CycleDecided, Cycle: &event.Cycle{Number: 1, Started: []event.Placement{place(1, 1, "h1", 1)}}},
		{Index: 4, Type: event.JobStarted, Started: &event.Started{Job: 1, Attempt: 1, Host: "h1", PID: 9}},
	}
	s := New()
	for _, e := range base {
		if err := s.Apply(e); err != nil {
			t.Fatal(err)
		}
	}
	for name, e := range map[string]event.Event{
		"index gap":             {Index: 6, Type: event.JobKilled, Killed: &event.Killed{Job: 2, By: "a"}},
		"index repeated":        {Index: 4, Type: event.JobKilled, Killed: &event.Killed{Job: 2, By: "a"}},
		"submit skips an ID":    {Index: 5, Type: event.JobSubmitted, Submit: submit(4, 1)},
		"submit with no tasks":  {Index: 5, Type: event.JobSubmitted, Submit: submit(3, 0)},
		"start a running job":   {Index: 5, Type: event.CycleDecided, Cycle: &event.Cycle{Number: 2, Started: []event.Placement{place(1, 2, "h1", 1)}}},
		"wrong attempt":         {Index: 5, Type: event.CycleDecided, Cycle: &event.Cycle{Number: 2, Started: []event.Placement{place(2, 2, "h1", 1)}}},
		"start twice in one":    {Index: 5, Type: event.CycleDecided, Cycle: &event.Cycle{Number: 2, Started: []event.Placement{place(2, 1, "h1", 1), place(2, 1, "h2", 1)}}},
		"cycle number skipped":  {Index: 5, Type: event.CycleDecided, Cycle: &event.Cycle{Number: 3}},
		"agent start repeated":  {Index: 5, Type: event.JobStarted, Started: &event.Started{Job: 1, Attempt: 1, Host: "h1", PID: 9}},
		"agent start, pending":  {Index: 5, Type: event.JobStarted, Started: &event.Started{Job: 2, Attempt: 1, Host: "h1", PID: 9}},
		"finish old attempt":    {Index: 5, Type: event.JobFinished, Finished: &event.Finished{Job: 1, Attempt: 2}},
		"finish a pending job":  {Index: 5, Type: event.JobFinished, Finished: &event.Finished{Job: 2, Attempt: 0}},
		"kill an unknown job":   {Index: 5, Type: event.JobKilled, Killed: &event.Killed{Job: 7, By: "a"}},
		"payload of other type": {Index: 5, Type: event.JobKilled, Host: &event.Host{Name: "h"}},
		"a GPU given twice":     {Index: 5, Type: event.CycleDecided, Cycle: &event.Cycle{Number: 2, Started: []event.Placement{gpuPlace(2, 1, 1)}}},
		"GPUs out of order":     {Index: 5, Type: event.CycleDecided, Cycle: &event.Cycle{Number: 2, Started: []event.Placement{gpuPlace(2, 1, 0)}}},
		"a negative GPU":        {Index: 5, Type: event.CycleDecided, Cycle: &event.Cycle{Number: 2, Started: []event.Placement{gpuPlace(2, -1)}}},
		"GPU 64":                {Index: 5, Type: event.CycleDecided, Cycle: &event.Cycle{Number: 2, Started: []event.Placement{gpuPlace(2, 64)}}},
	} {
		before, _ := s.Marshal()
		if err := s.Apply(e); err == nil {
			t.Errorf("%s: applied", name)
		}
		if after, _ := s.Marshal(); !bytes.Equal(before, after) {
			t.Errorf("%s: the state changed", name)
		}
	}
	// A finished job cannot be killed.
	if err := s.Apply(event.Event{Index: 5, Type: event.JobFinished, Finished: &event.Finished{Job: 1, Attempt: 1}}); err != nil {
		t.Fatal(err)
	}
	if err := s.Apply(event.Event{Index: 6, Type: event.JobKilled, Killed: &event.Killed{Job: 1, By: "a"}}); err == nil {
		t.Error("killed a finished job")
	}
}

// genLog draws a valid log by running a small model of the server: each
// step submits, decides a cycle over some pending jobs, reports a start,
// finishes (or requeues) a running job, kills a job, or changes a host.
func genLog(t *rapid.T) []event.Event {
	s := New()
	var log []event.Event
	add := func(e event.Event) {
		e.Index = uint64(len(log) + 1)
		e.At = int64(e.Index) * 10
		if err := s.Apply(e); err != nil {
			t.Fatalf("generator made an invalid event: %v", err)
		}
		log = append(log, e)
	}
	hosts := []string{"a", "b"}
	for range rapid.IntRange(0, 40).Draw(t, "steps") {
		var pend, run []*Job
		for _, j := range s.Jobs {
			switch j.State {
			case Pend:
				pend = append(pend, j)
			case Run:
				run = append(run, j)
			}
		}
		switch rapid.IntRange(0, 5).Draw(t, "kind") {
		case 0:
			add(event.Event{Type: event.JobSubmitted, Submit: submit(s.NextJob(), rapid.IntRange(1, 4).Draw(t, "tasks"))})
		case 1:
			c := &event.Cycle{Number: s.Cycles + 1}
			for _, j := range pend {
				if rapid.Bool().Draw(t, "start") {
					c.Started = append(c.Started, place(j.Job, j.Attempt+1, rapid.SampledFrom(hosts).Draw(t, "host"), j.TasksMin))
				} else {
					c.Pending = append(c.Pending, event.Pending{Job: j.Job, Reason: "NotEnoughSlots", Detail: rapid.SampledFrom([]string{"", "mem"}).Draw(t, "detail")})
					if rapid.Bool().Draw(t, "reserve") {
						c.Reserved = append(c.Reserved, event.Reservation{Job: j.Job, Start: int64(rapid.IntRange(1, 99).Draw(t, "at")),
							Hosts: []event.HostAlloc{{Host: "a", Slots: j.TasksMin, Res: map[string]float64{"mem": 1}}}})
					}
				}
			}
			add(event.Event{Type: event.CycleDecided, Cycle: c})
		case 2:
			if len(run) > 0 {
				j := rapid.SampledFrom(run).Draw(t, "started")
				if j.PID == 0 {
					add(event.Event{Type: event.JobStarted, Started: &event.Started{Job: j.Job, Attempt: j.Attempt, Host: j.Hosts[0].Host, PID: 100 + int(j.Job)}})
				}
			}
		case 3:
			if len(run) > 0 {
				j := rapid.SampledFrom(run).Draw(t, "finished")
				add(event.Event{Type: event.JobFinished, Finished: &event.Finished{Job: j.Job, Attempt: j.Attempt,
					ExitCode: rapid.IntRange(0, 2).Draw(t, "exit"), Requeued: rapid.IntRange(0, 3).Draw(t, "requeue") == 0}})
			}
		case 4:
			if live := append(pend, run...); len(live) > 0 {
				add(event.Event{Type: event.JobKilled, Killed: &event.Killed{Job: rapid.SampledFrom(live).Draw(t, "killed").Job, By: "root"}})
			}
		case 5:
			ty := rapid.SampledFrom([]event.Type{event.HostRegistered, event.HostLost, event.HostClosed, event.HostOpened}).Draw(t, "host event")
			add(event.Event{Type: ty, Host: &event.Host{Name: rapid.SampledFrom(hosts).Draw(t, "host")}})
		}
	}
	return log
}

// TestPropertySnapshot: folding a log from a snapshot taken at any point
// gives the same state as folding it all, and a snapshot survives
// Marshal/Unmarshal exactly; the fold is deterministic.
func TestPropertySnapshot(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		log := genLog(t)
		full := New()
		for _, e := range log {
			if err := full.Apply(e); err != nil {
				t.Fatal(err)
			}
		}
		k := rapid.IntRange(0, len(log)).Draw(t, "snapshot at")
		part := New()
		for _, e := range log[:k] {
			if err := part.Apply(e); err != nil {
				t.Fatal(err)
			}
		}
		snap, err := part.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		restored, err := Unmarshal(snap)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range log[k:] {
			if err := restored.Apply(e); err != nil {
				t.Fatal(err)
			}
		}
		a, _ := full.Marshal()
		b, _ := restored.Marshal()
		if !bytes.Equal(a, b) {
			t.Fatalf("snapshot at %d: states differ\n%s\n%s", k, a, b)
		}
	})
}

// TestUnmarshalRefusesMisplacedJobs: a snapshot whose jobs are out of
// place or whose hosts are out of order is refused.
func TestUnmarshalRefusesMisplacedJobs(t *testing.T) {
	for _, bad := range []string{
		`{"jobs": [{"job": 2}]}`,
		`{"jobs": [null]}`,
		`{"hosts": [{"name": "b"}, {"name": "a"}]}`,
		`{"jobs": `,
	} {
		if _, err := Unmarshal([]byte(bad)); err == nil {
			t.Errorf("%s: accepted", bad)
		}
	}
}
