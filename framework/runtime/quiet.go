package runtime

import (
	"context"
	"fmt"
	"iter"
	"slices"

	"github.com/xce-sched/xce/cluster"
	"github.com/xce-sched/xce/framework"
)

// quietRecord is what the last complete cycle left, and the partial
// cycles since kept up, for a partial cycle under policies that skip the
// jobs whose decision stands (framework.SkipsUnchanged):
//
//   - a quiet cycle, in which nothing was released, considers only the
//     volatile jobs (a reservation, which its policy re-records or
//     re-plans, or a select[] that may turn true as hosts fill) and the
//     newcomers;
//   - a release cycle, under policies that also skip jobs too large to
//     start (framework.SkipsTooLarge), considers every job but those that
//     pended for want of slots and ask for more than are free in all at
//     their turn (keyOf gives the rule; under a policy whose first
//     blocked job has a part of its own, none is left out before a job of
//     the queue holds a reservation).
//
// Every other pending job is skipped (issue 15): it keeps its decision
// and reason, and the cycle never touches it. Each queue's pending jobs
// are in an index (pendIndex) under keys that say which cycles consider
// them, so that a cycle costs the jobs it considers (each found in
// O(log n)), not the queue.
type quietRecord struct {
	valid    bool
	n        int           // len(s.pending) after that cycle, the jobs gone included (Scheduler.gone)
	byReason []ReasonCount // the pending jobs by main reason, but for those the cycle under way considered
	index    []pendIndex   // per queue: its pending jobs, in pending order
	// took are the jobs the cycle under way considered, in that order;
	// drained counts the queues whose jobs it went through to the end.
	took    []indexPlace
	drained int
	// release: the cycle under way follows a release (it may leave out
	// jobs too large to start only); free0: the free slots at its start;
	// slotsOnly: every host was open then (Runner.WantsSlotsOnly may
	// hold).
	release   bool
	free0     int32
	slotsOnly bool
	policies  []bool  // per queue: its policy is a framework.SkipsUnchanged
	tooLarge  []uint8 // per queue: skipsNone, skipsTooLarge or skipsAfterFirst
}

// indexPlace is a job's place in its queue's index.
type indexPlace struct {
	queue cluster.QueueID
	pos   int
}

