package runtime

import (
	"context"
	"fmt"
	"slices"

	"github.com/xce-sched/xce/framework"
)

// ReasonCount is a number of pending jobs that share one main reason.
type ReasonCount struct {
	Reason framework.Reason
	Jobs   int
}

// behindHead is what a cycle left behind a blocked head under a
// framework.HoldsBehindHead policy, when every pending job is of its one
// queue: s.pending[at+1:] were held behind head (in arrival order), and
// byReason counts them by main reason. It stands while the pending list
// is the one that cycle left (n jobs, head at at; skipFrom): the next
// cycle then takes the jobs up to the head, goes on behind it only as far
// as jobs start, and holds the newcomers as the policy would
// (cycleBehind): strict FCFS behind a blocked head costs O(1) per event
// (issue 15).
type behindHead struct {
	head     *framework.Job // nil: nothing recorded
	at, n    int
	byReason []ReasonCount
}

// behindQueue reports whether the scheduler's one queue holds its jobs
// behind a blocked head, in an order the cycles keep: FCFS of arrival.
func (s *Scheduler) behindQueue() bool {
	c := s.Cluster
	return len(c.Queues) == 1 && s.holdsBehind[0] && s.arrival[0] && s.stable[0] && !c.Queues[0].Closed
}

// skipFrom returns, at the start of a cycle (before its newcomers are
// admitted), how many jobs at the front of the pending list (up to and
// including the head the last cycle blocked at) the cycle starts from,
// the rest being held behind that head; or -1 when it must consider every
// job. It holds when the pending list is the one the last cycle left (any
// other change to it forgets the head), no gate or preemption is at work,
// and the head's request cannot start it as hosts fill (Request.Rising):
// then only a release (or a host's status) can move the head, and the
// cycle goes on behind it only as far as jobs start (cycleBehind).
func (s *Scheduler) skipFrom() int {
	b := &s.behind
	h := b.head
	if h == nil || s.cycles == 0 || !s.canSkip() || !s.behindQueue() ||
		len(s.pending) != b.n || s.pending[b.at] != h || h.State != framework.Pending || h.Cycle != s.cycles ||
		h.Req == nil || h.Req.Rising {
		b.head = nil
		return -1
	}
	return b.at + 1
}

// cycleBehind is a cycle of a queue that holds its jobs behind a blocked
// head (skipFrom): the policy takes the jobs up to the head, then, while
// none of them blocks, the jobs behind it in pieces of doubling size, then
// the newcomers; once one blocks, the newcomers are held (as the policy
// would hold them), and the rest of the jobs behind keep their decision
// without being considered. The decisions are those of a cycle over every
// job: each job the policy would try is tried, in the same order, and each
// job it would hold is held already (Priority).
func (s *Scheduler) cycleBehind(ctx context.Context, now int64, front, newFrom int) ([]*framework.Job, error) {
	s.cycles++
	s.gatesAsked = false
	d := s.beginDispatch(now)
	b := &s.behind
	tail, news := s.pending[front:newFrom], s.pending[newFrom:]
	step := func(jobs []*framework.Job) (blocked bool, err error) {
		if err := ctx.Err(); err != nil {
			return false, err
		}
		s.holdReservations(d, jobs)
		if err := s.policies[0].Dispatch(d, s.sliceJobs.of(jobs)); err != nil {
			return false, fmt.Errorf("queue %s: %w", s.Cluster.Queues[0].Name, err)
		}
		for _, j := range jobs {
			j.Cycle = s.cycles
		}
		return slices.ContainsFunc(jobs, blocks), nil
	}
	blocked, err := step(s.order)
	thawed := 0
	for err == nil && !blocked && thawed < len(tail) {
		piece := tail[thawed : thawed+min(max(thawed, 1), len(tail)-thawed)]
		thawed += len(piece)
		tally(&b.byReason, piece, -1)
		lo := len(s.order)
		s.order = append(s.order, piece...)
		blocked, err = step(s.order[lo:])
	}
	if err == nil {
		s.standing = append(s.standing, b.byReason...) // the jobs behind not considered
		lo := len(s.order)
		s.order = append(s.order, news...)
		if blocked {
			s.holdReservations(d, s.order[lo:])
			for _, j := range s.order[lo:] {
				d.Hold(j)
				j.Cycle = s.cycles
			}
		} else {
			_, err = step(s.order[lo:])
		}
	}
	a, t := s.compactBehind(front+thawed, newFrom)
	if err != nil {
		s.forgetStanding()
		return s.order, err
	}
	s.wake = -1
	// The head: the first job not stuck among those considered ahead of
	// the untouched ones, else (every job behind was thawed) among the
	// newcomers; the jobs after it were held.
	b.head = nil
	if h := slices.IndexFunc(s.pending[:a], blocks); h >= 0 {
		b.head, b.at = s.pending[h], h
		tally(&b.byReason, s.pending[h+1:a], 1)
		tally(&b.byReason, s.pending[a+t:], 1)
	} else if h := slices.IndexFunc(s.pending[a+t:], blocks); h >= 0 && t == 0 {
		b.head, b.at = s.pending[a+h], a+h
		tally(&b.byReason, s.pending[a+h+1:], 1)
	}
	b.n = len(s.pending)
	if s.skippedFrom == 0 {
		s.skippedFrom = s.cycles
	}
	return s.order, nil
}

