package runtime

import (
	"cmp"
	"slices"

	"github.com/xce-sched/xce/cluster"
	"github.com/xce-sched/xce/framework"
)

// compactPending drops the jobs that started from the pending list.
//
// A pending job found stuck (PendReasons.Stuck: it could not run with
// every open host idle and its limits unused, BadRequest included) is set
// aside with its reasons: no cycle considers it again until a host's
// status changes (issue 15: such jobs are set aside once, not revisited
// every cycle).
func (s *Scheduler) compactPending() {
	s.markAside()
	s.compactFrom(0)
}

// compactFrom is compactPending over s.pending[from:]: the jobs before it
// all stay.
func (s *Scheduler) compactFrom(from int) {
	n := from
	for _, j := range s.pending[from:] {
		switch {
		case stays(j):
			s.pending[n] = j
			n++
		case j.State == framework.Pending:
			s.aside = append(s.aside, j)
		}
	}
	clear(s.pending[n:])
	s.pending = s.pending[:n]
}

// stays reports whether compaction keeps j in the pending list: it still
// pends and, if stuck, holds a reservation.
func stays(j *framework.Job) bool {
	return j.State == framework.Pending && (!j.Reasons.Stuck || j.Reserved != nil)
}

// Aside returns the pending jobs set aside as stuck that the last cycle
// did not consider (those it set aside are among the jobs it returned):
// they keep the reasons of the cycle that found them stuck. The slice is
// the scheduler's, valid until the next cycle.
func (s *Scheduler) Aside() []*framework.Job { return s.aside[:s.asideNew] }

// AsideByReason returns the jobs of Aside counted by main reason: what a
// simulator's metrics read, without a pass over the jobs each cycle. The
// slice is the scheduler's, valid until the next cycle.
func (s *Scheduler) AsideByReason() []ReasonCount { return s.asideTally }

// markAside makes the jobs set aside by the cycle that just ended ones
// the next cycles do not consider (Aside), and counts them.
func (s *Scheduler) markAside() {
	for _, j := range s.aside[s.asideNew:] {
		addReason(&s.asideTally, j.Reasons.Main, 1)
	}
	s.asideNew = len(s.aside)
}

// unsetAside puts the jobs set aside back among the pending ones, in
// submit order: a host whose status changed may let them run.
func (s *Scheduler) unsetAside() {
	if len(s.aside) == 0 {
		return
	}
	s.settlePending() // its jobs gone may be among those set aside
	s.forgetStanding()
	s.pending = append(s.pending, s.aside...)
	slices.SortStableFunc(s.pending, bySubmit)
	clear(s.aside)
	s.aside, s.asideNew, s.asideTally = s.aside[:0], 0, s.asideTally[:0]
}

// Running returns the running jobs in the order the scheduler saw them
// start (the snapshot's first). The slice is the scheduler's: do not
// modify it; it is valid until the next start or finish.
func (s *Scheduler) Running() []*framework.Job {
	s.compactRunning()
	return s.running
}

func (s *Scheduler) addRunning(j *framework.Job) {
	s.running = append(s.running, j)
	e := runningEnd{at: runEnd(j), id: j.Spec.ID, job: j, alloc: j.Alloc}
	if j.Alloc != nil {
		e.slots = j.Alloc.Slots()
	}
	i, _ := s.searchByEnd(e.at, e.id)
	s.byEnd = slices.Insert(s.byEnd, i, e)
}

// removeRunning notes that running job j no longer runs. The running list
// drops such jobs when it is next read, or once they are half of it
// (amortized O(1) per job, with no index to keep); the list by end drops
// j now.
func (s *Scheduler) removeRunning(j *framework.Job) {
	if j.State != framework.Done {
		s.rerun = true // it may run again (suspended, requeued)
	}
	if s.ended++; s.ended > len(s.running)/2 {
		s.compactRunning()
	}
	i, found := s.searchByEnd(runEnd(j), j.Spec.ID)
	if !found || s.byEnd[i].job != j {
		// Its start or time suspended changed already.
		i = slices.IndexFunc(s.byEnd, func(e runningEnd) bool { return e.job == j })
	}
	if i >= 0 {
		s.byEnd = slices.Delete(s.byEnd, i, i+1)
	}
}

// runningEnd is a running job in the list by estimated end, with what
// the projections take of it, read once as it starts: its estimated end
// (runEnd: its start, time suspended and estimate stay as they are while
// it runs), ID, allocation and slots.
type runningEnd struct {
	at    int64
	id    cluster.JobID
	slots int
	job   *framework.Job
	alloc *cluster.JobAlloc
}

