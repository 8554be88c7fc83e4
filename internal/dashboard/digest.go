package dashboard

import (
	"cmp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/xce-sched/xce/cluster"
	"github.com/xce-sched/xce/internal/event"
	"github.com/xce-sched/xce/internal/live"
	"github.com/xce-sched/xce/internal/state"
	"github.com/xce-sched/xce/jobarray"
)

// row is one job as the jobs view lists it. Hosts is an event's own
// slice (events are never changed once durable).
type row struct {
	Job, ID, Index           int64
	Name, User, Queue, State string
	Reason, Detail           string
	Slots                    int
	Hosts                    []event.HostAlloc
	Submit, Start, End       int64 // Unix seconds; 0: not yet
	ExitCode                 int
	requeuing                bool
}

func (r *row) ended() bool  { return r.State == string(state.Done) || r.State == string(state.Exit) }
func (r *row) active() bool { return !r.ended() }

// hostRow is one host of the configuration as the hosts view shows it.
type hostRow struct {
	Name   string
	Slots  int
	Used   int
	Status string // ok, closed, unavail
}

// hostState is what the log says of a host: its agent up, closed.
type hostState struct{ up, closed bool }

func (s hostState) status() string {
	switch {
	case !s.up:
		return "unavail"
	case s.closed:
		return "closed"
	}
	return "ok"
}

// index is the dashboard's own copy of what the views list: copied once
// from the state (under the loop's read lock), then kept in step by
// folding the events the loop announces (server.Observer), so that a
// change costs the loop nothing and a request reads no more of the
// state than the jobs the events touched. It folds as state.State.Apply
// does (checked against it by TestIndexMatchesState). When events were
// dropped (nobody read the views while more than feedSize batches
// came), it copies from the state again.
type index struct {
	mu     sync.RWMutex
	ok     bool   // copied, and in step
	at     uint64 // the last event folded
	rows   []row  // job ID - 1
	hosts  []hostRow
	byName map[string]int       // host name → hosts position
	status map[string]hostState // every host the log names
	queues []string
	users  map[string]int // jobs of each user
	counts map[string]int // jobs in each state
	used   int
	slots  int
	// version changes with every change; the sorted orders are of one.
	version uint64

	ordersMu sync.Mutex
	ordersAt uint64
	orders   map[string][]int32
}

// feedSize bounds the batches of events waiting to be folded.
const feedSize = 4096

// read runs fn on the index brought up to date: the events announced
// since are folded (or, after a drop, the state copied again), then fn
// reads under the index's read lock.
func (h *Handler) read(fn func(ix *index)) {
	ix := h.ix
	ix.mu.Lock()
	for more := true; more; {
		select {
		case b := <-h.feed:
			for i := range b {
				ix.apply(&b[i])
			}
		default:
			more = false
		}
	}
	if h.dropped.Swap(false) {
		ix.ok = false
	}
	if !ix.ok {
		h.o.View(ix.load)
	}
	ix.mu.Unlock()
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	fn(ix)
}

// announce queues events the loop applied, for read to fold; it never
// blocks (a full queue drops them, and the next read copies anew).
func (h *Handler) announce(events []event.Event) {
	select {
	case h.feed <- events:
	default:
		h.dropped.Store(true)
	}
}

// load copies k's jobs and hosts. The caller holds the loop's read lock
// and the index's lock.
func (ix *index) load(k *live.Core) {
	ix.at, ix.ok = k.State.Index, true
	ix.rows = make([]row, len(k.State.Jobs))
	ix.status = map[string]hostState{}
	ix.users, ix.counts = map[string]int{}, map[string]int{}
	ix.used = 0
	for _, h := range k.State.Hosts {
		ix.status[h.Name] = hostState{up: h.Up, closed: h.Closed}
	}
	ix.config(k.Cluster)
	sec := func(ns int64) int64 { return ns / 1e9 }
	for i, j := range k.State.Jobs {
		id, idx := j.Job, int64(0)
		if j.ArrayJob != 0 {
			id, idx = j.ArrayJob, j.ArrayIndex
		}
		ix.rows[i] = row{Job: j.Job, ID: id, Index: idx, Name: j.Name, User: j.User, Queue: j.Queue, State: string(j.State),
			Reason: j.Reason, Detail: j.Detail, Slots: slotsOf(j.Hosts), Hosts: j.Hosts, Submit: sec(j.SubmitTime),
			Start: sec(j.StartTime), End: sec(j.EndTime), ExitCode: j.ExitCode, requeuing: j.Requeuing}
		ix.users[j.User]++
		ix.counts[string(j.State)]++
		if j.State == state.Run {
			ix.hold(j.Hosts, 1)
		}
	}
	ix.version++
}

