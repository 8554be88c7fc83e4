package runtime

import (
	"errors"
	"fmt"
	"slices"

	"github.com/xce-sched/xce/cluster"
	"github.com/xce-sched/xce/framework"
)

// What the live scheduler changes between cycles: jobs submitted, killed
// while pending or requeued, jobs restored from the event log with their
// exact allocations, and hosts closed, opened or lost. The simulator needs
// none of it (its jobs are all known up front and its hosts never change).
// Every method here is for the owner of the cycle, between cycles.

// ErrNotPending is returned by Cancel for a job that is not pending.
var ErrNotPending = errors.New("job is not pending")

// Submit adds a job to the scheduler: spec's request is compiled (a job
// whose request does not compile pends with BadRequest, as in a
// scenario), and the job is considered by the first cycle at or after
// spec.Submit (seconds). It fails, and adds nothing, when spec names no
// queue of the cluster, has a bad task count, or already runs
// (RunningOn: use Restore).
func (s *Scheduler) Submit(spec *cluster.Job) (*framework.Job, error) {
	if int(spec.Queue) < 0 || int(spec.Queue) >= len(s.Cluster.Queues) {
		return nil, fmt.Errorf("job %d: queue %d does not exist", spec.ID, spec.Queue)
	}
	if spec.TasksMin < 1 || spec.TasksMax < spec.TasksMin {
		return nil, fmt.Errorf("job %d: bad task count %d,%d", spec.ID, spec.TasksMin, spec.TasksMax)
	}
	if len(spec.RunningOn) > 0 {
		return nil, fmt.Errorf("job %d: a running job is restored, not submitted", spec.ID)
	}
	job := s.newJob(spec)
	s.Jobs = append(s.Jobs, job)
	s.admit(job)
	return job, nil
}

// admit puts a pending job among the jobs still to come, by submit time
// then ID (live submissions arrive in that order: appending is the common
// case).
func (s *Scheduler) admit(job *framework.Job) {
	i := len(s.future)
	for i > s.next && bySubmit(s.future[i-1], job) > 0 {
		i--
	}
	s.future = slices.Insert(s.future, i, job)
}

// Waiting returns how many jobs are waiting for a cycle: pending,
// submitted and not yet considered, or suspended by preemption (a cycle
// resumes them). A cycle with none has nothing to do.
func (s *Scheduler) Waiting() int {
	return len(s.pending) - s.gone + len(s.future) - s.next + len(s.suspended)
}

// Cancel ends a pending job without running it (killed before it
// started): it leaves the pending jobs, its reservation goes, and it is
// Done with End = now and no allocation. Jobs that waited behind its
// reservation may move up in the next cycle. It fails with ErrNotPending
// for a job that runs or ended.
func (s *Scheduler) Cancel(job *framework.Job, now int64) error {
	if job.State != framework.Pending {
		return fmt.Errorf("job %d: %w", job.Spec.ID, ErrNotPending)
	}
	s.settlePending() // a stuck job set aside may be among the jobs gone
	if i := slices.Index(s.future[s.next:], job); i >= 0 {
		s.future = slices.Delete(s.future, s.next+i, s.next+i+1)
	} else if i := slices.Index(s.pending, job); i >= 0 {
		s.pending = slices.Delete(s.pending, i, i+1)
		s.forgetStanding()
	} else if i := slices.Index(s.aside, job); i >= 0 {
		s.aside = slices.Delete(s.aside, i, i+1)
		if i < s.asideNew {
			s.asideNew--
			addReason(&s.asideTally, job.Reasons.Main, -1)
		}
	}
	job.State, job.End, job.Reserved = framework.Done, now, nil
	job.Failed, job.Cancelled = true, true
	s.SetRequeuing(job, false)

	s.released, s.offPlan = true, true
	return nil
}

// Requeue puts a running or suspended job back to pending (a rerunnable
// job whose host was lost, LSF's requeue): what it holds is released, as
// by Finish, and it is considered again from the next cycle, in its
// submit order.
func (s *Scheduler) Requeue(job *framework.Job, now int64) {
	if job.State != framework.Running && job.State != framework.Suspended {
		return
	}
	s.Finish(job, now)
	s.repend(job)
	job.Reasons = framework.PendReasons{}
}

