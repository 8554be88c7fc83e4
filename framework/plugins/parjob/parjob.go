// Package parjob is the allocator for parallel jobs: it turns a job's task
// count (min,max), span[], compound terms, alternatives and same[] into an
// ordered sequence of plans (docs/allocation.md). It only describes plans;
// the runner claims the hosts.
package parjob

import (
	"fmt"
	"slices"

	"github.com/xce-sched/xce/cluster"
	"github.com/xce-sched/xce/framework"
	"github.com/xce-sched/xce/resreq"
)

// Name is the plugin's registry name.
const Name = "parjob"

// Plugin is the parjob allocator. It keeps scratch buffers between jobs, so
// one Plugin serves one runner at a time.
type Plugin struct {
	it   iterator
	caps []capRun // capacities scratch
	// indexFrom is the cluster size from which no-span sizing reads the
	// state's free-slot levels instead of scanning every host.
	indexFrom int
}

var (
	_ framework.Allocator  = (*Plugin)(nil)
	_ framework.Acceptor   = (*Plugin)(nil)
	_ framework.WholePlans = (*Plugin)(nil)
)

// New returns a parjob allocator.
func New() *Plugin { return &Plugin{indexFrom: cluster.FreeIndexHosts} }

// Name implements framework.Plugin.
func (*Plugin) Name() string { return Name }

// WholePlans implements framework.WholePlans: a simple alternative's task
// counts run from TasksMax down to TasksMin, and Plans fails only on
// task counts that are no range.
func (*Plugin) WholePlans() {}

// Plans implements framework.Allocator. The order is: alternatives in the
// order written; within a simple alternative, task counts from max down to
// min (a larger allocation is preferred); for each count, one plan per
// distinct same[] value tuple (in host order of first appearance) when the
// term has same[], else one plan. A compound alternative has one plan:
// its terms' buckets in the order written. Buckets of a term are:
//
//   - span[hosts=1]: one bucket of all its tasks;
//   - span[ptile=N]: buckets of N, then one of the remainder;
//   - no span or span[hosts=-1]: sized from what each usable host can take
//     now (free slots bounded by per-slot rusage and by the preparers'
//     bounds, View.TaskCapacity: a per-host limit caps its host's bucket),
//     largest first, the last bucket taking the remainder. A count larger
//     than the total capacity (or than the preparers let the job place in
//     all, View.TaskBound) yields no plan; the largest count that fits
//     comes first.
func (p *Plugin) Plans(job *framework.Job, view *framework.View) (framework.PlanIterator, error) {
	if job.Spec.TasksMin < 1 || job.Spec.TasksMax < job.Spec.TasksMin {
		return nil, fmt.Errorf("bad task count %d,%d", job.Spec.TasksMin, job.Spec.TasksMax)
	}
	p.it = iterator{p: p, job: job, view: view, alt: -1, plan: p.it.plan}
	return &p.it, nil
}

// Accepts implements framework.Acceptor: every term with same[] must have
// all its hosts agree on each same[] attribute (NaN, an undefined value,
// agrees with nothing).
func (p *Plugin) Accepts(job *framework.Job, plan *framework.Plan, claims []framework.Claim, view *framework.View) bool {
	alt := &job.Req.Alts[plan.Alt]
	for ti := range alt.Terms {
		if hostsOf(plan, claims, ti) < 2 {
			continue // one host always shares its own values
		}
		for _, col := range alt.Terms[ti].Same {
			first := true
			var v float64
			for _, c := range claims {
				if plan.Buckets[c.Bucket].Term != ti {
					continue
				}
				x := view.State.HostVals(c.Host)[col]
				if x != x || (!first && x != v) {
					return false
				}
				v, first = x, false
			}
		}
	}
	return true
}

func hostsOf(plan *framework.Plan, claims []framework.Claim, ti int) int {
	n := 0
	for _, c := range claims {
		if plan.Buckets[c.Bucket].Term == ti {
			n++
		}
	}
	return n
}

// iterator generates plans lazily: state is the alternative, the task count
// n (simple alternatives) and the same[] tuple index.
type iterator struct {
	p    *Plugin
	job  *framework.Job
	view *framework.View
	plan framework.Plan

	alt    int
	n      int         // next task count to try, for a simple alternative
	tuples [][]float64 // same[] value tuples of the current alternative
	tuple  int
}

func (it *iterator) Next() (*framework.Plan, bool) {
	for {
		if it.alt >= 0 && !it.exhausted() {
			if it.build() {
				return &it.plan, true
			}
			continue
		}
		if !it.nextAlt() {
			return nil, false
		}
	}
}

