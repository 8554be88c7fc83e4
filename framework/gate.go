package framework

import "github.com/xce-sched/xce/cluster"

// Gate holds pending jobs back from a cycle before any policy sees them,
// as the kube-scheduler's PreEnqueue plugins (Kubernetes' scheduling
// gates) do: a job array's cap on its running elements, a dependency on
// other jobs. A job a gate holds back is not tried, keeps no reservation
// and blocks no other job (a strict FCFS queue goes on past it, as LSF's
// goes on past a job that waits on a dependency); its pending reason is
// the gate's. Gates are named by the profile (Profile.Gates); one that is
// also an Observer is told of every start and end.
type Gate interface {
	Plugin
	// Applies reports whether the gate may ever hold back the job spec
	// describes (an element of an array with a cap). It is asked once,
	// when the scheduler takes the job (Job.Gated); a cycle in which no
	// pending job is gated asks the gates nothing.
	Applies(spec *cluster.Job) bool
	// Begin starts the gates' pass of the cycle at now (seconds).
	Begin(now int64)
	// Admit is asked about each gated pending job of the cycle, in the order
	// the cycle considers them (queues by priority, each in its picker's
	// order); false holds job back with why (a main reason, its detail
	// or -1, a note). A job admitted counts as started for the rest of
	// the pass (so admitting never exceeds a cap, whatever then starts).
	Admit(job *Job) (ok bool, why PendReasons)
}

// Counting is an optional Gate capability: admitting the job spec
// describes takes a place the gate counts for the pass (an element under
// its array's cap). The scheduler then first checks whether the job could
// run on the open hosts, idle: one that could not (stuck) asks the gates
// after every other job of the pass, so that it takes only a place left
// over. Whatever the job, only the gates' admission lets it reach a
// policy; a job that can never run (BadRequest) asks no gate and is not
// tried.
type Counting interface {
	Counts(spec *cluster.Job) bool
}

// Waker is an optional Gate capability: after a cycle in which the gates
// were asked, the time (seconds) at which a job the gate held back may
// become admissible with no job submitted or ending (a think time running
// out, a job started in the cycle that another waits to see started), or
// -1. The scheduler runs a cycle then (Scheduler.NextWake).
type Waker interface {
	Wake() int64
}