// config takes the hosts and queues of configuration c; the slots held
// on each host are counted again from the running jobs.
func (ix *index) config(c *cluster.Cluster) {
	ix.hosts, ix.byName, ix.queues, ix.slots = nil, map[string]int{}, nil, 0
	for i, h := range c.Hosts {
		ix.hosts = append(ix.hosts, hostRow{Name: h.Name, Slots: h.Slots, Status: ix.status[h.Name].status()})
		ix.byName[h.Name] = i
		ix.slots += h.Slots
	}
	for _, q := range c.Queues {
		ix.queues = append(ix.queues, q.Name)
	}
	ix.used = 0
	for i := range ix.rows {
		if ix.rows[i].State == string(state.Run) {
			ix.hold(ix.rows[i].Hosts, 1)
		}
	}
}

func slotsOf(hosts []event.HostAlloc) int {
	n := 0
	for _, a := range hosts {
		n += a.Slots
	}
	return n
}

// hold adds (sign 1) or takes away (-1) what a running job holds on its
// hosts.
func (ix *index) hold(hosts []event.HostAlloc, sign int) {
	for _, a := range hosts {
		if i, ok := ix.byName[a.Host]; ok {
			ix.hosts[i].Used += sign * a.Slots
		}
		ix.used += sign * a.Slots
	}
}

// setState moves r to state s, keeping the counts and the slots held.
func (ix *index) setState(r *row, s state.JobState) {
	if r.State == string(state.Run) {
		ix.hold(r.Hosts, -1)
	}
	ix.counts[r.State]--
	r.State = string(s)
	ix.counts[r.State]++
	if s == state.Run {
		ix.hold(r.Hosts, 1)
	}
}

func (ix *index) row(id event.JobID) *row {
	if id < 1 || id > int64(len(ix.rows)) {
		return nil
	}
	return &ix.rows[id-1]
}

// apply folds e as state.State.Apply does for what the views show. An
// event out of order (one was dropped) makes the index copy anew.
func (ix *index) apply(e *event.Event) {
	if !ix.ok || e.Index <= ix.at {
		return
	}
	if e.Index != ix.at+1 {
		ix.ok = false
		return
	}
	ix.at = e.Index
	ix.version++
	sec := e.At / 1e9
	switch e.Type {
	case event.JobSubmitted:
		s := e.Submit
		add := func(job, index int64) {
			id := s.Job
			if index == 0 {
				id = job
			}
			ix.rows = append(ix.rows, row{Job: job, ID: id, Index: index, Name: s.Name, User: s.User, Queue: s.Queue, State: string(state.Pend), Submit: sec})
			ix.users[s.User]++
			ix.counts[string(state.Pend)]++
		}
		if s.Array == "" {
			add(s.Job, 0)
			break
		}
		spec, err := jobarray.Parse(s.Array, jobarray.MaxSize)
		if err != nil {
			ix.ok = false // the state took it: it parses
			return
		}
		for k, n := range spec.Indices {
			add(s.Job+int64(k), n)
		}
	case event.CycleDecided:
		ix.cycle(e.Cycle, sec)
	case event.JobFinished:
		f := e.Finished
		r := ix.row(f.Job)
		if r == nil {
			return
		}
		if r.requeuing {
			r.requeuing, r.Hosts, r.Slots, r.Start = false, nil, 0, 0
			return
		}
		r.ExitCode = f.ExitCode
		if f.Requeued {
			ix.setState(r, state.Pend)
			r.Hosts, r.Slots, r.Start = nil, 0, 0
			return
		}
		r.End = sec
		if f.ExitCode == 0 && f.Signal == "" && f.Reason == "" {
			ix.setState(r, state.Done)
		} else {
			ix.setState(r, state.Exit)
		}
	case event.JobKilled:
		if r := ix.row(e.Killed.Job); r != nil && r.State == string(state.Pend) {
			ix.setState(r, state.Exit)
			r.End, r.Reason, r.Detail = sec, "", ""
			if r.requeuing {
				r.requeuing, r.Hosts, r.Slots = false, nil, 0
			}
		}
	case event.HostRegistered, event.HostLost, event.HostClosed, event.HostOpened:
		s := ix.status[e.Host.Name]
		switch e.Type {
		case event.HostRegistered:
			s.up = true
		case event.HostLost:
			s.up = false
		case event.HostClosed:
			s.closed = true
		case event.HostOpened:
			s.closed = false
		}
		ix.status[e.Host.Name] = s
		if i, ok := ix.byName[e.Host.Name]; ok {
			ix.hosts[i].Status = s.status()
		}
	case event.ConfigReloaded:
		c, _, err := cluster.ParseConfig("configuration", []byte(e.Config.Text))
		if err != nil {
			ix.ok = false // the core took it: it parses
			return
		}
		ix.config(c)
	}
}

