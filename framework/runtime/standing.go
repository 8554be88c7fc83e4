package runtime

import (
	"sort"

	"github.com/xce-sched/xce/cluster"
	"github.com/xce-sched/xce/framework"
)

// A kept reservation that cannot move earlier stands: conservative
// backfilling re-plans every job after an early end (compression), and
// most keep their reservations. Whether a job can move is decided first
// on the projection's total free slots, which is a necessary condition
// for every plan, in O(log n) for most jobs; only a job that passes it is
// re-planned (issue 15).
//
// The condition. Let F be the total free slots the projection gives at
// each time, with every reservation in place, the job's own, which holds
// [s, s+e), included. Earliest tries a time t < s only when at least the
// job's fewest tasks n are free throughout [t, t+e) without its own
// reservation: so only if F ≥ n throughout [t, min(t+e, s)), where its own
// reservation holds nothing. That holds for some t in [now, s) exactly
// when
//
//	(a) F ≥ n just before s (some t close enough to s will do), or
//	(b) F ≥ n throughout some stretch of length e that ends by s.
//
// When neither holds, Earliest would try no time before s and keep the
// reservation as it stands; the projection is left as it is.

// stands reports whether job holds a kept reservation that Earliest would
// give back unchanged: it is in the projection (inProj), starts after now, this
// cycle placed no job over the reservations (so the reservation still
// fits with the others), and no time before its start has enough slots
// free (canMove). The cached checks Earliest makes first (the job can
// never run, or is stuck) must not hold either. The tests' oracle
// (considerAll) re-plans every job.
func (d *dispatcher) stands(job *framework.Job, inProj bool) bool {
	r := job.Reserved
	if r == nil || d.s.considerAll || !d.ready || r.Start <= d.now || d.unguarded || job.Req == nil || !d.s.keeps[job.Spec.Queue] {
		return false
	}
	if !inProj || d.s.runner.NeverFits(job) != "" || d.s.runner.isStuck(job) {
		return false
	}
	return !d.proj.gapsFrom(d.now).canMove(r.Start, estimate(job), minTasks(job))
}

// firstFit returns the earliest time before which no candidate start of
// job passes Earliest's check of free slots, read from the projection's
// total free slots with the job's reservation still in it (gaps.earliest:
// over [now, s) it holds nothing, s its start, when it is there: inProj),
// and the slots free then;
// free is -1 when from is now or no time passes (then from is never, or
// the reservation's start). Only a queue that keeps reservations asks:
// its cycles plan many jobs on one projection, which the gaps serve; an
// EASY head's single search reads fewer events without them.
func (d *dispatcher) firstFit(job *framework.Job, inProj bool) (from int64, free int) {
	if !d.ready || d.s.considerAll || job.Req == nil || !d.s.keeps[job.Spec.Queue] {
		return d.now, -1
	}
	s := int64(never)
	if r := job.Reserved; inProj {
		if r.Start <= d.now {
			return d.now, -1 // it holds its slots now: the totals say nothing
		}
		s = r.Start
	}
	t, f, ok := d.proj.gapsFrom(d.now).earliest(s, estimate(job), minTasks(job))
	if !ok || t == d.now {
		return t, -1
	}
	return t, f
}

// holds reports whether the projection has the start of a reservation
// holding alloc (the same pointer) at time start.
func (p *projection) holds(start int64, alloc *cluster.JobAlloc) bool {
	i := p.findRes(start, alloc)
	return i >= 0 && p.events[i].start
}

// gaps is the projection's total of free slots from a time on, as
// segments, and the runs of segments with some slot free; it is built on
// demand and kept while the projection and the live free slots stand.
type gaps struct {
	ok   bool
	ver  uint64
	now  int64
	live int
	at   []int64   // at[k]: when segment k begins (at[0] = now); it lasts to at[k+1], the last for ever
	free []int     // free[k]: the total of free slots during segment k
	runs []slotRun // the maximal runs of segments with free ≥ 1, in time order
}

// slotRun is a maximal run of segments first..last (inclusive) with at
// least one slot free throughout, over [a, b) (b: never for a run that
// lasts for ever). most is the most slots free in it; longest and mostAll
// are the greatest length (b - a) and most over this run and every run
// before it, which bound what any of them can offer.
type slotRun struct {
	a, b          int64
	first, last   int
	most, mostAll int
	longest       int64
}