// How a queue's policy skips jobs too large to start (framework.SkipsTooLarge).
const (
	skipsNone       uint8 = iota
	skipsTooLarge         // every one of them
	skipsAfterFirst       // those after the first blocked one (FirstBlocked)
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
// the pending list the one the last cycle left, and either nothing
// released (quiet) or every queue's policy skipping jobs too large to
// start (release).
func (s *Scheduler) quietCycle() bool {
	q := &s.quiet
	if !q.valid || s.unguarded || s.cycles == 0 || !s.canSkip() || len(s.pending) != q.n || !s.quietQueues() {
		q.valid = false
		return false
	}
	q.release = s.released || s.offPlan
	if q.release && slices.Contains(q.tooLarge, skipsNone) {
		q.valid = false
		return false
	}
	q.free0, q.slotsOnly = clampKey(s.State.TotalFreeSlots()), s.runner.allOpen
	q.took, q.drained = q.took[:0], 0
	for i := range q.index {
		q.index[i].fresh = len(q.index[i].jobs)
	}
	return true
}

// cycleQuiet is a partial cycle (quietCycle) after its newcomers,
// s.pending[newFrom:], were admitted: each queue's policy, in priority
// order, takes the jobs the cycle must consider (considered), and the
// others keep their decisions without being looked at.
func (s *Scheduler) cycleQuiet(ctx context.Context, now int64, newFrom int) ([]*framework.Job, error) {
	q := &s.quiet
	for _, j := range s.pending[newFrom:] {
		q.index[j.Spec.Queue].add(j, keyAlways, keyNone)
	}
	s.cycles++
	s.gatesAsked = false
	d := s.beginDispatch(now)
	d.partial = true
	s.order = s.order[:0]
	var err error
	ran := 0
	for _, qi := range s.byPriority {
		if q.index[qi].live == 0 {
			continue
		}
		if err = ctx.Err(); err != nil {
			break
		}
		lo := len(s.order)
		ran++
		err = s.policies[qi].Dispatch(d, s.considered(d, qi))
		for _, j := range s.order[lo:] {
			j.Cycle = s.cycles
		}
		if err != nil {
			err = fmt.Errorf("queue %s: %w", s.Cluster.Queues[qi].Name, err)
			break
		}
	}
	s.standing = append(s.standing[:0], q.byReason...)
	s.leaveQuiet()
	if err != nil || q.drained != ran {
		// A queue's jobs not gone through leave the tally short.
		s.forgetStanding()
		return s.order, err
	}
	s.wake = -1 // no gate, no reservation kept (quietQueues)
	s.recordQuiet()
	if s.skippedFrom == 0 {
		s.skippedFrom = s.cycles
	}
	return s.order, nil
}

// considered returns the jobs of queue qi that the partial cycle under
// way considers, in pending order, each taken out of the tally, readied
// as holdReservations would and appended to s.order as it is yielded.
// Whether a job too large for the free slots is left out is decided at
// its turn, with the slots the jobs before it left free.
func (s *Scheduler) considered(d *dispatcher, qi cluster.QueueID) iter.Seq[*framework.Job] {
	return func(yield func(*framework.Job) bool) {
		q := &s.quiet
		x := &q.index[qi]
		// skip: the jobs too large may be left out; under a policy whose
		// first blocked job has a part of its own (EASY's reservation),
		// only once a job of the queue holds a reservation.
		skip := q.tooLarge[qi] != skipsAfterFirst
		var last *framework.Job
		for p := 0; ; p++ {
			skip = skip || last != nil && last.Reserved != nil
			fa, fb := int32(keyAlways), int32(keyAlways)
			switch {
			case !q.release:
			case !skip:
				fa, fb = keyAll, keyAll
			case q.slotsOnly:
				fa, fb = clampKey(s.State.TotalFreeSlots()), q.free0
			default:
				fa, fb = q.free0, q.free0
			}
			if p = x.next(p, fa, fb); p < 0 {
				q.drained++
				return
			}
			j := x.jobs[p]
			if p < x.fresh {
				addReason(&q.byReason, j.Reasons.Main, -1)
			}
			q.took = append(q.took, indexPlace{qi, p})
			s.holdJob(d, j)
			s.order = append(s.order, j)
			if !yield(j) {
				return
			}
			last = j
		}
	}
}

// keyOf returns the keys under which a pending job is indexed (pendIndex):
// (keyAlways, keyNone) for a volatile job; (n, keyNone) for one a partial
// cycle leaves out when fewer than n slots are free at its turn (tooLarge,
// and Runner.WantsSlotsOnly: want of slots is then the only reason it can
// pend for, and the attempt would give it the reasons it has); (keyNone,
// n) for one left out only when fewer than n are free at the cycle's
// start (the rule of framework.SkipsTooLarge); (0, keyNone) for any other,
// which every release cycle considers.
func (s *Scheduler) keyOf(j *framework.Job) (a, b int32) {
	if volatile(j) {
		return keyAlways, keyNone
	}
	n := s.tooLarge(j)
	switch {
	case n == 0:
		return 0, keyNone
	case s.runner.WantsSlotsOnly(j):
		return clampKey(n), keyNone
	}
	return keyNone, clampKey(n)
}

// clampKey returns n as a key: at most keyAll - 1, so that a job under
// it is one a threshold of n or more takes.
func clampKey(n int) int32 {
	return int32(min(n, keyAll-1))
}

// leaveQuiet, after a partial cycle, takes the considered jobs that left
// the pending list (started, cancelled, or stuck: those are set aside)
// out of the index; they stay in s.pending, counted in s.gone, until it
// is settled (settlePending), which happens once they are half of it.
func (s *Scheduler) leaveQuiet() {
	q := &s.quiet
	s.asideNew = len(s.aside)
	for _, t := range q.took {
		x := &q.index[t.queue]
		j := x.jobs[t.pos]
		if stays(j) {
			continue
		}
		x.remove(t.pos)
		s.gone++
		if j.State == framework.Pending {
			s.aside = append(s.aside, j)
		}
	}
	if 2*s.gone > len(s.pending) {
		s.settlePending()
	}
}

// recordQuiet, after a partial cycle, indexes the considered jobs that
// still pend under their new keys and counts them again.
func (s *Scheduler) recordQuiet() {
	q := &s.quiet
	if !s.canSkip() || !s.quietQueues() {
		q.valid = false
		return
	}
	for _, t := range q.took {
		x := &q.index[t.queue]
		if j := x.jobs[t.pos]; j != nil {
			a, b := s.keyOf(j)
			x.set(t.pos, a, b)
			addReason(&q.byReason, j.Reasons.Main, 1)
		}
	}
	clear(q.took)
	q.took = q.took[:0]
	for i := range q.index {
		q.index[i].compact()
	}
	q.valid, q.n = true, len(s.pending)
}

// recordAll, after a complete cycle, indexes and counts every pending job.
func (s *Scheduler) recordAll() {
	q := &s.quiet
	if !s.canSkip() || !s.quietQueues() {
		q.valid = false
		return
	}
	q.byReason = q.byReason[:0]
	for i := range q.index {
		q.index[i].reset()
	}
	for _, j := range s.pending {
		a, b := s.keyOf(j)
		q.index[j.Spec.Queue].add(j, a, b)
		addReason(&q.byReason, j.Reasons.Main, 1)
	}
	q.valid, q.n = true, len(s.pending)
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