// cycle folds a cycle's decisions, as state.State.applyCycle does.
func (ix *index) cycle(c *event.Cycle, sec int64) {
	for _, id := range c.Resumed {
		if r := ix.row(id); r != nil {
			ix.setState(r, state.Run)
			r.Reason, r.Detail = "", ""
		}
	}
	for _, p := range c.Started {
		if r := ix.row(p.Job); r != nil {
			r.Hosts, r.Slots, r.requeuing = p.Hosts, slotsOf(p.Hosts), false
			ix.setState(r, state.Run)
			r.Start, r.Reason, r.Detail, r.ExitCode = sec, "", "", 0
		}
	}
	for _, p := range c.Pending {
		if r := ix.row(p.Job); r != nil {
			r.Reason, r.Detail = p.Reason, p.Detail
		}
	}
	for _, p := range c.Preempted {
		r := ix.row(p.Job)
		if r == nil {
			continue
		}
		if p.Action == event.PreemptSuspend {
			ix.setState(r, state.Susp)
			r.Reason = "Preempted"
			continue
		}
		ix.setState(r, state.Pend)
		r.requeuing, r.Reason, r.Detail = true, "Requeued", ""
	}
}

// sortKeys are the jobs view's sort keys, each comparing two rows (ties
// go by job ID, ascending).
var sortKeys = map[string]func(a, b *row) int{
	"id":     func(a, b *row) int { return 0 },
	"name":   func(a, b *row) int { return strings.Compare(a.Name, b.Name) },
	"user":   func(a, b *row) int { return strings.Compare(a.User, b.User) },
	"queue":  func(a, b *row) int { return strings.Compare(a.Queue, b.Queue) },
	"state":  func(a, b *row) int { return strings.Compare(a.State, b.State) },
	"reason": func(a, b *row) int { return strings.Compare(a.Reason, b.Reason) },
	"slots":  func(a, b *row) int { return cmp.Compare(a.Slots, b.Slots) },
	"submit": func(a, b *row) int { return cmp.Compare(a.Submit, b.Submit) },
	"start":  func(a, b *row) int { return cmp.Compare(a.Start, b.Start) },
	"end":    func(a, b *row) int { return cmp.Compare(a.End, b.End) },
}

// order returns the rows' ascending order by key (a key of sortKeys),
// nil for "id" (the rows' own order); made once per key until the index
// changes. The caller holds the index's read lock.
func (ix *index) order(key string) []int32 {
	if key == "id" {
		return nil
	}
	ix.ordersMu.Lock()
	defer ix.ordersMu.Unlock()
	if ix.ordersAt != ix.version || ix.orders == nil {
		ix.orders, ix.ordersAt = map[string][]int32{}, ix.version
	}
	if o, ok := ix.orders[key]; ok {
		return o
	}
	by := sortKeys[key]
	o := make([]int32, len(ix.rows))
	for i := range o {
		o[i] = int32(i)
	}
	slices.SortStableFunc(o, func(a, b int32) int { return by(&ix.rows[a], &ix.rows[b]) })
	ix.orders[key] = o
	return o
}

// userList returns the users with jobs, sorted. The caller holds the
// index's read lock.
func (ix *index) userList() []string {
	out := make([]string, 0, len(ix.users))
	for u, n := range ix.users {
		if n > 0 {
			out = append(out, u)
		}
	}
	slices.Sort(out)
	return out
}

// JobsQuery selects a page of the jobs view: filters (empty: any), a
// sort key (sortKeys) and direction, and the page.
type JobsQuery struct {
	User, Queue, State, Host string
	Sort                     string
	Desc                     bool
	Offset, Limit            int
}

// The jobs view's page sizes.
const (
	DefaultLimit = 50
	MaxLimit     = 500
)

// matches reports whether r passes q's filters. State is a job state,
// "active" (PEND, RUN, SUSP) or "ended" (DONE, EXIT); Host, a host
// where the job runs or is suspended.
func (q *JobsQuery) matches(r *row) bool {
	switch {
	case q.User != "" && r.User != q.User, q.Queue != "" && r.Queue != q.Queue:
		return false
	}
	switch q.State {
	case "":
	case "active":
		if !r.active() {
			return false
		}
	case "ended":
		if !r.ended() {
			return false
		}
	default:
		if r.State != q.State {
			return false
		}
	}
	if q.Host != "" {
		if r.State != string(state.Run) && r.State != string(state.Susp) ||
			!slices.ContainsFunc(r.Hosts, func(a event.HostAlloc) bool { return a.Host == q.Host }) {
			return false
		}
	}
	return true
}

// page returns copies of the rows of q's page and how many rows pass its
// filters in all: one pass over the rows in the key's order. The caller
// holds the index's read lock.
func (ix *index) page(q JobsQuery) (out []row, total int) {
	o := ix.order(q.Sort)
	n := len(ix.rows)
	for k := range n {
		i := k
		if q.Desc {
			i = n - 1 - k
		}
		if o != nil {
			i = int(o[i])
		}
		r := &ix.rows[i]
		if !q.matches(r) {
			continue
		}
		if total >= q.Offset && len(out) < q.Limit {
			out = append(out, *r)
		}
		total++
	}
	return out, total
}

// indexState is the part of Handler that keeps the index.
type indexState struct {
	ix      *index
	feed    chan []event.Event
	dropped atomic.Bool
}