func (it *iterator) req() *framework.Alternative { return &it.job.Req.Alts[it.alt] }

// exhausted reports whether the current alternative has no plans left.
func (it *iterator) exhausted() bool {
	if it.req().Compound() {
		return it.n == 0
	}
	return it.n < it.job.Spec.TasksMin
}

func (it *iterator) nextAlt() bool {
	it.alt++
	if it.alt >= len(it.job.Req.Alts) {
		return false
	}
	alt := it.req()
	spec := it.job.Spec
	it.n, it.tuple, it.tuples = spec.TasksMax, 0, nil
	if alt.Compound() {
		return true
	}
	term := &alt.Terms[0]
	switch {
	case spec.TasksMax > spec.TasksMin:
		// A range: start at the largest count that could fit now.
		it.n = min(it.n, it.bound(term))
	case term.Span.Kind == resreq.SpanPtile:
		// A plan never has more buckets than the queue has hosts.
		if it.n > term.Span.Ptile*it.view.NumHosts(spec.Queue) {
			it.n = 0
		}
	}
	if len(term.Same) > 0 && term.Span.Kind != resreq.SpanHostsOne {
		// One plan per value tuple (one host is always "the same").
		it.tuples = sameTuples(it.view, spec.Queue, term)
		if len(it.tuples) == 0 {
			it.n = 0 // no usable host: no plan
		}
	}
	return true
}

// build fills it.plan with the next candidate and advances the state. It
// returns false when the candidate is provably infeasible (skipped).
func (it *iterator) build() bool {
	alt := it.req()
	it.plan.Alt = it.alt
	it.plan.Buckets = it.plan.Buckets[:0]
	it.plan.Pins = it.plan.Pins[:0]
	if alt.Compound() {
		it.n = 0
		for ti := range alt.Terms {
			if !it.termBuckets(ti, alt.Terms[ti].Tasks, nil) {
				return false
			}
		}
		return true
	}
	n := it.n
	var pin []float64
	if it.tuples != nil {
		pin = it.tuples[it.tuple]
		for k, col := range alt.Terms[0].Same {
			it.plan.Pins = append(it.plan.Pins, framework.Pin{Term: 0, Col: col, Value: pin[k]})
		}
		if it.tuple++; it.tuple == len(it.tuples) {
			it.tuple = 0
			it.n--
		}
	} else {
		it.n--
	}
	return it.termBuckets(0, n, pin)
}

// termBuckets appends the buckets of n tasks of term ti. pin restricts the
// capacity count to hosts with those same[] values.
func (it *iterator) termBuckets(ti, n int, pin []float64) bool {
	term := &it.req().Terms[ti]
	add := func(slots, count int) {
		if count <= 0 {
			return
		}
		if k := len(it.plan.Buckets) - 1; k >= 0 && it.plan.Buckets[k].Slots == slots && it.plan.Buckets[k].Term == ti {
			it.plan.Buckets[k].Count = it.plan.Buckets[k].Hosts() + count
			return
		}
		it.plan.Buckets = append(it.plan.Buckets, framework.Bucket{Slots: slots, Term: ti, Count: count})
	}
	switch term.Span.Kind {
	case resreq.SpanHostsOne:
		add(n, 1)
	case resreq.SpanPtile:
		p, r := term.Span.Ptile, n%term.Span.Ptile
		if r > 0 && len(term.PerJob) > 0 && !it.roomFor(term, p, pin) {
			// The per-job rusage goes with the first bucket, and no host
			// with room for it takes a full ptile: the remainder comes
			// first.
			add(r, 1)
			r = 0
		}
		add(p, n/p)
		if r > 0 {
			add(r, 1)
		}
	default:
		return it.spread(ti, term, n, pin, add)
	}
	return true
}

