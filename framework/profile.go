package framework

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/xce-sched/xce/cluster"
)

// Profile names the plugins a scheduler runs, each resolved through the
// Registry, as a kube-scheduler profile names the plugins of each
// extension point: the runtime that runs it imports no plugin.
type Profile struct {
	// Allocators describe how jobs may be placed, in order: a job goes to
	// the first one that takes it (an allocator that implements
	// JobFilter takes the jobs its Handles accepts; one that does not
	// takes every job). One is required; the last should take every job.
	Allocators []string
	// Preparers run in every prepare fan-out, in order (a limit's
	// counters, for instance).
	Preparers []string
	// Gates hold jobs back from a cycle (Gate), asked in order.
	Gates []string
	// Queues has one entry per queue of the cluster, in its order.
	Queues []QueueProfile
}

// QueueProfile names the plugins of one queue: its picker (the order of
// its pending jobs) and its policy (how they are dispatched).
type QueueProfile struct {
	Picker string
	Policy string
}

// Default plugin names: what ProfileFor gives a configuration that names
// none. Each is the registry name of an in-tree plugin (package
// framework/plugins/...); a test there checks that they agree.
const (
	DefaultSeqAllocator = "seqjob"     // sequential jobs (JobFilter)
	DefaultParAllocator = "parjob"     // every other job
	DefaultPicker       = "priority"   // a queue that names no picker
	DefaultLimits       = "limit"      // the preparer of a cluster with limits
	DefaultExclusive    = "exclusive"  // the preparer of a cluster with exclusive queues or jobs
	DefaultArray        = "array"      // the gate of job arrays' caps
	DefaultDependency   = "dependency" // the gate of job dependencies
)

// ProfileFor returns the profile cluster c's configuration describes:
// the seqjob and parjob allocators; the limit preparer when c has limits;
// the exclusive preparer when a queue takes exclusive jobs (or a job of a
// scenario is one);
// the dependency and array gates (they cost nothing while no job they
// apply to pends; a job waiting on a dependency is not counted against
// its array's cap); for
// each queue its picker (priority when none is named) and its policy
// (firstfit when none is named).
func ProfileFor(c *cluster.Cluster) Profile {
	p := Profile{Allocators: []string{DefaultSeqAllocator, DefaultParAllocator}, Gates: []string{DefaultDependency, DefaultArray}}
	if len(c.Limits) > 0 {
		p.Preparers = []string{DefaultLimits}
	}
	if slices.ContainsFunc(c.Queues, func(q cluster.Queue) bool { return q.Exclusive }) ||
		slices.ContainsFunc(c.Jobs, func(j cluster.Job) bool { return j.Exclusive }) {
		p.Preparers = append(p.Preparers, DefaultExclusive)
	}
	for _, q := range c.Queues {
		p.Queues = append(p.Queues, QueueProfile{Picker: cmp.Or(q.Picker, DefaultPicker), Policy: string(cmp.Or(q.Policy, cluster.PolicyFirstFit))})
	}
	return p
}

// Validate checks p against cluster c: at least one allocator, one entry
// per queue, every name given.
func (p *Profile) Validate(c *cluster.Cluster) error {
	if len(p.Allocators) == 0 {
		return fmt.Errorf("profile: no allocator")
	}
	if len(p.Queues) != len(c.Queues) {
		return fmt.Errorf("profile: %d queue entries for %d queues", len(p.Queues), len(c.Queues))
	}
	for i, q := range p.Queues {
		if q.Picker == "" || q.Policy == "" {
			return fmt.Errorf("profile: queue %s: picker %q, policy %q: both are required", c.Queues[i].Name, q.Picker, q.Policy)
		}
	}
	return nil
}

// JobFilter is an optional Allocator capability: the allocator takes only
// the jobs Handles accepts (seqjob: the sequential ones); the profile's
// next allocator gets the others.
type JobFilter interface {
	Handles(job *Job) bool
}
