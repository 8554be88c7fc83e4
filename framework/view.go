package framework

import (
	"math"

	"github.com/xce-sched/xce/cluster"
)

// View is the read-only picture of the cluster that plugins plan against:
// the configuration and the current free counters (which include what the
// current attempt has claimed).
type View struct {
	Cluster *cluster.Cluster
	State   *cluster.State
}

// Usable returns None when host h may take tasks of term t of a job in
// queue q at all (open, in the queue's host list, select[] satisfied), or
// the host reason why not. It ignores free capacity.
func (v *View) Usable(h cluster.HostID, q cluster.QueueID, t *Term) Reason {
	switch v.Cluster.Hosts[h].Status {
	case cluster.HostClosed:
		return HostClosed
	case cluster.HostUnavail:
		return HostUnavail
	}
	if !v.Cluster.QueueHasHost(q, h) {
		return HostSelect
	}
	if !t.Select.Match(v.State.HostVals(h)) {
		return HostSelect
	}
	return None
}

// Capacity returns how many tasks of term t host h can take now: its free
// slots, bounded by free/perSlot for each per-slot rusage. It does not
// check Usable.
func (v *View) Capacity(h cluster.HostID, t *Term) int {
	n := v.State.FreeSlots(h)
	for _, r := range t.PerSlot {
		if r.Amount <= 0 {
			continue
		}
		free := v.State.Free(h, r.Res)
		if !(free >= 0) { // NaN: the host lacks the resource
			return 0
		}
		if k := int(math.Floor((free + cluster.Epsilon) / r.Amount)); k < n {
			n = k
		}
	}
	return max(n, 0)
}
