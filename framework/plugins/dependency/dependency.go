// Package dependency is the gate of job dependencies (LSF's bsub -w): a
// job whose dependency expression is not satisfied pends with Dependency,
// one whose expression can never be satisfied with
// DependencyNeverSatisfied, both naming the first condition not met
// (docs/dependencies.md).
package dependency

import (
	"strconv"

	"github.com/xce-sched/xce/cluster"
	"github.com/xce-sched/xce/depend"
	"github.com/xce-sched/xce/framework"
)

// Name is the plugin's registry name.
const Name = "dependency"

// Plugin is the dependency gate. It reads the other jobs' states through
// the scheduler's framework.Lookup at each cycle: nothing is cached, so a
// requeued job counts as pending again.
type Plugin struct {
	jobs framework.Lookup
	self *framework.Job // the job being admitted (its user names jobs)
	look depend.Lookup  // bound once to the plugin
	memo depend.Memo    // the pass's truths of conditions (Admit)
	buf  []depend.Job
	now  int64 // the pass's time
	wake int64 // the earliest end of a think time that holds a job back
	last int64 // the latest end among the jobs the last lookups named
	// held: the pass held a job back on its dependency; started: a job
	// started since the pass began (Observer).
	held, started bool
}

var (
	_ framework.Gate     = (*Plugin)(nil)
	_ framework.Waker    = (*Plugin)(nil)
	_ framework.Observer = (*Plugin)(nil)
)

// New returns the dependency gate reading jobs through jobs.
func New(jobs framework.Lookup) *Plugin {
	p := &Plugin{jobs: jobs}
	p.look = p.lookup
	return p
}

// Name implements framework.Plugin.
func (*Plugin) Name() string { return Name }

// Applies implements framework.Gate: the jobs with a dependency.
func (*Plugin) Applies(spec *cluster.Job) bool { return spec.Depend != nil }

// Begin implements framework.Gate.
func (p *Plugin) Begin(now int64) {
	p.now, p.wake, p.held, p.started = now, -1, false, false
	p.memo.Reset() // jobs started and ended since the last pass
}

// Wake implements framework.Waker: a second on when the pass held a job
// back on a dependency that may yet be satisfied and the cycle then
// started one (a job held on started() sees it
// started in the next pass), else the earliest end of a think time that
// holds a job back, else -1.
func (p *Plugin) Wake() int64 {
	if p.held && p.started && (p.wake < 0 || p.now+1 < p.wake) {
		return p.now + 1
	}
	return p.wake
}

// JobStarted implements framework.Observer.
func (p *Plugin) JobStarted(*framework.Job, int64) { p.started = true }

// JobFinished implements framework.Observer.
func (*Plugin) JobFinished(*framework.Job, int64) {}

// Admit implements framework.Gate: a job is admitted once its expression
// is satisfied.
func (p *Plugin) Admit(job *framework.Job) (bool, framework.PendReasons) {
	e := job.Spec.Depend
	if e == nil || job.Requeues > 0 {
		// A requeued job met its dependency when it first started.
		return true, framework.PendReasons{}
	}
	p.self, p.last = job, 0
	// The jobs do not change during a pass: alike conditions of the jobs
	// it admits are evaluated once (depend.Memo), so that no number of
	// jobs waiting on the same others makes the pass quadratic (issue
	// 29). A job with a think time needs the latest end of the jobs its
	// expression looked up (p.last), which only a full evaluation gives.
	memo := &p.memo
	if job.Spec.ThinkTime > 0 {
		memo = nil
	}
	p.memo.SetScope(job.Spec.User, job.Spec.Name)
	switch e.EvalMemo(p.look, memo) {
	case depend.Satisfied:
		think := job.Spec.ThinkTime
		if at := p.last + think; think > 0 && p.now < at {
			// The user "thinks" that long after the jobs it waits for
			// ended (an SWF trace's field 18).
			if p.wake < 0 || at < p.wake {
				p.wake = at
			}
			p.held = true
			return false, framework.PendReasons{Main: framework.Dependency, Detail: -1,
				Note: e.String() + " and " + strconv.FormatInt(think, 10) + " s of think time"}
		}
		return true, framework.PendReasons{}
	case depend.Never:
		return false, framework.PendReasons{Main: framework.DependencyNeverSatisfied, Detail: -1, Note: e.UnmetMemo(p.look, memo)}
	}
	p.held = true
	return false, framework.PendReasons{Main: framework.Dependency, Detail: -1, Note: e.UnmetMemo(p.look, memo)}
}

// lookup returns the jobs r names, as depend sees them: a job; every
// element of an array (r.ID the array's ID); one element (r.Index); every
// job of the admitted job's user with that name. The slice is reused.
func (p *Plugin) lookup(r depend.Ref) []depend.Job {
	p.buf = p.buf[:0]
	if r.Name != "" {
		for _, j := range p.jobs.JobsByName(p.self.Spec.User, r.Name) {
			if j != p.self {
				p.buf = append(p.buf, p.status(j))
			}
		}
		return p.buf
	}
	j := p.jobs.JobByID(cluster.JobID(r.ID))
	if j == nil {
		return nil
	}
	if j.Spec.Array != cluster.JobID(r.ID) {
		if r.Index == 0 {
			p.buf = append(p.buf, p.status(j))
		}
		return p.buf
	}
	for id := r.ID; ; id++ {
		el := p.jobs.JobByID(cluster.JobID(id))
		if el == nil || el.Spec.Array != cluster.JobID(r.ID) {
			break
		}
		if r.Index == 0 || el.Spec.ArrayIndex == r.Index {
			p.buf = append(p.buf, p.status(el))
		}
	}
	return p.buf
}

// status is what depend needs of j; it notes the latest end of the jobs
// looked up (for the think time).
func (p *Plugin) status(j *framework.Job) depend.Job {
	if j.State == framework.Done {
		p.last = max(p.last, j.End)
	}
	return status(j)
}

// status is what depend needs of j.
func status(j *framework.Job) depend.Job {
	switch {
	case j.State == framework.Running, j.State == framework.Suspended:
		// A suspended job has started (LSF's started() holds for SSUSP).
		return depend.Job{State: depend.Running, Started: true}
	case j.State == framework.Done && j.Failed:
		return depend.Job{State: depend.Exit, ExitCode: j.ExitCode, Started: !j.Cancelled}
	case j.State == framework.Done:
		return depend.Job{State: depend.Done, ExitCode: j.ExitCode, Started: true}
	}
	return depend.Job{State: depend.Pending}
}
