package runtime

import (
	"slices"

	"github.com/xce-sched/xce/framework"
)

// quietRecord is what the last complete cycle left for a partial cycle
// under policies that skip the jobs whose decision stands
// (framework.SkipsUnchanged):
//
//   - a quiet cycle, in which nothing was released, considers only the
//     volatile jobs (a reservation, which its policy re-records or
//     re-plans, or a select[] that may turn true as hosts fill) and the
//     newcomers;
//   - a release cycle, under policies that also skip jobs too large to
//     start (framework.SkipsTooLarge), considers every job but those
//     that pended for want of slots and ask for more than are free in all
//     (and keeps, per queue whose first blocked job has a part of its
//     own, the first of them).
//
// Every other pending job would be skipped (issue 15), and keeps its
// decision and reason.
type quietRecord struct {
	valid    bool
	n        int           // len(s.pending) after that cycle
	byReason []ReasonCount // the pending jobs by main reason
	// volatile are the volatile pending jobs and rest the others, each in
	// pending order (seq); a job of rest has the slots it needs when a
	// release cycle may leave it out while fewer are free (0: it is
	// always considered).
	volatile []sized
	rest     []sized
	seq      uint64  // the next job's place in pending order
	old      []sized // scratch: the jobs before the newcomers this cycle considers
	sel      []sized // scratch
	policies []bool  // per queue: its policy is a framework.SkipsUnchanged
	tooLarge []uint8 // per queue: skipsNone, skipsTooLarge or skipsAfterFirst
	first    []bool  // scratch, per queue: its first too-large job is kept
}

// sized is a pending job, its place in pending order (ascending along
// the list; the newcomers of a cycle come after every job before them)
// and the slots it needs in all (see quietRecord.rest).
type sized struct {
	need int
	seq  uint64
	job  *framework.Job
}

// How a queue's policy skips jobs too large to start (framework.SkipsTooLarge).
const (
	skipsNone       uint8 = iota
	skipsTooLarge         // every one of them
	skipsAfterFirst       // all but the first (FirstBlocked)
)

// quietQueues reports whether every queue's policy skips unchanged jobs
// and its jobs are taken in arrival order, none preempts, none is closed.
func (s *Scheduler) quietQueues() bool {
	for qi, q := range s.Cluster.Queues {
		if !s.quiet.policies[qi] || !s.arrival[qi] || !s.stable[qi] || q.Closed || len(q.Preemptive) > 0 {
			return false
		}
	}
	return true
}

// quietCycle reports, at the start of a cycle (before its newcomers are
// admitted), whether the cycle is partial: no job placed over the
// reservations, no host's status changed, no gate or preemption at work,
// the pending list the one the last complete cycle left, and either
// nothing released (quiet) or every queue's policy skipping jobs too
// large to start (release). It then puts the jobs it considers in q.old,
// in pending order, and takes them out of the tally, which is left
// counting the jobs not considered.
func (s *Scheduler) quietCycle() bool {
	q := &s.quiet
	if !q.valid || s.unguarded || s.cycles == 0 || !s.canSkip() || len(s.pending) != q.n || !s.quietQueues() {
		q.valid = false
		return false
	}
	if s.released || s.offPlan {
		if slices.Contains(q.tooLarge, skipsNone) || slices.Contains(q.tooLarge, skipsAfterFirst) && s.neverEnds() {
			// A job that never ends may leave a first blocked job without
			// a reservation, and then the next one has its part.
			q.valid = false
			return false
		}
		q.fitting(s.State.TotalFreeSlots())
	} else {
		q.old = append(q.old[:0], q.volatile...)
	}
	for _, e := range q.old {
		addReason(&q.byReason, e.job.Reasons.Main, -1)
	}
	s.standing = append(s.standing[:0], q.byReason...)
	return true
}

// fitting puts in q.old the volatile jobs and those of q.rest that may
// start with free slots free (and the first too large one of each queue
// whose policy gives it a part), in pending order, and leaves the others
// in q.rest.
func (q *quietRecord) fitting(free int) {
	q.sel = q.sel[:0]
	q.first = slices.Grow(q.first[:0], len(q.tooLarge))[:len(q.tooLarge)]
	clear(q.first)
	n := 0
	for _, e := range q.rest {
		if e.need > free {
			qi := e.job.Spec.Queue
			if q.tooLarge[qi] != skipsAfterFirst || q.first[qi] {
				q.rest[n] = e
				n++
				continue
			}
			q.first[qi] = true
		}
		q.sel = append(q.sel, e)
	}
	clear(q.rest[n:])
	q.rest = q.rest[:n]
	q.old = mergeSized(append(q.old[:0], q.volatile...), q.sel)
}

// neverEnds reports whether a running job has no estimated end: the
// last by estimated end.
func (s *Scheduler) neverEnds() bool {
	return len(s.byEnd) > 0 && s.byEnd[len(s.byEnd)-1].at >= never
}

