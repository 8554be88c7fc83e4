package dashboard

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/xce-sched/xce/cluster"
	"github.com/xce-sched/xce/internal/event"
	"github.com/xce-sched/xce/internal/live"
	"github.com/xce-sched/xce/internal/state"
)

// oracle counts what the fold keeps from the real state: jobs pending,
// running and suspended, slots held by running jobs, slots of the
// configuration in force.
func oracle(t *rapid.T, st *state.State) [5]int {
	var o [5]int
	for _, j := range st.Jobs {
		switch j.State {
		case state.Pend:
			o[0]++
		case state.Run:
			o[1]++
			for _, a := range j.Hosts {
				o[3] += a.Slots
			}
		case state.Susp:
			o[2]++
		}
	}
	if st.Config != "" {
		c, _, err := cluster.ParseConfig("c", []byte(st.Config))
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range c.Hosts {
			o[4] += h.Slots
		}
	}
	return o
}

// genEvent draws an event that st takes: a submit (maybe an array), a
// cycle that resumes, starts and preempts (suspend or requeue) jobs, a
// finish (maybe requeued) of a running, suspended or requeuing attempt,
// a kill, or a new configuration.
func genEvent(t *rapid.T, st *state.State) event.Event {
	var pend, run, susp, fin, live []*state.Job
	for _, j := range st.Jobs {
		switch {
		case j.State == state.Pend && !j.Requeuing:
			pend = append(pend, j)
		case j.State == state.Run:
			run = append(run, j)
		case j.State == state.Susp:
			susp = append(susp, j)
		}
		if j.State == state.Run || j.State == state.Susp || j.Requeuing {
			fin = append(fin, j)
		}
		if j.State == state.Pend || j.State == state.Run || j.State == state.Susp {
			live = append(live, j)
		}
	}
	switch rapid.IntRange(0, 5).Draw(t, "kind") {
	case 0:
		sub := &event.Submit{Job: st.NextJob(), User: "u", Queue: "normal", TasksMin: 1, TasksMax: 1, Command: []string{"true"}, Cwd: "/"}
		if rapid.Bool().Draw(t, "array") {
			sub.Array = fmt.Sprintf("1-%d", rapid.IntRange(1, 4).Draw(t, "elements"))
		}
		return event.Event{Type: event.JobSubmitted, Submit: sub}
	case 1:
		c := &event.Cycle{Number: st.Cycles + 1}
		resumed := map[int64]bool{}
		for _, j := range susp {
			if rapid.Bool().Draw(t, "resume") {
				c.Resumed = append(c.Resumed, j.Job)
				resumed[j.Job] = true
			}
		}
		for _, j := range pend {
			if rapid.Bool().Draw(t, "start") {
				var hosts []event.HostAlloc
				for h := range rapid.IntRange(1, 3).Draw(t, "hosts") {
					hosts = append(hosts, event.HostAlloc{Host: fmt.Sprintf("h%d", h+1), Slots: rapid.IntRange(1, 4).Draw(t, "slots")})
				}
				c.Started = append(c.Started, event.Placement{Job: j.Job, Attempt: j.Attempt + 1, Hosts: hosts})
			}
		}
		started := map[int64]bool{}
		for _, p := range c.Started {
			started[p.Job] = true
		}
		for _, j := range st.Jobs {
			if j.State == state.Pend && !started[j.Job] && rapid.Bool().Draw(t, "reason") {
				c.Pending = append(c.Pending, event.Pending{Job: j.Job, Reason: rapid.SampledFrom([]string{"NotEnoughSlots", "LimitReached"}).Draw(t, "code"),
					Detail: rapid.SampledFrom([]string{"", "L1"}).Draw(t, "detail")})
			}
		}
		for _, j := range append(run, susp...) {
			if (j.State == state.Run || resumed[j.Job]) && rapid.Bool().Draw(t, "preempt") {
				action := rapid.SampledFrom([]string{event.PreemptSuspend, event.PreemptRequeue}).Draw(t, "action")
				c.Preempted = append(c.Preempted, event.Preemption{Job: j.Job, Attempt: j.Attempt, Action: action})
			}
		}
		return event.Event{Type: event.CycleDecided, Cycle: c}
	case 2:
		if len(fin) > 0 {
			j := rapid.SampledFrom(fin).Draw(t, "finish")
			return event.Event{Type: event.JobFinished, Finished: &event.Finished{Job: j.Job, Attempt: j.Attempt,
				ExitCode: rapid.IntRange(0, 1).Draw(t, "exit"), Requeued: rapid.Bool().Draw(t, "requeued")}}
		}
	case 3:
		if len(live) > 0 {
			j := rapid.SampledFrom(live).Draw(t, "kill")
			return event.Event{Type: event.JobKilled, Killed: &event.Killed{Job: j.Job, By: "u"}}
		}
	case 4:
		text := fmt.Sprintf("hosts:\n  - {name: h1, slots: %d}\n  - {name: h2, slots: %d}\n  - {name: h3, slots: 4}\nqueues: [{name: normal}]\n",
			rapid.IntRange(1, 8).Draw(t, "h1"), rapid.IntRange(1, 8).Draw(t, "h2"))
		return event.Event{Type: event.ConfigReloaded, Config: &event.Config{Text: text}}
	}
	typ := rapid.SampledFrom([]event.Type{event.HostRegistered, event.HostLost, event.HostClosed, event.HostOpened}).Draw(t, "host event")
	return event.Event{Type: typ, Host: &event.Host{Name: rapid.SampledFrom([]string{"h1", "h2", "h3"}).Draw(t, "host")}}
}