// runningByEnd returns the running jobs by estimated end (runEnd), then
// job ID. The slice is the scheduler's: do not modify it; it is valid
// until the next start or finish.
func (s *Scheduler) runningByEnd() []runningEnd { return s.byEnd }

// searchByEnd returns where a running job of estimated end at and ID id
// is or would be in the list by end, and whether it is there
// (slices.BinarySearchFunc with byRunEnd).
func (s *Scheduler) searchByEnd(at int64, id cluster.JobID) (int, bool) {
	lo, hi := 0, len(s.byEnd)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if e := &s.byEnd[m]; e.at < at || e.at == at && e.id < id {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo, lo < len(s.byEnd) && s.byEnd[lo].at == at && s.byEnd[lo].id == id
}

// byRunEnd orders running jobs by estimated end, then job ID.
func byRunEnd(a, b runningEnd) int {
	return cmp.Or(cmp.Compare(a.at, b.at), cmp.Compare(a.id, b.id))
}

func (s *Scheduler) compactRunning() {
	s.rerun = false
	if s.ended == 0 {
		return
	}
	s.running = slices.DeleteFunc(s.running, func(j *framework.Job) bool { return j.State != framework.Running })
	s.ended = 0
}

// Pending returns the jobs submitted by the last cycle that are still
// pending, in submit order, but for those set aside as stuck (they keep
// the reasons of the cycle that found them so). The slice is valid until
// the next cycle.
func (s *Scheduler) Pending() []*framework.Job {
	s.settlePending()
	return s.pending
}

// settlePending drops from the pending list the jobs partial cycles saw
// leave it (s.gone), which they leave in place: only they no longer stay
// (they ran, ended, or were set aside). What the last cycle left stands.
func (s *Scheduler) settlePending() {
	if s.gone == 0 {
		return
	}
	n := len(s.pending)
	s.pending = slices.DeleteFunc(s.pending, func(j *framework.Job) bool { return !stays(j) })
	if s.quiet.n == n {
		s.quiet.n = len(s.pending)
	}
	s.gone = 0
}

// Finish ends a running job at time now (seconds): its allocation is
// released, the committer forgets it, and it is Done with End = now.
//
// The job ends with its spec's ExitCode (a simulation's); FinishWith gives
// the outcome of a real run.
func (s *Scheduler) Finish(job *framework.Job, now int64) {
	s.FinishWith(job, now, job.Spec.ExitCode, job.Spec.ExitCode != 0)
}

// FinishWith is Finish with the job's outcome: its exit code, and whether
// it failed (ended EXIT: a non-zero exit code, a signal, killed).
func (s *Scheduler) FinishWith(job *framework.Job, now int64, exitCode int, failed bool) {
	switch job.State {
	case framework.Suspended:
		// Killed while suspended: it gives back what it kept.
		s.State.Give(job.Held)
		job.State, job.Held = framework.Done, nil
		s.runner.BeginCycle()
	case framework.Running:
		s.runner.Release(job)
		s.removeRunning(job)
	default:
		return
	}
	job.ExitCode, job.Failed = exitCode, failed
	s.released = true
	if end := runEnd(job); now > end || now < end-s.endSlack {
		// Not where projections expected it: early (by more than the end
		// slack), or after an overrun.
		s.offPlan = true
	}
	job.End = now
	if m, ok := s.Committer.(*MemCommitter); ok {
		m.Remove(job.Spec.ID)
	}
	for _, o := range s.observers {
		o.JobFinished(job, now)
	}
}

// repend puts a job that ran (requeued) back among the pending jobs, in
// submit order, to start afresh: no start, allocation, reservation or
// time suspended, and no decision of it stands (Cycle 0: never considered
// as a pending job). The pending list changed outside a cycle: what the
// last cycle left is forgotten.
func (s *Scheduler) repend(job *framework.Job) {
	s.settlePending() // before job pends again: it may be among the jobs gone
	job.State, job.Alloc, job.Start, job.End = framework.Pending, nil, 0, 0
	job.SuspendedFor, job.Reserved, job.Unchanged, job.Deferred, job.Cycle = 0, nil, false, false, 0
	job.Requeues++
	s.rerun = true
	i, _ := slices.BinarySearchFunc(s.pending, job, bySubmit)
	s.pending = slices.Insert(s.pending, i, job)
	s.forgetStanding()
}

// bySubmit orders jobs by submit time, then ID: the order of the pending
// and future lists.
func bySubmit(a, b *framework.Job) int {
	return cmp.Or(cmp.Compare(a.Spec.Submit, b.Spec.Submit), cmp.Compare(a.Spec.ID, b.Spec.ID))
}