// overrun reports whether a running job is still running at or after its
// estimated end at now: the first by estimated end.
func (s *Scheduler) overrun(now int64) bool {
	return len(s.byEnd) > 0 && s.byEnd[0].at <= now
}

// volatile reports whether a pending job's decision may change with
// nothing released: it holds a reservation, or its select[] may turn true
// as hosts fill.
func volatile(j *framework.Job) bool {
	return j.Reserved != nil || j.Req != nil && j.Req.Rising
}

// tooLarge returns the slots pending job j needs in all when a release
// cycle may leave it out while fewer are free (framework.SkipsTooLarge):
// it pends for want of slots, and its request is one plain term that no
// preparer takes part in. Else 0.
func (s *Scheduler) tooLarge(j *framework.Job) int {
	if s.quiet.tooLarge[j.Spec.Queue] == skipsNone || j.Reasons.Main != framework.NotEnoughSlots || j.Reasons.Stuck ||
		j.Reserved != nil || j.Req == nil || !s.runner.plain(j) {
		return 0
	}
	return minTasks(j)
}

// compactQuiet is compactPending after a partial cycle: of the jobs
// before newFrom, only the considered ones (q.old, in pending order) may
// leave. It returns where the newcomers start in the compacted list.
func (s *Scheduler) compactQuiet(newFrom int) int {
	s.asideNew = len(s.aside)
	leaving := 0
	for _, e := range s.quiet.old {
		if !stays(e.job) {
			leaving++
			if e.job.State == framework.Pending {
				s.aside = append(s.aside, e.job)
			}
		}
	}
	if leaving > 0 {
		// Both lists are in pending order: one pass, comparing pointers.
		old, k, n := s.quiet.old, 0, 0
		for _, j := range s.pending[:newFrom] {
			for k < len(old) && stays(old[k].job) {
				k++
			}
			if k < len(old) && old[k].job == j {
				k++
				continue
			}
			s.pending[n] = j
			n++
		}
		s.pending = append(s.pending[:n], s.pending[newFrom:]...)
		newFrom = n
	}
	s.compactFrom(newFrom)
	return newFrom
}

// recordQuiet records, after a complete cycle, what the next partial
// cycle needs. After a partial cycle (newFrom ≥ 0: where its newcomers
// start in the compacted list) only the jobs it considered are counted
// again, and go back among the others in pending order; after any other,
// every pending job is.
func (s *Scheduler) recordQuiet(newFrom int) {
	q := &s.quiet
	if !s.canSkip() || !s.quietQueues() {
		q.valid = false
		return
	}
	q.volatile = q.volatile[:0]
	if newFrom < 0 {
		q.byReason, q.rest, q.seq = q.byReason[:0], q.rest[:0], 0
		s.take(s.pending, &q.rest)
	} else {
		q.sel = q.sel[:0]
		for _, e := range q.old {
			if stays(e.job) {
				s.takeOne(e.job, e.seq, &q.sel)
			}
		}
		q.rest = mergeSized(q.rest, q.sel)
		s.take(s.pending[newFrom:], &q.rest)
	}
	clear(q.old)
	q.valid, q.n = true, len(s.pending)
}

// take counts newly recorded pending jobs (in pending order, after every
// job recorded) by main reason, numbers them, keeps the volatile ones and
// appends the others to rest.
func (s *Scheduler) take(jobs []*framework.Job, rest *[]sized) {
	q := &s.quiet
	for _, j := range jobs {
		s.takeOne(j, q.seq, rest)
		q.seq++
	}
}

// takeOne counts pending job j, of place seq, by main reason and appends
// it to q.volatile or rest.
func (s *Scheduler) takeOne(j *framework.Job, seq uint64, rest *[]sized) {
	q := &s.quiet
	addReason(&q.byReason, j.Reasons.Main, 1)
	if volatile(j) {
		q.volatile = append(q.volatile, sized{0, seq, j})
	} else {
		*rest = append(*rest, sized{s.tooLarge(j), seq, j})
	}
}

// mergeSized merges b into a, both in pending order (seq), and returns
// the result, which reuses a.
func mergeSized(a, b []sized) []sized {
	if len(b) == 0 {
		return a
	}
	n := len(a)
	a = append(a, b...)
	// From the back: a[:n] and b, both sorted, into a.
	i, j := n-1, len(b)-1
	for k := len(a) - 1; j >= 0; k-- {
		if i >= 0 && a[i].seq > b[j].seq {
			a[k] = a[i]
			i--
		} else {
			a[k] = b[j]
			j--
		}
	}
	return a
}

// addReason adds n jobs of main reason r to counts, dropping a reason
// whose count falls to zero.
func addReason(counts *[]ReasonCount, r framework.Reason, n int) {
	c := *counts
	for i := range c {
		if c[i].Reason == r {
			if c[i].Jobs += n; c[i].Jobs == 0 {
				*counts = slices.Delete(c, i, i+1)
			}
			return
		}
	}
	*counts = append(c, ReasonCount{r, n})
}