// TestFoldMatchesState: after every event of random logs that the state
// takes (submits, arrays, cycles with resumes, starts and preemptions,
// finishes and requeues, kills, new configurations), the history's fold
// counts what the state holds.
func TestFoldMatchesState(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		st := state.New()
		var f fold
		for i := range rapid.IntRange(1, 60).Draw(t, "events") {
			e := genEvent(t, st)
			e.Index, e.At = st.Index+1, int64(i)*1e9
			if err := st.Apply(e); err != nil {
				t.Fatalf("the generator made an event the state refuses: %v", err)
			}
			f.apply(&e)
			want := oracle(t, st)
			got := [5]int{f.pend, f.run, f.susp, f.used, f.capacity}
			if got != want {
				t.Fatalf("after event %d (%s): fold %v, state %v (pend, run, susp, used, capacity)", e.Index, e.Type, got, want)
			}
		}
	})
}

// logOf folds events (times in seconds) into a history.
func logOf(events ...event.Event) *history {
	h := newHistory()
	for i := range events {
		events[i].Index = uint64(i + 1)
		h.add(&events[i])
	}
	return h
}

func at(sec int64, e event.Event) event.Event { e.At = sec*1e9 + 1_000_000_000_000_000_000; return e }

// TestSeries, worked by hand: 4 slots from t=0; a job submitted at 0 pends
// until a cycle starts it on 2 slots at 2 s; it ends at 5 s; asked at 6
// s, one point a second: pending 1 1 0 0 0 0, running 0 0 1 1 1 0, used
// 0 0 2 2 2 0, capacity 4 throughout. Half a second later the last point
// is the mean over the half second gone by.
func TestSeries(t *testing.T) {
	cfg := "hosts: [{name: h1, slots: 4}]\nqueues: [{name: normal}]\n"
	h := logOf(
		at(0, event.Event{Type: event.ConfigReloaded, Config: &event.Config{Text: cfg}}),
		at(0, event.Event{Type: event.JobSubmitted, Submit: &event.Submit{Job: 1, User: "u", Queue: "normal", TasksMin: 2, TasksMax: 2, Cwd: "/", Command: []string{"x"}}}),
		at(2, event.Event{Type: event.CycleDecided, Cycle: &event.Cycle{Number: 1, Started: []event.Placement{{Job: 1, Attempt: 1, Hosts: []event.HostAlloc{{Host: "h1", Slots: 2}}}}}}),
		at(5, event.Event{Type: event.JobFinished, Finished: &event.Finished{Job: 1, Attempt: 1}}),
	)
	base := int64(1_000_000_000_000_000_000)
	s := h.query(base + 6e9)
	want := Series{Start: 1e9, Step: 1, Now: 1e9 + 6, Pending: []float64{1, 1, 0, 0, 0, 0}, Running: []float64{0, 0, 1, 1, 1, 0},
		Used: []float64{0, 0, 2, 2, 2, 0}, Capacity: []float64{4, 4, 4, 4, 4, 4}}
	if fmt.Sprint(s.Pending, s.Running, s.Used, s.Capacity, s.Start, s.Step, s.Now) !=
		fmt.Sprint(want.Pending, want.Running, want.Used, want.Capacity, want.Start, want.Step, want.Now) {
		t.Errorf("series %+v\nwant %+v", s, want)
	}
	// Asking does not change the series.
	if again := h.query(base + 6e9); fmt.Sprint(again) != fmt.Sprint(s) {
		t.Errorf("a second query differs: %+v", again)
	}
	s = h.query(base + 4_500_000_000)
	if len(s.Used) != 5 || s.Used[4] != 2 {
		t.Errorf("asked at 4.5 s: used %v, want 5 points, the last 2 (its half second)", s.Used)
	}
}

