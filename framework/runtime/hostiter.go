package runtime

import (
	"github.com/xce-sched/xce/cluster"
	"github.com/xce-sched/xce/framework"
)

// candidates returns the hosts a bucket of term ti walks, in order: the
// queue's host list (nil: every host, in cluster order) or, when the term
// has order[] keys, those hosts sorted by the keys' current values
// (framework.View.Ordered). The sorted order is computed once per job
// attempt and kept for all its plans.
func (r *Runner) candidates(job *framework.Job, ti int, term *framework.Term) []cluster.HostID {
	base := r.view.Cluster.Queues[job.Spec.Queue].Hosts
	if len(term.Order) == 0 {
		if r.walkOrder != nil {
			return r.walkOrder
		}
		return base
	}
	if c, ok := r.order[ti]; ok {
		return c
	}
	hosts := r.view.Ordered(job.Spec.Queue, term)
	r.order[ti] = hosts
	return hosts
}