// blocks reports whether j pends without being stuck: under strict FCFS,
// the queue stops at it.
func blocks(j *framework.Job) bool { return j.State == framework.Pending && !j.Reasons.Stuck }

// compactBehind is compactPending after cycleBehind: s.pending[:k] and
// s.pending[newFrom:] were considered, s.pending[k:newFrom] were not (they
// all stay). It returns how many of the first k stay (now first in the
// list) and how many untouched jobs follow them.
func (s *Scheduler) compactBehind(k, newFrom int) (a, t int) {
	s.markAside()
	for _, j := range s.pending[:k] {
		if j.State == framework.Pending && !stays(j) {
			s.aside = append(s.aside, j)
		}
	}
	// The jobs of the front that stay move next to the untouched ones, and
	// the list starts at the first of them: no job behind moves.
	w := k
	for i := k - 1; i >= 0; i-- {
		if j := s.pending[i]; stays(j) {
			w--
			s.pending[w] = j
		}
	}
	clear(s.pending[:w])
	s.pending = s.pending[w:]
	s.compactFrom(newFrom - w)
	return k - w, newFrom - k
}

// recordBehind records, after a cycle that considered every pending job,
// the head it blocked at and the jobs it held behind it: the head is the
// first pending job not stuck, and every job after it was held.
func (s *Scheduler) recordBehind() {
	b := &s.behind
	b.head, b.byReason = nil, b.byReason[:0]
	if !s.canSkip() || !s.behindQueue() {
		return
	}
	if h := slices.IndexFunc(s.pending, blocks); h >= 0 {
		b.head, b.at, b.n = s.pending[h], h, len(s.pending)
		tally(&b.byReason, s.pending[h+1:], 1)
	}
}

// forgetStanding forgets what the last cycle left: the pending list
// changed otherwise than by a cycle (a job cancelled, requeued or put
// back), so the next cycle considers every job.
func (s *Scheduler) forgetStanding() {
	s.behind.head, s.quiet.valid, s.deferred.ok, s.skippedFrom = nil, false, false, 0
}

// canSkip reports whether a cycle may leave out jobs whose decisions
// stand: no gate and no preemption is at work (their jobs are looked at
// in every cycle), and the tests' oracle is off (ConsiderEveryJob).
func (s *Scheduler) canSkip() bool {
	return !s.considerAll && s.gated+s.requeuing == 0 && len(s.suspended) == 0
}

// tally adds n times each of jobs, by main reason, to counts (n = -1
// takes them out).
func tally(counts *[]ReasonCount, jobs []*framework.Job, n int) {
	for _, j := range jobs {
		addReason(counts, j.Reasons.Main, n)
	}
}

// Standing returns the pending jobs the last cycle did not consider
// because their decisions stand, counted by main reason: the jobs held
// behind a blocked head under a framework.HoldsBehindHead policy (strict
// FCFS), the jobs deferred beyond a framework.TestsFirst policy's depth
// (max_job_test), and, in a cycle in which nothing was released, the jobs
// a framework.SkipsUnchanged policy would skip. Each keeps the reasons of
// the cycle that decided it. It is empty after a cycle that considered
// every pending job. The slice is the scheduler's, valid until the next
// cycle.
func (s *Scheduler) Standing() []ReasonCount { return s.standing }