// TestSeriesCoarsen: 3,000 s of history do not fit 1,024 one-second
// points; at a step of 4 s they do (750 points). Slots used 2 from 0 to
// 2 s, then none: the first point is 2*2/4 = 1.
func TestSeriesCoarsen(t *testing.T) {
	cfg := "hosts: [{name: h1, slots: 4}]\nqueues: [{name: normal}]\n"
	h := logOf(
		at(0, event.Event{Type: event.ConfigReloaded, Config: &event.Config{Text: cfg}}),
		at(0, event.Event{Type: event.JobSubmitted, Submit: &event.Submit{Job: 1, User: "u", Queue: "normal", TasksMin: 2, TasksMax: 2, Cwd: "/", Command: []string{"x"}}}),
		at(0, event.Event{Type: event.CycleDecided, Cycle: &event.Cycle{Number: 1, Started: []event.Placement{{Job: 1, Attempt: 1, Hosts: []event.HostAlloc{{Host: "h1", Slots: 2}}}}}}),
		at(2, event.Event{Type: event.JobFinished, Finished: &event.Finished{Job: 1, Attempt: 1}}),
		at(3000, event.Event{Type: event.HostRegistered, Host: &event.Host{Name: "h1"}}),
	)
	s := h.query(1_000_000_000_000_000_000 + 3000e9)
	if s.Step != 4 || len(s.Used) != 750 || s.Used[0] != 1 || s.Used[1] != 0 || s.Capacity[749] != 4 {
		t.Errorf("step %v, %d points, used[0] %v used[1] %v capacity[749] %v; want 4, 750, 1, 0, 4", s.Step, len(s.Used), s.Used[0], s.Used[1], s.Capacity[749])
	}
	_ = time.Second
}

// TestIndexMatchesState: after every event of random logs (as
// TestFoldMatchesState), the views' index shows each job as the state
// holds it (state, reason, detail, slots, hosts, start, end, exit code),
// each host's status and the slots held on it, and the counts; and an
// index copied from the state at any point is the one folded up to it.
func TestIndexMatchesState(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		st := state.New()
		ix := &index{ok: true, status: map[string]hostState{}, users: map[string]int{}, counts: map[string]int{}}
		ix.config(&cluster.Cluster{})
		for i := range rapid.IntRange(1, 60).Draw(t, "events") {
			e := genEvent(t, st)
			e.Index, e.At = st.Index+1, int64(i+1)*1e9
			if err := st.Apply(e); err != nil {
				t.Fatalf("the generator made an event the state refuses: %v", err)
			}
			ix.apply(&e)
			if !ix.ok {
				t.Fatalf("event %d (%s): the index lost step", e.Index, e.Type)
			}
			want := fromState(t, st)
			if got := describeIndex(ix); got != want {
				t.Fatalf("after event %d (%s):\nindex %s\nstate %s", e.Index, e.Type, got, want)
			}
		}
	})
}

// fromState describes what the index should hold: an index copied from
// st, checked against st's own fields.
func fromState(t *rapid.T, st *state.State) string {
	var c *cluster.Cluster
	if st.Config != "" {
		var err error
		if c, _, err = cluster.ParseConfig("c", []byte(st.Config)); err != nil {
			t.Fatal(err)
		}
	} else {
		c = &cluster.Cluster{}
	}
	ix := &index{}
	ix.load(&live.Core{Cluster: c, State: st})
	used := map[string]int{}
	for _, j := range st.Jobs {
		r := ix.rows[j.Job-1]
		slots := 0
		for _, a := range j.Hosts {
			slots += a.Slots
			if j.State == state.Run {
				used[a.Host] += a.Slots
			}
		}
		if r.State != string(j.State) || r.Reason != j.Reason || r.Detail != j.Detail || r.Slots != slots ||
			r.Start != j.StartTime/1e9 || r.End != j.EndTime/1e9 || r.ExitCode != j.ExitCode {
			t.Fatalf("the copy of job %d differs from the state: %+v vs %+v", j.Job, r, j)
		}
	}
	for _, h := range ix.hosts {
		if h.Used != used[h.Name] {
			t.Fatalf("host %s: %d used in the copy, %d in the state", h.Name, h.Used, used[h.Name])
		}
	}
	return describeIndex(ix)
}

// describeIndex renders what the views read of ix.
func describeIndex(ix *index) string {
	var b strings.Builder
	for _, r := range ix.rows {
		fmt.Fprintf(&b, "%d:%s/%s/%s/%d/%v/%d-%d/%d ", r.Job, r.State, r.Reason, r.Detail, r.Slots, r.Hosts, r.Start, r.End, r.ExitCode)
	}
	for _, h := range ix.hosts {
		fmt.Fprintf(&b, "%s:%s:%d/%d ", h.Name, h.Status, h.Used, h.Slots)
	}
	fmt.Fprintf(&b, "used %d of %d, counts PEND %d RUN %d SUSP %d DONE %d EXIT %d, users %v",
		ix.used, ix.slots, ix.counts["PEND"], ix.counts["RUN"], ix.counts["SUSP"], ix.counts["DONE"], ix.counts["EXIT"], ix.userList())
	return b.String()
}
