package runtime

// deferredTail is what a cycle left beyond the depth of a queue whose
// policy plans only its first jobs (framework.TestsFirst: max_job_test),
// when every pending job is of that one queue: s.pending[at:] were
// deferred (the at jobs before them were within the depth and still
// pend), byReason counts them by main reason, and n is the length of the
// list then. It stands while the pending list is the one that cycle left:
// the next cycle considers the first depth jobs and the newcomers, and
// the jobs between stay deferred without being considered (depthFrom):
// a cycle then costs the depth and the newcomers, not the queue (issue
// 15).
type deferredTail struct {
	ok       bool
	at, n    int
	byReason []ReasonCount
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
// admitted), the depth k when the cycle may leave out s.pending[k:]:
// the last cycle deferred them, the list is as it left it (and holds no
// job gone since, settlePending), and no gate or preemption is at work. Those that come within the depth now (the jobs
// before them left) are taken out of the count of what stands. It returns
// -1 when the cycle must consider every job.
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

// endDepth compacts the pending list after a cycle that considered
// s.pending[:k] and the newcomers s.pending[newFrom:] (depthFrom), and
// records what stands: the untouched jobs between (Standing), and, for
// the next cycle, those with the newcomers the policy deferred.
func (s *Scheduler) endDepth(k, newFrom int, complete bool) {
	a, t := s.compactBehind(k, newFrom)
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

// recordDepth records, after a cycle that considered every pending job,
// the jobs it deferred beyond the depth of the one queue (depthOf): the
// policy deferred every job after the first k, so they are the last of
// the pending list.
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
