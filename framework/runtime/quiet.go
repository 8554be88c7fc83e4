package runtime

import (
	"context"
	"fmt"
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
//     their turn, and those held for reservations that stay held
//     (keyOf and releaseLimits give the rules; under a policy whose first
//     blocked job has a part of its own, none is left out before a job of
//     the queue holds a reservation); of those it considers, it decides
//     itself the ones whose reason alone changes (settle).
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
	// toNES and toPriority count the jobs the cycle under way settled
	// from Priority to NotEnoughSlots and back (settle): they are in the
	// tally under their old reason until recordQuiet.
	toNES, toPriority int
	dirty             []int // recordQuiet's scratch
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

// indexPlace is a job's place in its queue's index, and whether the
// cycle decided it without its policy (settled: its leaf has its new
// keys already).
type indexPlace struct {
	pos     int32
	queue   cluster.QueueID
	settled bool
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
	q.took, q.drained, q.toNES, q.toPriority = q.took[:0], 0, 0, 0
	for i := range q.index {
		q.index[i].fresh = len(q.index[i].jobs)
	}
	return true
}

// cycleQuiet is a partial cycle (quietCycle) after its newcomers,
// s.pending[newFrom:], were admitted: each queue's policy, in priority
// order, takes the jobs the cycle must consider (quietJobs), and the
// others keep their decisions without being looked at.
func (s *Scheduler) cycleQuiet(ctx context.Context, now int64, newFrom int) ([]*framework.Job, error) {
	q := &s.quiet
	for _, j := range s.pending[newFrom:] {
		k := noKeys
		k.a = keyAlways
		q.index[j.Spec.Queue].add(j, sizeOf(j), k)
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
		it := &s.quietJobs
		it.start(s, d, qi)
		err = s.policies[qi].Dispatch(d, it)
		it.finish()
		if err != nil {
			for _, j := range s.order[lo:] { // the sequence marks each job the policy saw through
				j.Cycle = s.cycles
			}
			err = fmt.Errorf("queue %s: %w", s.Cluster.Queues[qi].Name, err)
			break
		}
	}
	s.standing = append(s.standing[:0], q.byReason...)
	addReason(&s.standing, framework.Priority, -q.toNES)
	addReason(&s.standing, framework.NotEnoughSlots, -q.toPriority)
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

// quietJobs is the sequence (framework.Jobs) of the jobs of one queue
// that the partial cycle under way considers, in pending order: each is
// taken out of the tally, readied as holdReservations would and appended
// to s.order as Next returns it. Whether a job too large for the free
// slots is left out is decided at its turn, with the slots the jobs
// before it left free.
type quietJobs struct {
	s  *Scheduler
	d  *dispatcher
	qi cluster.QueueID
	p  int // the next position to look from
	// skip: the jobs too large may be left out; under a policy whose
	// first blocked job has a part of its own (EASY's reservation), only
	// once a job of the queue holds a reservation.
	skip bool
	// last is the job Next returned last, which the policy has since
	// decided; l are the limits at the turn of the next, stale once the
	// policy took a step (only its steps change what they depend on).
	last  *framework.Job
	l     limits
	stale bool
	done  bool
}

// start readies the sequence of queue qi's jobs for the cycle.
func (it *quietJobs) start(s *Scheduler, d *dispatcher, qi cluster.QueueID) {
	*it = quietJobs{s: s, d: d, qi: qi, skip: s.quiet.tooLarge[qi] != skipsAfterFirst, stale: true}
}

// finish marks the job Next returned last as considered by the cycle.
func (it *quietJobs) finish() {
	if it.last != nil {
		it.last.Cycle = it.s.cycles
		it.skip = it.skip || it.last.Reserved != nil
		it.last, it.stale = nil, true
	}
}

// Next implements framework.Jobs.
func (it *quietJobs) Next() (*framework.Job, bool) {
	s, q := it.s, &it.s.quiet
	x := &q.index[it.qi]
	it.finish()
	for !it.done {
		if it.stale {
			switch {
			case !q.release:
				it.l = quietLimits
			case !it.skip:
				it.l = allLimits
			default:
				s.releaseLimits(it.d, &it.l)
			}
			it.stale = false
		}
		p := x.next(it.p, &it.l)
		if p < 0 {
			it.done = true
			q.drained++
			break
		}
		it.p = p + 1
		j := x.jobs[p]
		if q.release && it.skip && s.settle(j, &x.sizes[p], &x.k[x.size+p], &it.l) {
			q.took = append(q.took, indexPlace{int32(p), it.qi, true})
			s.order = append(s.order, j)
			j.Cycle = s.cycles
			continue
		}
		if p < x.fresh {
			addReason(&q.byReason, j.Reasons.Main, -1)
		}
		q.took = append(q.took, indexPlace{pos: int32(p), queue: it.qi})
		s.holdJob(it.d, j)
		s.order = append(s.order, j)
		it.last = j
		return j, true
	}
	return nil, false
}

// sliceJobs is a slice of jobs as a framework.Jobs.
type sliceJobs struct {
	jobs []*framework.Job
	i    int
}

// Next implements framework.Jobs.
func (it *sliceJobs) Next() (*framework.Job, bool) {
	if it.i >= len(it.jobs) {
		return nil, false
	}
	it.i++
	return it.jobs[it.i-1], true
}

// of returns it, reset to the jobs of jobs.
func (it *sliceJobs) of(jobs []*framework.Job) *sliceJobs {
	*it = sliceJobs{jobs: jobs}
	return it
}

// releaseLimits sets l to what a release cycle considers at a job's turn,
// once jobs too large may be left out (quietJobs): a job too large for
// the slots free now (or, unless want of slots is its only reason to pend,
// at the cycle's start) is left out. So is a job held for reservations
// (Priority) that still fits in the free slots and that the projection
// still shows cannot start without delaying them: the least free slots
// over its estimated run from now (projection.minFreeSlots) are fewer
// than it needs, since its run reaches the time they fall to their least
// (projection.lastDrop) and it needs more than that least. Its policy
// would take it by TryStart (the cycle holds reservations, and the
// queue's own under FirstBlocked), which holds it again with no attempt.
func (s *Scheduler) releaseLimits(d *dispatcher, l *limits) {
	q := &s.quiet
	free := s.State.TotalFreeSlots()
	*l = limits{a: q.free0, b: q.free0, free: -1, est: -1, need: -1} // every held job
	if !q.slotsOnly {
		return
	}
	l.a = clampKey(free)
	if !d.reserving() {
		return
	}
	d.setup()
	at0, at, level := d.proj.lastDrop(d.now)
	// With fewer free at now in the projection than live, a job that fits
	// now might not fit there and yet start with no reservation in its way.
	if at < 0 || at0 < free {
		return
	}
	l.free, l.est, l.need = clampKey(free), clampKey64(at-d.now), clampKey(level)
}

// settle decides, at its turn in a release cycle that may leave out jobs
// too large (quietJobs, with limits l), a job indexed under keys k whose
// reason alone changes, as its policy would decide it, without it: the
// policy would take it by TryStart (or Allocate, which is TryStart once
// the cycle holds reservations), and
//   - a job held for reservations (Priority) that needs more slots than
//     are free now pends for want of slots (NotEnoughSlots: the runner's
//     attempt, of a request that nothing but slots can stop, gives no
//     other main reason; no host counts are kept, as for any job a
//     partial cycle leaves out, Options.SkipTooLarge);
//   - a job that pended for want of slots (keys k.a) and now fits in the
//     free slots, but that the projection shows cannot start without
//     delaying the reservations (releaseLimits), is held (Priority), as
//     Dispatcher.Block holds it.
//
// It reports whether it decided j, whose reason it then changed, and
// whose keys k (its leaf in the index, which the nodes above do not
// follow before recordQuiet) it then set to those keyOf would give.
func (s *Scheduler) settle(j *framework.Job, z *jobSize, k *keys, l *limits) bool {
	free := s.State.TotalFreeSlots()
	var r framework.Reason
	switch {
	case k.needMin != keyNone: // held
		if int(z.tasks) <= free || z.tasks == keyAll-1 {
			return false
		}
		r = framework.NotEnoughSlots
		k.needMax, k.needMin, k.est, k.a = -1, keyNone, keyNone, z.tasks
		s.quiet.toNES++
	case k.a > 0 && k.a != keyNone && l.free >= 0: // pended for want of slots; the projection's limits hold
		most := max(z.tasks, z.tasksMin)
		if int(most) > free || most == keyAll-1 || z.est <= l.est || z.tasks <= l.need {
			return false
		}
		r = framework.Priority
		k.held(z)
		s.quiet.toPriority++
	default:
		return false
	}
	// As j.Reasons = PendReasons{Main: r, Detail: -1}, writing only what
	// differs (a pointer written costs a write barrier while GC runs).
	pr := &j.Reasons
	pr.Main, pr.Detail, pr.Stuck = r, -1, false
	if pr.Note != "" {
		pr.Note = ""
	}
	if pr.Hosts != nil {
		pr.Hosts = nil
	}
	if pr.Shared != nil {
		pr.Shared = nil
	}
	j.Unchanged = false
	return true
}

// keyOf returns the keys under which a pending job is indexed (pendIndex):
//   - a volatile job: a = keyAlways;
//   - a job that a partial cycle leaves out when fewer than n slots are
//     free at its turn (tooLarge, and Runner.WantsSlotsOnly: want of slots
//     is then the only reason it can pend for, and the attempt would give
//     it the reasons it has): a = n;
//   - one left out only when fewer than n are free at the cycle's start
//     (the rule of framework.SkipsTooLarge): b = n;
//   - a job held for reservations (held): its slots and estimate;
//   - any other, which every release cycle considers: a = 0.
func (s *Scheduler) keyOf(j *framework.Job) keys {
	k := noKeys
	switch n := s.tooLarge(j); {
	case volatile(j):
		k.a = keyAlways
	case n > 0 && s.runner.WantsSlotsOnly(j):
		k.a = clampKey(n)
	case n > 0:
		k.b = clampKey(n)
	case s.held(j):
		z := sizeOf(j)
		k.held(&z)
	default:
		k.a = 0
	}
	return k
}

// sizeOf returns what pending job j asks for (jobSize).
func sizeOf(j *framework.Job) jobSize {
	z := jobSize{tasksMin: clampKey(j.Spec.TasksMin), est: clampKey64(estimate(j))}
	if j.Req != nil {
		z.tasks = clampKey(minTasks(j))
	}
	return z
}

// held reports whether pending job j pends for reservations (Priority),
// under a policy that skips jobs too large to start, with a request that
// nothing but slots can stop (Runner.WantsSlotsOnly): a release cycle
// may leave it out (releaseLimits).
func (s *Scheduler) held(j *framework.Job) bool {
	return s.quiet.tooLarge[j.Spec.Queue] != skipsNone && j.Reasons.Main == framework.Priority && !j.Reasons.Stuck &&
		j.Reserved == nil && j.Req != nil && s.runner.plain(j) && s.runner.WantsSlotsOnly(j)
}

// clampKey returns n as a key or limit, within [-1, keyAll - 1]: a
// comparison of two clamped values may say ≤ where the values are not,
// when both are at the top, and so consider a job it could leave out,
// never the other way round.
func clampKey(n int) int32 {
	return int32(min(max(n, -1), keyAll-1))
}

// clampKey64 is clampKey for seconds.
func clampKey64(n int64) int32 {
	return int32(min(max(n, -1), keyAll-1))
}

// leaveQuiet, after a partial cycle, takes the considered jobs that left
// the pending list (started, cancelled, or stuck: those are set aside)
// out of the index; they stay in s.pending, counted in s.gone, until it
// is settled (settlePending), which happens once they are half of it.
func (s *Scheduler) leaveQuiet() {
	q := &s.quiet
	s.markAside()
	for _, t := range q.took {
		if t.settled {
			continue // it pends on
		}
		x := &q.index[t.queue]
		j := x.jobs[t.pos]
		if stays(j) {
			continue
		}
		x.removeLeaf(int(t.pos)) // the nodes above: recordQuiet
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
	// The considered jobs come queue after queue, each queue's in order.
	for lo := 0; lo < len(q.took); {
		qi := q.took[lo].queue
		x := &q.index[qi]
		q.dirty = q.dirty[:0]
		for ; lo < len(q.took) && q.took[lo].queue == qi; lo++ {
			t := &q.took[lo]
			q.dirty = append(q.dirty, int(t.pos))
			if t.settled {
				continue // its leaf is set (settle), and it is counted below
			}
			j := x.jobs[t.pos]
			if j == nil {
				continue // gone (leaveQuiet)
			}
			x.setLeaf(int(t.pos), s.keyOf(j))
			addReason(&q.byReason, j.Reasons.Main, 1)
		}
		x.fix(q.dirty)
	}
	addReason(&q.byReason, framework.Priority, q.toPriority-q.toNES)
	addReason(&q.byReason, framework.NotEnoughSlots, q.toNES-q.toPriority)
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
		q.index[j.Spec.Queue].add(j, sizeOf(j), s.keyOf(j))
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
	if n == 0 {
		return
	}
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
