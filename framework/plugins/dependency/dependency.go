// Package dependency is the gate of job dependencies (LSF's bsub -w): a
// job whose dependency expression is not satisfied pends with Dependency,
// one whose expression can never be satisfied with
// DependencyNeverSatisfied, both naming the first condition not met
// (docs/dependencies.md).
package dependency

import (
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
	buf  []depend.Job
}

var _ framework.Gate = (*Plugin)(nil)

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
func (*Plugin) Begin(int64) {}

// Admit implements framework.Gate: a job is admitted once its expression
// is satisfied.
func (p *Plugin) Admit(job *framework.Job) (bool, framework.PendReasons) {
	e := job.Spec.Depend
	if e == nil {
		return true, framework.PendReasons{}
	}
	p.self = job
	switch e.Eval(p.look) {
	case depend.Satisfied:
		return true, framework.PendReasons{}
	case depend.Never:
		return false, framework.PendReasons{Main: framework.DependencyNeverSatisfied, Detail: -1, Note: e.Unmet(p.look)}
	}
	return false, framework.PendReasons{Main: framework.Dependency, Detail: -1, Note: e.Unmet(p.look)}
}

// lookup returns the jobs r names, as depend sees them: a job; every
// element of an array (r.ID the array's ID); one element (r.Index); every
// job of the admitted job's user with that name. The slice is reused.
func (p *Plugin) lookup(r depend.Ref) []depend.Job {
	p.buf = p.buf[:0]
	if r.Name != "" {
		for _, j := range p.jobs.JobsByName(p.self.Spec.User, r.Name) {
			if j != p.self {
				p.buf = append(p.buf, status(j))
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
			p.buf = append(p.buf, status(j))
		}
		return p.buf
	}
	for id := r.ID; ; id++ {
		el := p.jobs.JobByID(cluster.JobID(id))
		if el == nil || el.Spec.Array != cluster.JobID(r.ID) {
			break
		}
		if r.Index == 0 || el.Spec.ArrayIndex == r.Index {
			p.buf = append(p.buf, status(el))
		}
	}
	return p.buf
}

// status is what depend needs of j.
func status(j *framework.Job) depend.Job {
	switch {
	case j.State == framework.Running:
		return depend.Job{State: depend.Running, Started: true}
	case j.State == framework.Done && j.Failed:
		return depend.Job{State: depend.Exit, ExitCode: j.ExitCode, Started: !j.Cancelled}
	case j.State == framework.Done:
		return depend.Job{State: depend.Done, ExitCode: j.ExitCode, Started: true}
	}
	return depend.Job{State: depend.Pending}
}
