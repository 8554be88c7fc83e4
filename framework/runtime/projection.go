package runtime

import (
	"cmp"
	"slices"
	"sort"

	"github.com/xce-sched/xce/cluster"
	"github.com/xce-sched/xce/framework"
)

// projection projects the live state into the future for backfilling: the
// running jobs release what they hold at their estimated end (start +
// estimate), and the cycle's reservations hold theirs over [Start, End).
// It keeps these as one time-ordered list of events, so that the state at
// any time, and the least free over a window, are one sweep away.
type projection struct {
	live   *cluster.State
	events []event             // by time; at equal times releases before takes
	allocs []*cluster.JobAlloc // what the events give or take (event.alloc)
	starts int                 // reservation starts among the events
	scan   slotScan            // scratch for Earliest's scans
	// ver counts the changes to events; least caches minFreeSlots' sweep
	// for one start time, valid while ver and the live free slots stand.
	ver   uint64
	least leastFrom
	gaps  gaps // the free slots from a time on, for standing reservations (standing.go)
}

// leastFrom is the sweep of minFreeSlots from one start time t: free is
// the total of free slots at t, and min[k] the least total after each of
// the events from first (the first after t) to first+k; the least of all
// is level, first reached at the event at dropAt (-1: never below free).
type leastFrom struct {
	ok         bool
	ver        uint64
	t          int64
	live, free int
	first      int
	min        []int
	level      int
	dropAt     int64
}

// event is a change of the projected state at a time. It holds no
// pointer (its allocation is an index into projection.allocs), so that
// inserting into and deleting from the list moves plain memory.
type event struct {
	at      int64
	resEnd  int64
	slots   int
	alloc   int32 // projection.allocs[alloc]
	release bool  // give alloc back (a job's end) rather than take it
	start   bool  // a reservation's start (the state shrinks here)
	res     bool  // a reservation's start or end (not a running job's end)
}

// intern returns the index of alloc in p.allocs, appending it.
func (p *projection) intern(alloc *cluster.JobAlloc) int32 {
	p.allocs = append(p.allocs, alloc)
	return int32(len(p.allocs) - 1)
}

// allocOf returns what e gives or takes.
func (p *projection) allocOf(e *event) *cluster.JobAlloc { return p.allocs[e.alloc] }

func (p *projection) reset(live *cluster.State) {
	p.live = live
	p.events = p.events[:0]
	clear(p.allocs)
	p.allocs = p.allocs[:0]
	p.starts = 0
	p.ver++
}

