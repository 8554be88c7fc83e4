// Package seqjob is the allocator for sequential jobs: one plan of one
// bucket of one slot. It is the degenerate case of the runner's algorithm;
// the runner has no special path for it.
package seqjob

import "github.com/xce-sched/xce/framework"

// Name is the plugin's registry name.
const Name = "seqjob"

// Plugin is the seqjob allocator. Its iterator is reused between jobs, so
// one Plugin serves one runner at a time.
type Plugin struct {
	it iterator
}

var (
	_ framework.Allocator  = (*Plugin)(nil)
	_ framework.JobFilter  = (*Plugin)(nil)
	_ framework.WholePlans = (*Plugin)(nil)
)

// New returns a seqjob allocator.
func New() *Plugin {
	p := &Plugin{}
	p.it.plan.Buckets = []framework.Bucket{{Slots: 1, Term: 0}}
	return p
}

// Name implements framework.Plugin.
func (*Plugin) Name() string { return Name }

// WholePlans implements framework.WholePlans: one task of one slot, and
// Plans never fails.
func (*Plugin) WholePlans() {}

// Handles reports whether job is sequential: at most one task, and a simple
// requirement (one alternative of one term). Other jobs go to parjob.
func Handles(job *framework.Job) bool {
	return job.Spec.TasksMax <= 1 && (job.Req == nil || len(job.Req.Alts) == 1 && len(job.Req.Alts[0].Terms) == 1)
}

// Handles implements framework.JobFilter: the package's Handles.
func (*Plugin) Handles(job *framework.Job) bool { return Handles(job) }

// Plans implements framework.Allocator: exactly one plan, one bucket of one
// slot of the job's only term.
func (p *Plugin) Plans(job *framework.Job, _ *framework.View) (framework.PlanIterator, error) {
	p.it.done = false
	return &p.it, nil
}

type iterator struct {
	plan framework.Plan
	done bool
}

func (it *iterator) Next() (*framework.Plan, bool) {
	if it.done {
		return nil, false
	}
	it.done = true
	return &it.plan, true
}
