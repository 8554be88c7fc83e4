package runtime

import (
	"fmt"
	"slices"

	"github.com/xce-sched/xce/cluster"
	"github.com/xce-sched/xce/framework"
)

// deferredTail is what a cycle left beyond the depth of a queue whose
// policy plans only its first jobs (framework.TestsFirst: max_job_test),
// when every pending job is of that one queue: s.pending[at:] were
// deferred (the at jobs before them were within the depth and still
// pend), byReason counts them by main reason, and n is the length of the
// list then. It stands while the pending list is the one that cycle left:
// the next cycle considers the first depth jobs, as many more as room
// opens (planMore), and the newcomers; the jobs between stay deferred
// without being considered (depthFrom). A cycle then costs the depth and
// the newcomers, not the queue (issue 15).
type deferredTail struct {
	ok       bool
	at, n    int
	byReason []ReasonCount
	thawed   []*framework.Job // the jobs left out that this cycle planned after all (planMore)
}

// depthOf returns the depth of the scheduler's one queue (its policy's
// MaxJobTest) when the queue keeps its jobs in arrival order; 0 when there
// is none, or more than one queue.
func (s *Scheduler) depthOf() int {
	c := s.Cluster
	if len(c.Queues) != 1 || !s.arrival[0] || !s.stable[0] || c.Queues[0].Closed {
		return 0
	}
	return s.depth[0]
}

// depthFrom returns, at the start of a cycle (before its newcomers are
// admitted), the depth k when the cycle may leave out s.pending[k:]: the
// last cycle deferred them, the list is as it left it (and holds no job
// gone since, settlePending), and no gate or preemption is at work. Those
// that come within the depth now (the jobs before them left) are taken
// out of the count of what stands; planMore takes more of them as room
// opens. It returns -1 when the cycle must consider every job.
func (s *Scheduler) depthFrom() int {
	b := &s.deferred
	k := s.depthOf()
	if !b.ok || k == 0 || !s.canSkip() || s.gone != 0 || len(s.pending) != b.n || b.at > k || len(s.pending) <= k {
		b.ok = false
		return -1
	}
	tally(&b.byReason, s.pending[b.at:k], -1)
	return k
}

// planMore plans, after the policy's pass over seg (the jobs of queue q
// in order; the cycle left out tail, which comes between seg[:depth] and
// the newcomers, in a depth cycle), the jobs it deferred, as far as the
// jobs before them left room: of the first k jobs, those that started, and
// those that can never run (stuck: they are set aside), count for
// nothing. Each pass gives the policy as many deferred jobs, in order, as
// there is room; those that start make room for the next pass. So the
// policy plans the first k jobs that pend without being stuck, as the
// jobs before them start within the cycle.
func (s *Scheduler) planMore(d *dispatcher, q cluster.QueueID, seg, tail []*framework.Job, k int) error {
	b := &s.deferred
	news := seg
	if tail != nil {
		news = seg[min(len(seg), k):]
	}
	for {
		room := k
		for _, j := range seg {
			if j.State == framework.Pending && !j.Deferred && !j.Reasons.Stuck {
				room--
			}
		}
		for _, j := range b.thawed {
			if j.State == framework.Pending && !j.Reasons.Stuck {
				room--
			}
		}
		batch := s.planBatch[:0]
		for len(batch) < room && len(b.thawed) < len(tail) {
			j := tail[len(b.thawed)]
			addReason(&b.byReason, j.Reasons.Main, -1) // no longer left out
			j.Cycle = s.cycles
			b.thawed = append(b.thawed, j)
			batch = append(batch, j)
		}
		for _, j := range news {
			if len(batch) >= room {
				break
			}
			if j.Deferred && j.State == framework.Pending {
				batch = append(batch, j)
			}
		}
		s.planBatch = batch
		if len(batch) == 0 {
			return nil
		}
		for _, j := range batch {
			j.Deferred, j.Unchanged = false, false
		}
		if err := s.policies[q].Dispatch(d, s.sliceJobs.of(batch)); err != nil {
			return err
		}
	}
}

// endDepth compacts the pending list after a cycle that considered
// s.pending[:k] and the newcomers s.pending[newFrom:] (depthFrom), and
// records what stands: the untouched jobs between (Standing), and, for
// the next cycle, those with the newcomers the policy deferred.
func (s *Scheduler) endDepth(k, newFrom int, complete bool) {
	a, t := s.compactBehind(k+len(s.deferred.thawed), newFrom)
	if !complete {
		s.forgetStanding()
		return
	}
	b := &s.deferred
	s.standing = append(s.standing, b.byReason...)
	tally(&b.byReason, s.pending[a+t:], 1)
	b.at, b.n = a, len(s.pending)
	if s.skippedFrom == 0 {
		s.skippedFrom = s.cycles
	}
}

// deferredWaiting reports, after a cycle, whether a queue with a depth
// (framework.TestsFirst) has jobs deferred behind fewer planned ones than
// its depth: the next cycle plans some of them. planMore leaves no such
// room; only a preemption, which comes after it, can (the cycle then
// asks, at a cost of the pending list).
func (s *Scheduler) deferredWaiting() bool {
	if !slices.ContainsFunc(s.depth, func(k int) bool { return k > 0 }) {
		return false
	}
	counts := make([]int, 2*len(s.depth)) // per queue: planned, deferred
	for _, j := range s.pending {
		q := int(j.Spec.Queue)
		if j.Deferred {
			counts[2*q+1]++
		} else {
			counts[2*q]++
		}
	}
	for q, k := range s.depth {
		if k > 0 && counts[2*q+1] > 0 && counts[2*q] < k {
			return true
		}
	}
	return false
}

// wakeSoon makes the next cycle run a second after this one at the
// latest: jobs deferred beyond a queue's depth have come within it (a
// preemption started jobs before them), and are planned then, as Slurm's
// backfill takes them at its next pass. Without it they would wait for
// the next submission or end, which may never come.
func (s *Scheduler) wakeSoon(now int64) {
	if w := satAdd(now, 1); s.wake < 0 || w < s.wake {
		s.wake = w
	}
	s.replanned = true
}

// recordDepth records, after a cycle that considered every pending job,
// the jobs it deferred beyond the depth of the one queue (depthOf): the
// policy and planMore deferred every job after those they planned, so
// they are the last of the pending list.
func (s *Scheduler) recordDepth() {
	b := &s.deferred
	b.ok, b.byReason = false, b.byReason[:0]
	k := s.depthOf()
	if k == 0 || !s.canSkip() || len(s.pending) <= k {
		return
	}
	at := len(s.pending)
	for at > 0 && s.pending[at-1].Deferred {
		at--
	}
	if at > k {
		return // not what the policy does (framework.TestsFirst): keep to full cycles
	}
	tally(&b.byReason, s.pending[at:], 1)
	b.ok, b.at, b.n = true, at, len(s.pending)
}

// deferNote is the note of a job deferred beyond a depth of k
// (PendReasons.Note of its Priority).
func deferNote(k int) string {
	if k == 1 {
		return "not planned yet: the queue plans only its first pending job (max_job_test)"
	}
	return fmt.Sprintf("not planned yet: the queue plans only its first %d pending jobs (max_job_test)", k)
}
