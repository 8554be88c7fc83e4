package live

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/xce-sched/xce/cluster"
	"github.com/xce-sched/xce/framework/plugins"
	"github.com/xce-sched/xce/internal/event"
	"github.com/xce-sched/xce/internal/state"
)

const config = `
hosts:
  - {name: h1, slots: 4, resources: {mem: 1000}}
  - {name: h2, slots: 4, resources: {mem: 1000}}
shared: {lic: 2}
queues:
  - {name: normal, policy: firstfit}
`

// harness drives a Core as the server would: every event checked, given
// the next index, then applied; cycles committed.
type harness struct {
	t *testing.T
	k *Core
}

func (h *harness) apply(e event.Event) {
	h.t.Helper()
	e.Index = h.k.State.Index + 1
	if err := h.k.Apply(e); err != nil {
		h.t.Fatalf("%s: %v", e.Type, err)
	}
}

func (h *harness) cycle(sec int64) *event.Cycle {
	h.t.Helper()
	e, ok, err := h.k.Cycle(context.Background(), sec*1e9)
	if err != nil {
		h.t.Fatal(err)
	}
	if !ok {
		return &event.Cycle{} // nothing new to record
	}
	e.Index = h.k.State.Index + 1
	if err := h.k.Commit(e); err != nil {
		h.t.Fatal(err)
	}
	return e.Cycle
}

func sub(id event.JobID, tasks int, rr string) *event.Submit {
	return &event.Submit{Job: id, User: "alice", Queue: "normal", TasksMin: tasks, TasksMax: tasks, ResReq: rr, Command: []string{"true"}, Cwd: "/"}
}

func newCore(t *testing.T, st *state.State) *Core {
	t.Helper()
	_, k := coreOf(t, config, st)
	return k
}

