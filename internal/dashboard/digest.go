package dashboard

import (
	"cmp"
	"slices"
	"strings"
	"sync"

	"github.com/xce-sched/xce/internal/event"
	"github.com/xce-sched/xce/internal/live"
	"github.com/xce-sched/xce/internal/state"
)

// row is one job as the jobs view lists it: copied from the state under
// the loop's read lock, read outside it. Hosts is the state's own slice,
// which the state replaces and never changes in place.
type row struct {
	Job, ID, Index            int64
	Name, User, Queue, State  string
	Reason, Detail            string
	Slots                     int
	Hosts                     []event.HostAlloc
	Submit, Start, End        int64 // Unix seconds; 0: not yet
	ExitCode                  int
	ended, active, hasRunning bool
}

// hostRow is one host of the configuration as the hosts view shows it.
type hostRow struct {
	Name   string
	Slots  int
	Used   int
	Status string // ok, closed, unavail
}

// digest is a copy of what the views read, made in one pass under the
// loop's read lock and kept while the state's index stays the same.
type digest struct {
	index  uint64
	core   *live.Core // the core it was made from (a reload makes a new one)
	rows   []row      // by job ID
	hosts  []hostRow  // in the configuration's order
	queues []string
	users  []string // sorted
	counts map[string]int
	used   int
	slots  int

	mu     sync.Mutex
	orders map[string][]int32 // a sort key's ascending order of rows, made when first asked for
}

// build copies k's jobs and hosts. The caller holds the loop's read lock.
func build(k *live.Core) *digest {
	d := &digest{index: k.State.Index, core: k, rows: make([]row, len(k.State.Jobs)), counts: map[string]int{}, orders: map[string][]int32{}}
	used := map[string]int{}
	users := map[string]bool{}
	sec := func(ns int64) int64 { return ns / 1e9 }
	for i, j := range k.State.Jobs {
		id, index := j.Job, int64(0)
		if j.ArrayJob != 0 {
			id, index = j.ArrayJob, j.ArrayIndex
		}
		slots := 0
		for _, a := range j.Hosts {
			slots += a.Slots
		}
		if j.State == state.Run {
			for _, a := range j.Hosts {
				used[a.Host] += a.Slots
			}
			d.used += slots
		}
		d.rows[i] = row{Job: j.Job, ID: id, Index: index, Name: j.Name, User: j.User, Queue: j.Queue, State: string(j.State),
			Reason: j.Reason, Detail: j.Detail, Slots: slots, Hosts: j.Hosts, Submit: sec(j.SubmitTime), Start: sec(j.StartTime),
			End: sec(j.EndTime), ExitCode: j.ExitCode,
			ended: j.State == state.Done || j.State == state.Exit, hasRunning: j.State == state.Run || j.State == state.Susp}
		d.rows[i].active = !d.rows[i].ended
		d.counts[string(j.State)]++
		users[j.User] = true
	}
	for _, h := range k.Cluster.Hosts {
		status := "unavail"
		if sh := k.State.Host(h.Name); sh != nil {
			status = sh.Status()
		}
		d.hosts = append(d.hosts, hostRow{Name: h.Name, Slots: h.Slots, Used: used[h.Name], Status: status})
		d.slots += h.Slots
	}
	for _, q := range k.Cluster.Queues {
		d.queues = append(d.queues, q.Name)
	}
	for u := range users {
		d.users = append(d.users, u)
	}
	slices.Sort(d.users)
	return d
}

// digest returns the copy of the state as it is now: the last one made
// when the state has not changed since, else a new one. Requests that
// come together share one pass.
func (h *Handler) digest() *digest {
	h.buildMu.Lock()
	defer h.buildMu.Unlock()
	cur := h.cur
	h.o.View(func(k *live.Core) {
		if cur != nil && cur.index == k.State.Index && cur.core == k {
			return
		}
		cur = build(k)
	})
	h.cur = cur
	return cur
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
// nil for "id" (the rows' own order). It is made once per digest and key.
func (d *digest) order(key string) []int32 {
	if key == "id" {
		return nil
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if o, ok := d.orders[key]; ok {
		return o
	}
	by := sortKeys[key]
	o := make([]int32, len(d.rows))
	for i := range o {
		o[i] = int32(i)
	}
	slices.SortStableFunc(o, func(a, b int32) int { return by(&d.rows[a], &d.rows[b]) })
	d.orders[key] = o
	return o
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
// "active" (PEND, RUN, SUSP) or "ended" (DONE, EXIT).
func (q *JobsQuery) matches(r *row) bool {
	switch {
	case q.User != "" && r.User != q.User, q.Queue != "" && r.Queue != q.Queue:
		return false
	}
	switch q.State {
	case "":
	case "active":
		if !r.active {
			return false
		}
	case "ended":
		if !r.ended {
			return false
		}
	default:
		if r.State != q.State {
			return false
		}
	}
	if q.Host != "" {
		if !r.hasRunning || !slices.ContainsFunc(r.Hosts, func(a event.HostAlloc) bool { return a.Host == q.Host }) {
			return false
		}
	}
	return true
}

// page returns the rows of q's page and how many rows pass its filters
// in all: one pass over the rows in the key's order, outside the loop's
// lock.
func (d *digest) page(q JobsQuery) (out []*row, total int) {
	o := d.order(q.Sort)
	n := len(d.rows)
	for k := range n {
		i := k
		if q.Desc {
			i = n - 1 - k
		}
		if o != nil {
			i = int(o[i])
		}
		r := &d.rows[i]
		if !q.matches(r) {
			continue
		}
		if total >= q.Offset && len(out) < q.Limit {
			out = append(out, r)
		}
		total++
	}
	return out, total
}
