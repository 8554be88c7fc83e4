package runtime

import (
	"slices"

	"github.com/xce-sched/xce/framework"
)

// quietRecord is what the last complete cycle left for a quiet cycle: a
// cycle in which nothing was released, under policies that skip the jobs
// whose decision stands (framework.SkipsUnchanged). Such a cycle
// considers only the volatile jobs (a reservation, which its policy
// re-records or re-plans, or a select[] that may turn true as hosts fill)
// and the newcomers: every other pending job would be skipped (issue 15).
type quietRecord struct {
	valid    bool
	n        int              // len(s.pending) after that cycle
	byReason []ReasonCount    // the pending jobs by main reason
	volatile []*framework.Job // the volatile pending jobs, in pending order
	old      []*framework.Job // scratch: the volatile jobs this cycle considers
	policies []bool           // per queue: its policy is a framework.SkipsUnchanged
}

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
// admitted), whether the cycle is quiet: nothing released, no job off its
// estimate or placed over the reservations, no host's status changed,
// no gate or preemption at work, and the pending list the one the last
// complete cycle left. It then puts the volatile jobs in q.old and takes
// them out of the tally, which is left counting the jobs not considered.
func (s *Scheduler) quietCycle() bool {
	q := &s.quiet
	if !q.valid || s.released || s.offPlan || s.unguarded || s.cycles == 0 || !s.canSkip() ||
		len(s.pending) != q.n || !s.quietQueues() {
		q.valid = false
		return false
	}
	q.old = append(q.old[:0], q.volatile...)
	tally(&q.byReason, q.old, -1)
	s.standing = append(s.standing[:0], q.byReason...)
	return true
}

// volatile reports whether a pending job's decision may change with
// nothing released: it holds a reservation, or its select[] may turn true
// as hosts fill.
func volatile(j *framework.Job) bool {
	return j.Reserved != nil || j.Req != nil && j.Req.Rising
}

// compactQuiet is compactPending after a quiet cycle: of the jobs before
// newFrom, only the volatile ones (q.old) were considered and may leave.
// It returns where the newcomers start in the compacted list.
func (s *Scheduler) compactQuiet(newFrom int) int {
	s.asideNew = len(s.aside)
	for _, j := range s.quiet.old {
		if stays(j) {
			continue
		}
		if j.State == framework.Pending {
			s.aside = append(s.aside, j)
		}
		if i := slices.Index(s.pending[:newFrom], j); i >= 0 {
			s.pending = slices.Delete(s.pending, i, i+1)
			newFrom--
		}
	}
	s.compactFrom(newFrom)
	return newFrom
}

// recordQuiet records, after a complete cycle, what the next quiet cycle
// needs. After a quiet cycle (newFrom ≥ 0: where its newcomers start in
// the compacted list) only the jobs it considered are counted again;
// after any other, every pending job is.
func (s *Scheduler) recordQuiet(newFrom int) {
	q := &s.quiet
	if !s.canSkip() || !s.quietQueues() {
		q.valid = false
		return
	}
	q.volatile = q.volatile[:0]
	if newFrom < 0 {
		q.byReason = q.byReason[:0]
		q.take(s.pending)
	} else {
		q.take(slices.DeleteFunc(q.old, func(j *framework.Job) bool { return !stays(j) }))
		q.take(s.pending[newFrom:])
	}
	q.valid, q.n = true, len(s.pending)
}

// take counts pending jobs by main reason and keeps the volatile ones.
func (q *quietRecord) take(jobs []*framework.Job) {
	tally(&q.byReason, jobs, 1)
	for _, j := range jobs {
		if volatile(j) {
			q.volatile = append(q.volatile, j)
		}
	}
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