// Restore adds a job that already runs with exactly alloc (from the event
// log), started at start (seconds): it holds alloc's slots, consumables
// and shared resources, and is charged to the limits as the runner would
// have charged it. It fails, and changes nothing, when alloc names a host
// or amount the cluster does not have free (a running job may exceed a
// limit that was lowered since).
func (s *Scheduler) Restore(spec *cluster.Job, alloc *cluster.JobAlloc, start int64) (*framework.Job, error) {
	for _, h := range alloc.Hosts {
		if int(h.Host) < 0 || int(h.Host) >= len(s.Cluster.Hosts) || h.Slots < 1 {
			return nil, fmt.Errorf("job %d: bad host %d or slots %d", spec.ID, h.Host, h.Slots)
		}
	}
	job := s.newJob(spec)
	job.Alloc = alloc
	chargeLimits(job, s.preparers)
	if err := s.State.TakeChecked(alloc, false); err != nil {
		return nil, fmt.Errorf("job %d: running allocation over-commits: %w", spec.ID, err)
	}
	job.State, job.Start = framework.Running, start
	s.Jobs = append(s.Jobs, job)
	s.addRunning(job)
	for _, o := range s.observers {
		o.JobStarted(job, start)
	}
	return job, nil
}

// RestoreSuspended adds a job that preemption suspended (from the event
// log): it ran on alloc from start (seconds), was suspended at
// suspendedAt after suspendedFor seconds suspended before, and keeps held
// (its memory) until it resumes. It fails, and changes nothing, when held
// does not fit or names a host alloc does not.
func (s *Scheduler) RestoreSuspended(spec *cluster.Job, alloc, held *cluster.JobAlloc, start, suspendedAt, suspendedFor int64) (*framework.Job, error) {
	for _, h := range held.Hosts {
		if !slices.ContainsFunc(alloc.Hosts, func(a cluster.HostAlloc) bool { return a.Host == h.Host }) {
			return nil, fmt.Errorf("job %d: keeps resources on host %d, where it does not run", spec.ID, h.Host)
		}
	}
	job := s.newJob(spec)
	job.Alloc, job.Held = alloc, held
	if err := s.State.TakeChecked(held, false); err != nil {
		return nil, fmt.Errorf("job %d: what it keeps suspended over-commits: %w", spec.ID, err)
	}
	job.State, job.Start, job.SuspendedAt, job.SuspendedFor = framework.Suspended, start, suspendedAt, suspendedFor
	job.Reasons = framework.PendReasons{Main: framework.Preempted, Detail: -1}
	chargeLimits(job, s.preparers) // the counters it charges again when it resumes
	s.Jobs = append(s.Jobs, job)
	s.suspended = append(s.suspended, job)
	for _, o := range s.observers {
		o.JobStarted(job, start)
	}
	return job, nil
}

// RestoreReservation gives pending job the reservation a scheduler
// before this one kept for it (from the event log: a restart, a
// reconfiguration, a forecast's copy): from start (seconds) for the job's
// estimate, on alloc. It applies only to a job of a queue whose policy
// keeps reservations (conservative) that has none yet. The next cycle
// treats it as a reservation the cycle before made: it stands unless a
// job ended off its estimate since, and it is checked as any kept
// reservation after a change (one that no longer fits, or whose start
// passed, is re-planned in its turn). It reports whether the reservation
// was taken.
func (s *Scheduler) RestoreReservation(job *framework.Job, start int64, alloc *cluster.JobAlloc) bool {
	q := job.Spec.Queue
	if job.State != framework.Pending || job.Reserved != nil || alloc == nil || len(alloc.Hosts) == 0 ||
		int(q) >= len(s.keeps) || !s.keeps[q] {
		return false
	}
	job.Reserved = &framework.Reservation{Start: start, End: satAdd(start, estimate(job)), Alloc: alloc}
	s.unguarded = true
	s.forgetStanding()
	// As if the last cycle had made it: the next one keeps it unless
	// something ended off plan since (Dispatcher.Unchanged), as the
	// scheduler it comes from would have.
	s.cycles = max(s.cycles, 1)
	job.Cycle = s.cycles
	return true
}

// SetHostStatus changes host h's status: a closed or unavailable host
// takes no new job (its running jobs are the caller's to end or keep, as
// LSF does: a closed host's jobs run on). Pending jobs are looked at
// afresh in the next cycle, and the kept reservations are checked again
// (one on a host that is no longer open is re-planned).
func (s *Scheduler) SetHostStatus(h cluster.HostID, st cluster.HostStatus) {
	if s.Cluster.Hosts[h].Status == st {
		return
	}
	s.Cluster.Hosts[h].Status = st
	s.runner.SetHostStatus(h, st)
	s.unsetAside()
	if s.disp.planner != nil {
		s.disp.planner.SetHostStatus(h, st)
	}
	s.released, s.offPlan, s.unguarded = true, true, true
}