// coreOf returns the configuration text parses to and a core of it over st.
func coreOf(t *testing.T, text string, st *state.State) (*cluster.Cluster, *Core) {
	t.Helper()
	c, err := cluster.Parse("config.yaml", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	k, err := New(c, st, plugins.NewInTreeRegistry())
	if err != nil {
		t.Fatal(err)
	}
	return c, k
}

// TestCoreLife, worked by hand on hosts h1 and h2 (4 slots, 1,000 MB
// each) and a license of 2, firstfit:
//   - only h1's agent registered; job 1 (2 tasks, 100 MB, one license)
//     starts on h1×2 holding 100 MB (mem is reserved per host) and the
//     license; job 2 (4
//     tasks on one host) pends: h1 has 2 slots left and h2 is unavail;
//   - the server restarts (a new Core from the state's snapshot): job 1
//     still holds what it held, so job 3 (two licenses) pends with
//     SharedResource; h2 registers and job 2 starts on h2×4;
//   - job 1 finishes: job 3 starts on h1×1 with both licenses;
//   - job 4 (8 tasks) pends, is killed, and is gone from the scheduler.
func TestCoreLife(t *testing.T) {
	h := &harness{t: t, k: newCore(t, state.New())}
	h.apply(event.Event{Type: event.HostRegistered, Host: &event.Host{Name: "h1"}})
	h.apply(event.Event{At: 1e9, Type: event.JobSubmitted, Submit: sub(1, 2, "rusage[mem=100:lic=1]")})
	h.apply(event.Event{At: 2e9, Type: event.JobSubmitted, Submit: sub(2, 4, "span[hosts=1]")})
	c := h.cycle(10)
	want := &event.Cycle{Number: 1, Now: 10,
		Started: []event.Placement{{Job: 1, Attempt: 1, Hosts: []event.HostAlloc{{Host: "h1", Slots: 2, Res: map[string]float64{"mem": 100}}}, Shared: map[string]float64{"lic": 1}}},
		Pending: []event.Pending{{Job: 2, Reason: "NotEnoughSlots"}}}
	if !reflect.DeepEqual(c, want) {
		t.Fatalf("cycle 1:\n got %+v\nwant %+v", c, want)
	}

	snap, err := h.k.State.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	st, err := state.Unmarshal(snap)
	if err != nil {
		t.Fatal(err)
	}
	h = &harness{t: t, k: newCore(t, st)}
	h.apply(event.Event{At: 11e9, Type: event.JobSubmitted, Submit: sub(3, 1, "rusage[lic=2]")})
	h.apply(event.Event{At: 12e9, Type: event.HostRegistered, Host: &event.Host{Name: "h2"}})
	c = h.cycle(12)
	want = &event.Cycle{Number: 2, Now: 12,
		Started: []event.Placement{{Job: 2, Attempt: 1, Hosts: []event.HostAlloc{{Host: "h2", Slots: 4}}}},
		Pending: []event.Pending{{Job: 3, Reason: "SharedResource", Detail: "lic"}}}
	if !reflect.DeepEqual(c, want) {
		t.Fatalf("cycle 2 (after the restart):\n got %+v\nwant %+v", c, want)
	}

	h.apply(event.Event{At: 13e9, Type: event.JobFinished, Finished: &event.Finished{Job: 1, Attempt: 1}})
	h.apply(event.Event{At: 13e9, Type: event.JobSubmitted, Submit: sub(4, 8, "")})
	c = h.cycle(13)
	want = &event.Cycle{Number: 3, Now: 13,
		Started: []event.Placement{{Job: 3, Attempt: 1, Hosts: []event.HostAlloc{{Host: "h1", Slots: 1}}, Shared: map[string]float64{"lic": 2}}},
		Pending: []event.Pending{{Job: 4, Reason: "NotEnoughSlots"}}}
	if !reflect.DeepEqual(c, want) {
		t.Fatalf("cycle 3:\n got %+v\nwant %+v", c, want)
	}
	h.apply(event.Event{At: 14e9, Type: event.JobKilled, Killed: &event.Killed{Job: 4, By: "alice"}})
	if c := h.cycle(14); len(c.Pending)+len(c.Started) != 0 {
		t.Errorf("cycle 4 considered %+v, want nothing", c)
	}
	if j := h.k.State.Job(4); j.State != state.Exit || j.EndReason != "killed" {
		t.Errorf("job 4: %s %q", j.State, j.EndReason)
	}
	if got := h.k.Cluster.Hosts[0].Status; got != cluster.HostOK {
		t.Errorf("h1 %v", got)
	}
}

// TestCoreRefuses: a submit to an unknown queue, with a malformed or
// unknown resource requirement, and a cycle event from outside are
// refused, and nothing changes.
func TestCoreRefuses(t *testing.T) {
	k := newCore(t, state.New())
	for name, e := range map[string]event.Event{
		"unknown queue":     {Index: 1, Type: event.JobSubmitted, Submit: &event.Submit{Job: 1, Queue: "nope", TasksMin: 1, TasksMax: 1}},
		"malformed resreq":  {Index: 1, Type: event.JobSubmitted, Submit: sub(1, 1, "select[")},
		"unknown attribute": {Index: 1, Type: event.JobSubmitted, Submit: sub(1, 1, "select[gpus > 1]")},
		"unknown resource":  {Index: 1, Type: event.JobSubmitted, Submit: sub(1, 1, "rusage[gpu=1]")},
		"a cycle":           {Index: 1, Type: event.CycleDecided, Cycle: &event.Cycle{Number: 1}},
	} {
		if err := k.Apply(e); err == nil {
			t.Errorf("%s: applied", name)
		}
	}
	if k.State.Index != 0 || len(k.Sched.Jobs) != 0 {
		t.Errorf("state index %d, %d jobs", k.State.Index, len(k.Sched.Jobs))
	}
}

// TestPrecheck: the submits of one request are taken all or none: a bad
// one anywhere refuses them all before any is applied, as do IDs that do
// not follow on and an event that is not a submit.
func TestPrecheck(t *testing.T) {
	k := newCore(t, state.New())
	ev := func(s *event.Submit) event.Event { return event.Event{Type: event.JobSubmitted, Submit: s} }
	if err := k.Precheck([]event.Event{ev(sub(1, 1, "")), ev(sub(2, 2, "span[hosts=1]")), ev(sub(3, 1, ""))}); err != nil {
		t.Errorf("a good pack: %v", err)
	}
	for name, evs := range map[string][]event.Event{
		"bad resreq last":  {ev(sub(1, 1, "")), ev(sub(2, 1, "")), ev(sub(3, 1, "rusage[gpu=1]"))},
		"IDs skip":         {ev(sub(1, 1, "")), ev(sub(3, 1, ""))},
		"IDs not the next": {ev(sub(2, 1, "")), ev(sub(3, 1, ""))},
		"bad task count":   {ev(sub(1, 1, "")), ev(sub(2, 0, ""))},
		"not a submit":     {ev(sub(1, 1, "")), {Type: event.JobKilled, Killed: &event.Killed{Job: 1}}},
	} {
		if err := k.Precheck(evs); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// TestCycleRecordsChangesOnly: a cycle records a pending job only when its
// reason, detail or reservation changed; a cycle that changed nothing
// records nothing. Job 1 (8 tasks on a cluster of 4-slot hosts, one up)
// pends NotEnoughSlots in cycle 1; cycle 2 has nothing new and is not
// recorded; once h2 is up, 4 + 4 slots fit and cycle 3 starts the job (the
// state's second recorded cycle).
func TestCycleRecordsChangesOnly(t *testing.T) {
	h := &harness{t: t, k: newCore(t, state.New())}
	h.apply(event.Event{Type: event.HostRegistered, Host: &event.Host{Name: "h1"}})
	h.apply(event.Event{At: 1e9, Type: event.JobSubmitted, Submit: sub(1, 8, "")})
	if c := h.cycle(1); len(c.Pending) != 1 || c.Pending[0].Reason != "NotEnoughSlots" {
		t.Fatalf("cycle 1: %+v", c)
	}
	if _, ok, err := h.k.Cycle(context.Background(), 2e9); err != nil || ok {
		t.Errorf("a cycle with nothing new: record %v, %v", ok, err)
	}
	h.apply(event.Event{At: 3e9, Type: event.HostRegistered, Host: &event.Host{Name: "h2"}})
	c := h.cycle(3)
	if len(c.Started) != 1 || c.Number != 2 || len(c.Pending) != 0 {
		t.Errorf("cycle 3: %+v", c)
	}
}

// TestReconfigure: a new configuration adds a queue and a host without
// losing or restarting anything (the running job keeps its slots, the
// pending one stays pending); one that drops the host a job runs on, or
// the queue a job waits in, is refused and changes nothing.
func TestReconfigure(t *testing.T) {
	h := &harness{t: t, k: newCore(t, state.New())}
	h.apply(event.Event{Type: event.HostRegistered, Host: &event.Host{Name: "h1"}})
	h.apply(event.Event{At: 1e9, Type: event.JobSubmitted, Submit: sub(1, 4, "")})
	h.apply(event.Event{At: 1e9, Type: event.JobSubmitted, Submit: sub(2, 4, "")})
	h.cycle(1) // job 1 on h1×4, job 2 pends (h2 is unavail)
	bigger := config + "  - {name: long, priority: 5}\n"
	bigger = strings.Replace(bigger, "  - {name: h2, slots: 4, resources: {mem: 1000}}\n",
		"  - {name: h2, slots: 4, resources: {mem: 1000}}\n  - {name: h3, slots: 8, resources: {mem: 1000}}\n", 1)
	h.apply(event.Event{At: 2e9, Type: event.ConfigReloaded, Config: &event.Config{Text: bigger}})
	if j := h.k.State.Job(1); j.State != state.Run || j.Attempt != 1 {
		t.Errorf("job 1 after the reload: %s attempt %d", j.State, j.Attempt)
	}
	if len(h.k.Cluster.Hosts) != 3 || len(h.k.Cluster.Queues) != 2 {
		t.Fatalf("%d hosts, %d queues", len(h.k.Cluster.Hosts), len(h.k.Cluster.Queues))
	}
	s3 := sub(3, 1, "")
	s3.Queue = "long"
	h.apply(event.Event{At: 3e9, Type: event.JobSubmitted, Submit: s3})
	h.apply(event.Event{At: 3e9, Type: event.HostRegistered, Host: &event.Host{Name: "h3"}})
	// h1 is full with job 1; h3 (8 slots) takes job 3 (queue long, priority
	// 5, first) and job 2.
	c := h.cycle(3)
	if len(c.Started) != 2 || c.Started[0].Job != 3 || c.Started[1].Job != 2 || c.Started[1].Hosts[0].Host != "h3" {
		t.Errorf("cycle after the reload: %+v", c.Started)
	}
	before, _ := h.k.State.Marshal()
	for name, text := range map[string]string{
		"host h1 gone (job 1 runs there)":  strings.Replace(bigger, "  - {name: h1, slots: 4, resources: {mem: 1000}}\n", "", 1),
		"queue long gone (job 3 is in it)": strings.Replace(bigger, "  - {name: long, priority: 5}\n", "", 1),
		"not a configuration":              "hosts: [",
	} {
		e := event.Event{Index: h.k.State.Index + 1, At: 4e9, Type: event.ConfigReloaded, Config: &event.Config{Text: text}}
		if err := h.k.Apply(e); err == nil {
			t.Errorf("%s: applied", name)
		}
	}
	if after, _ := h.k.State.Marshal(); string(after) != string(before) {
		t.Error("a refused configuration changed the state")
	}
}

// TestRestartKeepsReservations: a conservative queue's reservations are
// kept across a restart (a new Core from the state). One host of 4
// slots; job 1 (4 tasks, -W 100, so 101 s with LiveSlack) starts at 10;
// job 2 (4 tasks, -W 50: 51 s) pends with a reservation at 111 on h1×4,
// job 3 (2 tasks, -W 50) at 162.
// The new core's scheduler holds both before any cycle, and its first
// cycle starts nothing and changes no reason.
func TestRestartKeepsReservations(t *testing.T) {
	c, k := coreOf(t, "hosts: [{name: h1, slots: 4}]\nqueues: [{name: normal, policy: conservative}]\n", state.New())
	h := &harness{t: t, k: k}
	h.apply(event.Event{Type: event.HostRegistered, At: 1e9, Host: &event.Host{Name: "h1"}})
	for i, est := range []int64{100, 50, 50} {
		s := sub(event.JobID(i+1), []int{4, 4, 2}[i], "")
		s.Estimate = est
		h.apply(event.Event{Type: event.JobSubmitted, At: int64(10+i) * 1e9, Submit: s})
		h.cycle(int64(10 + i))
	}
	for id, start := range map[event.JobID]int64{2: 111, 3: 162} {
		if r := k.State.Job(id).Reserved; r == nil || r.Start != start {
			t.Fatalf("job %d: reservation %+v in the state, want from %d", id, r, start)
		}
	}
	k2, err := New(c, k.State, plugins.NewInTreeRegistry())
	if err != nil {
		t.Fatal(err)
	}
	for id, want := range map[event.JobID][2]int64{2: {111, 162}, 3: {162, 213}} {
		r := k2.jobs[id].Reserved
		if r == nil || r.Start != want[0] || r.End != want[1] || len(r.Alloc.Hosts) != 1 || r.Alloc.Hosts[0].Slots != k2.jobs[id].Spec.TasksMin {
			t.Errorf("job %d after the restart: reservation %+v, want %v on h1", id, r, want)
		}
	}
	// It checks the restored reservations (a change it records), and
	// decides nothing new.
	if e, _, err := k2.Cycle(context.Background(), 13e9); err != nil || len(e.Cycle.Started)+len(e.Cycle.Pending) > 0 {
		t.Errorf("the first cycle after the restart: %+v, %v; want no start and no changed reason", e.Cycle, err)
	}
}

// TestCoreExclusive, worked by hand on one host of 4 slots: in a queue
// that takes exclusive jobs, job 1 (-x, one task) starts on the idle host
// and job 2 (one task) pends with ExclusiveHost; in one that does not, -x
// is refused at submit.
func TestCoreExclusive(t *testing.T) {
	_, k := coreOf(t, "hosts:\n  - {name: h1, slots: 4}\nqueues:\n  - {name: normal, policy: firstfit, exclusive: true}\n  - {name: plain}\n", state.New())
	h := &harness{t: t, k: k}
	h.apply(event.Event{At: 1e9, Type: event.HostRegistered, Host: &event.Host{Name: "h1"}})
	x := sub(1, 1, "")
	x.Exclusive = true
	h.apply(event.Event{At: 1e9, Type: event.JobSubmitted, Submit: x})
	h.apply(event.Event{At: 1e9, Type: event.JobSubmitted, Submit: sub(2, 1, "")})
	got := h.cycle(1)
	want := &event.Cycle{Number: 1, Now: 1,
		Started: []event.Placement{{Job: 1, Attempt: 1, Hosts: []event.HostAlloc{{Host: "h1", Slots: 1}}}},
		Pending: []event.Pending{{Job: 2, Reason: "ExclusiveHost"}}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("cycle:\n got %+v\nwant %+v", got, want)
	}
	bad := sub(3, 1, "")
	bad.Exclusive, bad.Queue = true, "plain"
	if err := k.Check(event.Event{Index: k.State.Index + 1, At: 2e9, Type: event.JobSubmitted, Submit: bad}); err == nil || !strings.Contains(err.Error(), "queue plain does not take exclusive jobs") {
		t.Errorf("-x in a queue that takes none: %v", err)
	}
}