// spread sizes buckets for n tasks from the usable hosts' capacities (free
// slots bounded by per-slot rusage and the preparers' bounds,
// View.TaskCapacity): largest first, or, when the term has order[] keys, in
// that order; each host takes all it can until the last takes the
// remainder. For a simple alternative it lowers the next count to try to
// the total capacity (at most what the preparers let the job place in all),
// so the first plan is the largest that fits.
func (it *iterator) spread(ti int, term *framework.Term, n int, pin []float64, add func(slots, count int)) bool {
	v := it.view
	q := it.job.Spec.Queue
	alt := it.req()
	caps := it.p.caps[:0]
	total := 0
	// first: the position in caps of the host the term's per-job rusage
	// goes to (-1: none yet), the first host in order[] or else the one
	// of largest capacity with room for it.
	first := -1
	perJob := len(term.PerJob) > 0
	visit := func(h cluster.HostID) {
		if v.Usable(h, q, term) != framework.None || !pinned(v, h, term, pin) {
			return
		}
		if each, hosts := v.MemberCapacity(h, v.TaskCapacity(it.job, alt, term, h)); each > 0 {
			if perJob && jobRoom(v, h, term) && (first < 0 || len(term.Order) == 0 && each > caps[first].each) {
				first = len(caps)
			}
			caps = append(caps, capRun{each, hosts})
			total += each * hosts
		}
	}
	switch hosts := v.Cluster.Queues[q].Hosts; {
	case hosts == nil && len(term.Order) == 0 && pin == nil && !perJob && len(v.Cluster.Hosts) >= it.p.indexFrom && !v.Cluster.HasClasses():
		caps, total = it.largestCaps(caps, term, n)
	case hosts == nil && len(term.Order) == 0 && pin == nil && term.Plain() && len(v.Bounders) == 0:
		// A small cluster, and no select, rusage, order, same or bounding
		// preparer: a host's capacity is its free slots if it is open.
		for h := range v.Cluster.Hosts {
			id := cluster.HostID(h)
			if c := v.State.FreeSlots(id); c > 0 && v.Cluster.Hosts[h].Status == cluster.HostOK {
				each, hosts := v.MemberCapacity(id, c)
				caps = append(caps, capRun{each, hosts})
				total += c
			}
		}
	case len(term.Order) > 0:
		for _, h := range v.Ordered(q, term) {
			visit(h)
		}
	case hosts != nil:
		for _, h := range hosts {
			visit(h)
		}
	default:
		for h := range v.Cluster.Hosts {
			visit(cluster.HostID(h))
		}
	}
	it.p.caps = caps
	if perJob {
		// Only a host with room for the per-job rusage can take the
		// first bucket; it comes first, and the others as usual. A
		// resource has one reserve method, so the per-job rusage never
		// lowers that host's capacity: the first plan is still the
		// largest that fits.
		if first < 0 {
			total = 0
		} else {
			// Keep order[] among the others: the hosts before it move
			// one place down. Of a host class, one member comes first.
			c := caps[first]
			if c.hosts > 1 {
				caps[first].hosts--
				caps = slices.Insert(caps, 0, capRun{c.each, 1})
			} else {
				copy(caps[1:first+1], caps[:first])
				caps[0] = c
			}
		}
	}
	// What the preparers let the job place in all (a user's slot limit)
	// bounds the count, whatever the hosts can take.
	jobTotal, _ := v.TaskBound(it.job, alt, term)
	total = min(total, jobTotal)
	if !alt.Compound() && it.tuples == nil && total < n {
		// Skip straight to the largest count that fits.
		if total < it.job.Spec.TasksMin {
			it.n = 0
			return false
		}
		n, it.n = total, total-1
	}
	if total < n {
		return false
	}
	byEach := func(a, b capRun) int { return b.each - a.each }
	switch {
	case len(term.Order) > 0:
	case perJob:
		slices.SortStableFunc(caps[1:], byEach)
	default:
		slices.SortStableFunc(caps, byEach)
	}
	it.plan.Buckets = slices.Grow(it.plan.Buckets, min(len(caps), n))
	for _, c := range caps {
		if n == 0 {
			break
		}
		// Each host takes all it can, the last the remainder.
		full := min(c.hosts, n/c.each)
		add(c.each, full)
		if n -= c.each * full; n > 0 && full < c.hosts {
			add(n, 1)
			n = 0
		}
	}
	return true
}

// capRun is the capacity of hosts hosts that take each tasks each (a
// host class's members, or one host).
type capRun struct{ each, hosts int }

// roomFor reports whether some usable host of the job's queue (with the
// same[] values pin) has room for term's per-job rusage and can take k of
// its tasks.
func (it *iterator) roomFor(term *framework.Term, k int, pin []float64) bool {
	v, q, alt := it.view, it.job.Spec.Queue, it.req()
	ok := func(h cluster.HostID) bool {
		each, _ := v.MemberCapacity(h, v.TaskCapacity(it.job, alt, term, h))
		return each >= k && v.Usable(h, q, term) == framework.None && pinned(v, h, term, pin) && jobRoom(v, h, term)
	}
	if hosts := v.Cluster.Queues[q].Hosts; hosts != nil {
		return slices.ContainsFunc(hosts, ok)
	}
	for h := range v.Cluster.Hosts {
		if ok(cluster.HostID(h)) {
			return true
		}
	}
	return false
}