func (p *projection) add(e event) {
	// After every event that sorts before or with e (times ascending,
	// releases first so that [start, end) intervals abut): appending is the
	// common case.
	i := sort.Search(len(p.events), func(i int) bool { return eventOrder(&p.events[i], &e) > 0 })
	p.events = slices.Insert(p.events, i, e)
	p.ver++
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// ending adds a running job that releases alloc at time at.
func (p *projection) ending(at int64, alloc *cluster.JobAlloc) {
	if at < never {
		p.add(event{at: at, release: true, alloc: p.intern(alloc), slots: alloc.Slots()})
	}
}

// dropEnding removes the end of the running job that holds alloc (the same
// pointer), if the projection has it: the job was preempted, and what it
// gave back is free in the live state already.
func (p *projection) dropEnding(alloc *cluster.JobAlloc) {
	for i := range p.events {
		if e := &p.events[i]; e.release && !e.res && p.allocOf(e) == alloc {
			p.events = slices.Delete(p.events, i, i+1)
			p.ver++
			return
		}
	}
}

// reserve adds a reservation holding alloc over [start, end).
func (p *projection) reserve(start, end int64, alloc *cluster.JobAlloc) {
	take, give, ends := p.reservation(start, end, alloc)
	p.add(take)
	if ends {
		p.add(give)
	}
}

// reservation counts a reservation holding alloc over [start, end) and
// returns its events: the start, which takes alloc, and the end, which
// gives it back, unless it never ends.
func (p *projection) reservation(start, end int64, alloc *cluster.JobAlloc) (take, give event, ends bool) {
	n, a := alloc.Slots(), p.intern(alloc)
	p.starts++
	take = event{at: start, start: true, res: true, resEnd: end, alloc: a, slots: n}
	give = event{at: end, release: true, res: true, resEnd: end, alloc: a, slots: n}
	return take, give, end < never
}

// reserveAll adds the reservations rs as reserve would one after the
// other, in one merge: the events of each in time order (releases first),
// after the events already there that they tie with and in the order of
// rs among themselves. m is scratch.
func (p *projection) reserveAll(rs []framework.Reservation, m *mergeScratch) {
	if len(rs) < 8 {
		for _, r := range rs {
			p.reserve(r.Start, r.End, r.Alloc)
		}
		return
	}
	n := len(p.events)
	for _, r := range rs {
		take, give, ends := p.reservation(r.Start, r.End, r.Alloc)
		p.events = append(p.events, take)
		if ends {
			p.events = append(p.events, give)
		}
	}
	m.events = append(m.events[:0], p.events...)
	old, added := m.events[:n], m.events[n:]
	m.sortKeys(added)
	// Merge: an old event goes first unless a new one sorts strictly
	// before it.
	w, i := 0, 0
	for _, seq := range m.order {
		e := &added[seq]
		for i < len(old) && eventOrder(&old[i], e) <= 0 {
			p.events[w] = old[i]
			i, w = i+1, w+1
		}
		p.events[w] = *e
		w++
	}
	copy(p.events[w:], old[i:])
	p.ver++
}

// mergeScratch is reserveAll's scratch: the events, and the order of
// those added (sortKeys).
type mergeScratch struct {
	events []event
	packed []int64
	order  []int32
}

// sortKeys sets m.order to the positions in added of its events by time,
// releases first, then position (a stable sort). With times under 2⁴⁰
// (seconds: 34,000 years) and fewer than 2²² events, each key packs the
// three into one integer, which sorts fastest.
func (m *mergeScratch) sortKeys(added []event) {
	const seqBits, maxAt = 22, 1 << 40
	m.order = m.order[:0]
	packable := len(added) < 1<<seqBits
	for i := range added {
		packable = packable && added[i].at >= 0 && added[i].at < maxAt
	}
	if !packable {
		for i := range added {
			m.order = append(m.order, int32(i))
		}
		slices.SortStableFunc(m.order, func(a, b int32) int { return eventOrder(&added[a], &added[b]) })
		return
	}
	m.packed = m.packed[:0]
	for i := range added {
		m.packed = append(m.packed, added[i].at<<(seqBits+1)|int64(boolInt(!added[i].release))<<seqBits|int64(i))
	}
	slices.Sort(m.packed)
	for _, k := range m.packed {
		m.order = append(m.order, int32(k&(1<<seqBits-1)))
	}
}

// eventOrder orders events as add places them: by time, releases first.
func eventOrder(a, b *event) int {
	if a.at != b.at {
		return cmp.Compare(a.at, b.at)
	}
	return cmp.Compare(boolInt(!a.release), boolInt(!b.release))
}

// unreserve removes the reservation that reserve(start, end, alloc) added
// (alloc is the same pointer), if the projection has it, and reports
// whether it did. Its two events are found by binary search on their
// times.
func (p *projection) unreserve(start, end int64, alloc *cluster.JobAlloc) bool {
	found := false
	for _, at := range [2]int64{end, start} { // the later first: indices stay valid
		if i := p.findRes(at, alloc); i >= 0 {
			found = found || p.events[i].start
			p.events = slices.Delete(p.events, i, i+1)
			p.ver++
		}
	}
	if found {
		p.starts--
	}
	return found
}

// findRes returns the index of the event at time at of the reservation
// holding alloc (the same pointer), found by binary search, or -1.
func (p *projection) findRes(at int64, alloc *cluster.JobAlloc) int {
	i := sort.Search(len(p.events), func(i int) bool { return p.events[i].at >= at })
	for ; i < len(p.events) && p.events[i].at == at; i++ {
		if e := &p.events[i]; e.res && p.allocOf(e) == alloc {
			return i
		}
	}
	return -1
}

// apply changes st by e.
func (p *projection) apply(st *cluster.State, e *event) {
	if e.release {
		st.Give(p.allocOf(e))
	} else {
		st.Take(p.allocOf(e))
	}
}

// at fills st with the projected state at time t and returns the index of
// the first event after t. A reservation that both starts and ends by t
// changes nothing and is skipped.
func (p *projection) at(st *cluster.State, t int64) int {
	st.CopyFrom(p.live)
	i := 0
	for ; i < len(p.events) && p.events[i].at <= t; i++ {
		if e := &p.events[i]; !e.res || e.resEnd > t {
			p.apply(st, e)
		}
	}
	return i
}

// window fills dst with the projection of [t, end): the state at t, lowered
// to the state at every reservation start inside the window (the only
// times resources shrink). tmp is scratch.
func (p *projection) window(dst, tmp *cluster.State, t, end int64) {
	i := p.at(dst, t)
	last := p.lastStart(i, end)
	if last < 0 {
		return // no reservation starts inside: the state at t holds throughout
	}
	tmp.CopyFrom(dst) // the state at t, before any minimum
	// Events after the last start cannot lower anything: stop there.
	for ; i <= last; i++ {
		e := &p.events[i]
		p.apply(tmp, e)
		if e.start {
			// Only the reservation's hosts (and shared resources and
			// counters) shrink here.
			dst.MinWithAlloc(tmp, p.allocOf(e))
		}
	}
}

// reservedDuring reports whether a reservation holds anything during
// [t, end): one active at t, or one starting inside.
func (p *projection) reservedDuring(t, end int64) bool {
	if p.starts == 0 {
		return false
	}
	for i := range p.events {
		e := &p.events[i]
		if e.at >= end {
			break
		}
		if e.start && e.resEnd > t {
			return true
		}
	}
	return false
}

// lastStart returns the index of the last reservation start in events[i:]
// before end, or -1.
func (p *projection) lastStart(i int, end int64) int {
	last := -1
	if p.starts == 0 {
		return last
	}
	for ; i < len(p.events) && p.events[i].at < end; i++ {
		if p.events[i].start {
			last = i
		}
	}
	return last
}

// minFreeSlots returns the least total of free slots over [t, end), from
// the event deltas alone: a cheap necessary condition for a job to fit.
//
// The sweep from t (free slots at t, then the running least after each
// later event) is kept while the events and the live state's free slots
// stand: the backfill candidates of a cycle, all tried at now, then cost
// a binary search each.
func (p *projection) minFreeSlots(t, end int64) int {
	c := &p.least
	if live := p.live.TotalFreeSlots(); !c.ok || c.ver != p.ver || c.t != t || c.live != live {
		c.ok, c.ver, c.t, c.live = true, p.ver, t, live
		c.first = sort.Search(len(p.events), func(i int) bool { return p.events[i].at > t })
		c.free = live
		for i := range c.first {
			c.free += p.events[i].delta()
		}
		c.min = c.min[:0]
		run, least := c.free, c.free
		c.dropAt = -1
		for i := c.first; i < len(p.events); i++ {
			run += p.events[i].delta()
			if run < least {
				least, c.dropAt = run, p.events[i].at
			}
			c.min = append(c.min, least)
		}
		c.level = least
	}
	j := sort.Search(len(p.events), func(i int) bool { return p.events[i].at >= end }) // events[:j] are before end
	if j <= c.first {
		return c.free
	}
	return c.min[j-1-c.first]
}

// lastDrop returns the total of free slots at t, and the least total
// after t (level) with the time it is first reached (at; -1 when the
// total never falls below free): minFreeSlots(t, end) is level exactly
// when end > at, and at least level for every end.
func (p *projection) lastDrop(t int64) (free int, at int64, level int) {
	p.minFreeSlots(t, t)
	c := &p.least
	return c.free, c.dropAt, c.level
}

// slotScan answers minFreeSlots for windows [t, end) whose t and end never
// decrease between calls, in amortized constant time: a sliding-window
// minimum over the running totals after each event.
type slotScan struct {
	p    *projection
	i    int   // events[:i] are at or before t
	free int   // total free slots at t
	j    int   // events[:j] are before end
	run  int   // total free slots after events[:j]
	dq   []int // dq[head:]: indices k in [i, j), totals after events[:k+1] increasing
	head int
	tot  []int // tot[k-base]: total free slots after events[:k+1]
	base int
}

func (sc *slotScan) reset(p *projection) {
	sc.p, sc.i, sc.j, sc.base = p, 0, 0, 0
	sc.free = p.live.TotalFreeSlots()
	sc.run = sc.free
	sc.dq, sc.tot, sc.head = sc.dq[:0], sc.tot[:0], 0
}

// seek starts the scan at time t, at which free slots are free in all (as
// a sweep from the start would find them): the events up to t are not
// read.
func (sc *slotScan) seek(t int64, free int) {
	ev := sc.p.events
	sc.i = sort.Search(len(ev), func(k int) bool { return ev[k].at > t })
	sc.j, sc.base = sc.i, sc.i
	sc.free, sc.run = free, free
	sc.dq, sc.tot, sc.head = sc.dq[:0], sc.tot[:0], 0
}

// least returns the least total of free slots over [t, end); neither t nor
// end may decrease between calls.
func (sc *slotScan) least(t, end int64) int {
	ev := sc.p.events
	for ; sc.i < len(ev) && ev[sc.i].at <= t; sc.i++ {
		sc.free += ev[sc.i].delta()
	}
	if sc.p.starts == 0 {
		return sc.free // only releases ahead: free slots never shrink
	}
	for ; sc.j < len(ev) && ev[sc.j].at < end; sc.j++ {
		sc.run += ev[sc.j].delta()
		sc.tot = append(sc.tot, sc.run)
		for len(sc.dq) > sc.head && sc.tot[sc.dq[len(sc.dq)-1]-sc.base] >= sc.run {
			sc.dq = sc.dq[:len(sc.dq)-1]
		}
		sc.dq = append(sc.dq, sc.j)
	}
	for sc.head < len(sc.dq) && sc.dq[sc.head] < sc.i {
		sc.head++
	}
	least := sc.free
	if sc.head < len(sc.dq) {
		least = min(least, sc.tot[sc.dq[sc.head]-sc.base])
	}
	return least
}

func (e *event) delta() int {
	if e.release {
		return e.slots
	}
	return -e.slots
}

// releaseAfter returns the first time after after at which resources grow
// (a release among events[i:]) and the index of the event just after it;
// ok is false when there is none. With now, the times it returns one
// after the other are the only ones at which a job's earliest start can
// fall.
func (p *projection) releaseAfter(i int, after int64) (t int64, next int, ok bool) {
	for ; i < len(p.events); i++ {
		if e := &p.events[i]; e.release && e.at > after {
			return e.at, i + 1, true
		}
	}
	return 0, i, false
}

// expectedEnd is a running job's start plus its estimate, or just after
// now when it has run past its estimate.
func expectedEnd(j *framework.Job, now int64) int64 {
	return max(runEnd(j), now+1)
}

// runEnd is when running job j is estimated to end: its start, plus the
// time it spent suspended by preemption, plus its estimate.
func runEnd(j *framework.Job) int64 {
	return satAdd(satAdd(j.Start, j.SuspendedFor), estimate(j))
}

// never is the end time of a job with no runtime estimate.
const never = 1 << 62

// estimate is a job's runtime estimate: the user's (-W), else the actual
// runtime, else unknown (never ends).
func estimate(j *framework.Job) int64 {
	switch {
	case j.Spec.Estimate > 0:
		return j.Spec.Estimate
	case j.Spec.Runtime > 0:
		return j.Spec.Runtime
	}
	return never
}

func satAdd(a, b int64) int64 {
	if b >= never-a {
		return never
	}
	return a + b
}
