package framework

import "github.com/xce-sched/xce/cluster"

// JobState is where a job is in its life.
type JobState uint8

// Job states.
const (
	// Pending: waiting to be placed.
	Pending JobState = iota
	// Running: placed; Alloc holds its hosts.
	Running
	// Done: finished; its allocation was released.
	Done
	// Suspended: stopped by preemption where it ran; Alloc still names
	// its hosts, of which it holds only Held until it resumes.
	Suspended
)

// String returns "PEND", "RUN", "DONE" or "SUSP", as LSF's bjobs prints
// them (LSF writes SSUSP for a job the system suspended).
func (s JobState) String() string {
	switch s {
	case Running:
		return "RUN"
	case Done:
		return "DONE"
	case Suspended:
		return "SUSP"
	}
	return "PEND"
}

// Job is the scheduler's record of one job: its submitted spec, its
// compiled request, and what the last cycle decided.
type Job struct {
	Spec *cluster.Job
	// Req is the compiled requirement; nil when ReqErr says why it could
	// not be compiled (the job then pends with BadRequest).
	Req    *Request
	ReqErr error
	// Alloc is published by the runner only after the committer accepted
	// it; nil while pending.
	Alloc *cluster.JobAlloc
	// Reasons is why the job pends, from the last cycle that considered it.
	Reasons PendReasons
	// Reserved is the job's reservation from the last cycle (backfilling
	// policies), nil when it has none.
	Reserved *Reservation
	// Cycle is the number of the last cycle that considered the job (the
	// scheduler counts cycles from 1).
	Cycle int64
	// Start and End are in seconds (virtual time in the simulator); End is
	// set once the job is Done.
	Start, End int64
	// ExitCode and Failed say how a Done job ended: its command's exit
	// code, and whether it ended EXIT (a non-zero exit code, a signal,
	// killed) rather than DONE. Cancelled: it was killed before it ever
	// started (then Failed too).
	ExitCode int
	// Held is what a Suspended job still holds of Alloc (its memory), nil
	// otherwise. SuspendedAt is when it was last suspended, and
	// SuspendedFor the seconds it spent suspended before that, which
	// push its end back: it runs for its runtime in all.
	Held                      *cluster.JobAlloc
	SuspendedAt, SuspendedFor int64
	// Preemptions counts the times the job was suspended or requeued by
	// preemption; Requeues the times it was put back to pending after it
	// started (by preemption, or when its host was lost). A requeued job
	// already met its dependency: it does not wait for it again.
	Preemptions, Requeues int
	// RunnerClass is the runner's: the equivalence class it interned for
	// the job (its compiled request, queue, task count and preparers'
	// classes), from 1; 0 until the runner needs it. A job is placed by
	// one runner for its whole life.
	RunnerClass int32
	// The small fields last, together (a million jobs in a replay: each
	// byte of padding is a megabyte).
	State JobState
	// Unchanged is set by the scheduler at the start of a cycle when the
	// job's decision from the previous cycle stands (Dispatcher.Unchanged).
	Unchanged bool
	// Deferred: the last cycle left the job unplanned, beyond its queue's
	// MaxJobTest (Dispatcher.Defer); the next cycle considers it afresh.
	Deferred bool
	// Gated: a gate of the scheduler's profile applies to the job
	// (Gate.Applies), which it asks in every cycle the job pends.
	Gated             bool
	Failed, Cancelled bool
	// Requeuing: the live scheduler's previous run of this requeued job
	// is still being killed; no cycle starts it (it pends with Requeued)
	// until the caller clears the flag, once the run is gone. Set it with
	// the scheduler's SetRequeuing.
	Requeuing bool
}

// Lookup finds the scheduler's jobs (a gate that depends on other jobs,
// such as dependencies, reads them through it).
type Lookup interface {
	// JobByID returns the job with ID id, nil when there is none.
	JobByID(id cluster.JobID) *Job
	// JobsByName returns the jobs of user named name, in ID order.
	JobsByName(user, name string) []*Job
}