// jobRoom reports whether host h has room for term's per-job rusage.
func jobRoom(v *framework.View, h cluster.HostID, term *framework.Term) bool {
	for _, r := range term.PerJob {
		if !cluster.Within(r.Amount, v.State.Free(h, r.Res)) {
			return false
		}
	}
	return true
}

// largestCaps appends to caps the capacities of the usable hosts (queue
// without a host list, no order[] or same[] pin) that largest-first sizing
// of n tasks uses, and returns them with their total. It reads the hosts
// with the most free slots first (cluster.State's free-slot levels) and
// stops as soon as the capacities already found that no unread host can
// exceed (each unread host's capacity is at most its level's most free
// slots and at most View.TaskBound's per-host bound) add up to n: the
// sorted prefix that covers n is then among them, so the buckets are those
// of a full scan.
// When it does not stop early it has read every host and total is exact.
func (it *iterator) largestCaps(caps []capRun, term *framework.Term, n int) ([]capRun, int) {
	v, q := it.view, it.job.Spec.Queue
	alt := it.req()
	st := v.State
	_, ub := v.TaskBound(it.job, alt, term)
	total, above := 0, 0
	for k := st.NumFreeLevels() - 1; k >= 1; k-- {
		bound := min(ub, cluster.FreeLevelUpper(k))
		if total >= n {
			// The bound fell: re-count what no unread host can exceed.
			above = 0
			for _, c := range caps {
				if c.each >= bound {
					above += c.each
				}
			}
			if above >= n {
				return caps, total
			}
		}
		for _, h := range st.HostsAtFreeLevel(k) {
			if v.Usable(h, q, term) != framework.None {
				continue
			}
			c := v.TaskCapacity(it.job, alt, term, h)
			if c == 0 {
				continue
			}
			caps = append(caps, capRun{c, 1})
			total += c
			if c >= bound {
				if above += c; above >= n {
					return caps, total
				}
			}
		}
	}
	return caps, total
}

// bound returns an upper bound on the tasks of term any placement can have
// now: for span[hosts=1] the largest usable capacity; for span[ptile=P],
// P × (hosts that can take P) + the largest smaller capacity (below P);
// else the total capacity; capacities as View.TaskCapacity gives them, and
// at most what the preparers let the job place in all (View.TaskBound).
// One pass over the queue's hosts.
func (it *iterator) bound(term *framework.Term) int {
	v := it.view
	q := it.job.Spec.Queue
	alt := it.req()
	largest, full, rest, total := 0, 0, 0, 0
	p := term.Span.Ptile
	for _, h := range v.Hosts(q) {
		if v.Usable(h, q, term) != framework.None {
			continue
		}
		each, hosts := v.MemberCapacity(h, v.TaskCapacity(it.job, alt, term, h))
		total += each * hosts
		largest = max(largest, each)
		if term.Span.Kind == resreq.SpanPtile {
			if each >= p {
				full += hosts
			} else {
				rest = max(rest, each)
			}
		}
	}
	jobTotal, _ := v.TaskBound(it.job, alt, term)
	switch term.Span.Kind {
	case resreq.SpanHostsOne:
		return min(largest, jobTotal)
	case resreq.SpanPtile:
		return min(p*full+rest, jobTotal)
	}
	return min(total, jobTotal)
}

func pinned(v *framework.View, h cluster.HostID, term *framework.Term, pin []float64) bool {
	if pin == nil {
		return true
	}
	vals := v.State.HostVals(h)
	for k, col := range term.Same {
		if vals[col] != pin[k] {
			return false
		}
	}
	return true
}

// sameTuples lists the distinct same[] value tuples of the usable hosts,
// in host order of first appearance. Hosts with an undefined (NaN) value
// are left out: they can share no value.
func sameTuples(v *framework.View, q cluster.QueueID, term *framework.Term) [][]float64 {
	var out [][]float64
	for h := range v.Cluster.Hosts {
		id := cluster.HostID(h)
		if v.Usable(id, q, term) != framework.None {
			continue
		}
		vals := v.State.HostVals(id)
		t := make([]float64, len(term.Same))
		ok := true
		for k, col := range term.Same {
			t[k] = vals[col]
			ok = ok && t[k] == t[k]
		}
		if ok && !slices.ContainsFunc(out, func(o []float64) bool { return slices.Equal(o, t) }) {
			out = append(out, t)
		}
	}
	return out
}
