package runtime

import (
	"cmp"
	"slices"

	"github.com/xce-sched/xce/cluster"
	"github.com/xce-sched/xce/framework"
)

// candidates returns the hosts a bucket of term ti walks, in order: the
// queue's host list (nil: every host, in cluster order) or, when the term
// has order[] keys, those hosts sorted by the keys' current values (NaN
// last; ties by the base order). The sorted order is computed once per job
// attempt and kept for all its plans.
func (r *Runner) candidates(job *framework.Job, ti int, term *framework.Term) []cluster.HostID {
	base := r.view.Cluster.Queues[job.Spec.Queue].Hosts
	if len(term.Order) == 0 {
		return base
	}
	if c, ok := r.order[ti]; ok {
		return c
	}
	var hosts []cluster.HostID
	if base != nil {
		hosts = slices.Clone(base)
	} else {
		hosts = make([]cluster.HostID, len(r.mark))
		for i := range hosts {
			hosts[i] = cluster.HostID(i)
		}
	}
	st := r.view.State
	slices.SortStableFunc(hosts, func(a, b cluster.HostID) int {
		va, vb := st.HostVals(a), st.HostVals(b)
		for k, col := range term.Order {
			x, y := va[col], vb[col]
			if term.Desc[k] {
				x, y = -x, -y
			}
			if c := compareNaNLast(x, y); c != 0 {
				return c
			}
		}
		return 0
	})
	r.order[ti] = hosts
	return hosts
}

func compareNaNLast(x, y float64) int {
	switch xn, yn := x != x, y != y; {
	case xn && yn:
		return 0
	case xn:
		return 1
	case yn:
		return -1
	}
	return cmp.Compare(x, y)
}