// gapsFrom returns the gaps from now on, rebuilding them when the
// projection or the live free slots changed.
func (p *projection) gapsFrom(now int64) *gaps {
	g := &p.gaps
	live := p.live.TotalFreeSlots()
	if g.ok && g.ver == p.ver && g.now == now && g.live == live {
		return g
	}
	g.ok, g.ver, g.now, g.live = true, p.ver, now, live
	g.at, g.free, g.runs = g.at[:0], g.free[:0], g.runs[:0]
	ev, f, i := p.events, live, 0
	for ; i < len(ev) && ev[i].at <= now; i++ {
		f += ev[i].delta()
	}
	g.at, g.free = append(g.at, now), append(g.free, f)
	for i < len(ev) {
		t := ev[i].at
		for ; i < len(ev) && ev[i].at == t; i++ {
			f += ev[i].delta()
		}
		if f == g.free[len(g.free)-1] {
			continue // the same total goes on
		}
		g.at, g.free = append(g.at, t), append(g.free, f)
	}
	var longest int64
	mostAll := 0
	for k := 0; k < len(g.at); k++ {
		if g.free[k] < 1 {
			continue
		}
		r := slotRun{a: g.at[k], first: k, most: g.free[k]}
		for k+1 < len(g.at) && g.free[k+1] >= 1 {
			k++
			r.most = max(r.most, g.free[k])
		}
		r.last, r.b = k, g.end(k)
		longest, mostAll = max(longest, r.b-r.a), max(mostAll, r.most)
		r.longest, r.mostAll = longest, mostAll
		g.runs = append(g.runs, r)
	}
	return g
}

// end returns when segment k ends (never for the last).
func (g *gaps) end(k int) int64 {
	if k+1 < len(g.at) {
		return g.at[k+1]
	}
	return never
}

// canMove reports whether some time t in [now, s) has at least n slots
// free throughout [t, min(t+e, s)): condition (a) or (b) above. s must be
// after now.
func (g *gaps) canMove(s, e int64, n int) bool {
	k := sort.Search(len(g.at), func(i int) bool { return g.at[i] >= s }) - 1 // the segment just before s
	if g.free[k] >= n {
		return true // (a)
	}
	// (b): the runs that begin before s, latest first. Segment k has
	// fewer than n free, so a stretch of at least n ends by s.
	r := sort.Search(len(g.runs), func(i int) bool { return g.runs[i].a >= s }) - 1
	for ; r >= 0; r-- {
		run := &g.runs[r]
		if run.longest < e || run.mostAll < n {
			return false // neither this run nor any before it is long or high enough
		}
		if run.b-run.a >= e && run.most >= n && g.stretch(run, n, s) >= e {
			return true
		}
	}
	return false
}

// stretch returns the longest stretch of run with at least n slots free
// throughout among the segments that begin before s (canMove: the segment
// just before s has fewer, so no stretch reaches past s).
func (g *gaps) stretch(run *slotRun, n int, s int64) int64 {
	var best int64
	from := int64(-1) // the stretch under way began here (-1: none)
	for k := run.first; k <= run.last && g.at[k] < s; k++ {
		if g.free[k] < n {
			from = -1
			continue
		}
		if from < 0 {
			from = g.at[k]
		}
		best = max(best, g.end(k)-from)
	}
	return best
}

// earliest returns the earliest time t in [now, s) with at least n slots
// free throughout [t, min(t+e, s)), the slots free at t, and true; or s
// and false when there is none (canMove false). s may be never: then the
// stretch must be e long. Earliest tries no time before it: each fails
// its check of the free slots.
func (g *gaps) earliest(s, e int64, n int) (t int64, free int, ok bool) {
	from := -1 // the stretch under way began at segment from (-1: none)
	for k := 0; k < len(g.at) && g.at[k] < s; k++ {
		if g.free[k] < n {
			from = -1
			continue
		}
		if from < 0 {
			from = k
		}
		if end := g.end(k); end >= s || end-g.at[from] >= e {
			return g.at[from], g.free[from], true
		}
	}
	return s, 0, false
}
