// Package exclusive is the preparer of exclusive jobs (LSF's bsub -x, with
// EXCLUSIVE=Y on the queue): such a job runs only on hosts where nothing
// else runs, and nothing else starts there while it runs (docs/exclusive.md).
//
// Each host has a counter whose maximum is its slots. Every job charges
// the counter of each host it lands on with the slots it takes there; an
// exclusive job charges the whole maximum. An exclusive job then fits only
// on an idle host, and fills it. As counters, these are checked, claimed,
// rolled back and released by the runner with slots and memory, in the
// live state and in backfilling's projections alike, so reservations
// respect exclusivity too.
package exclusive

import (
	"math"

	"github.com/xce-sched/xce/cluster"
	"github.com/xce-sched/xce/framework"
)

// Name is the plugin's registry name.
const Name = "exclusive"

// Plugin is the exclusive preparer.
type Plugin struct {
	first cluster.CounterID // host h's counter is first + h
	slots []float64
}

var (
	_ framework.Preparer   = (*Plugin)(nil)
	_ framework.Classifier = (*Plugin)(nil)
	_ framework.Bounder    = (*Plugin)(nil)
)

// New creates the per-host counters in st, the scheduler's state (before
// any projection is derived from it).
func New(c *cluster.Cluster, st *cluster.State) *Plugin {
	p := &Plugin{slots: make([]float64, len(c.Hosts))}
	for h := range c.Hosts {
		p.slots[h] = float64(c.Hosts[h].Slots)
	}
	p.first = st.NewOwnCounters(uint8(framework.HostExclusive), p.slots)
	return p
}

// Name implements framework.Plugin.
func (*Plugin) Name() string { return Name }

// Class implements framework.Classifier: exclusive jobs and others are
// decided apart.
func (*Plugin) Class(job *framework.Job) int32 {
	if job.Spec.Exclusive {
		return 1
	}
	return 0
}

// PrepareHost implements framework.Preparer: the candidate charges host
// h's counter with its slots, or, for an exclusive job, with all of them.
// It never vetoes: the runner checks the counter.
func (p *Plugin) PrepareHost(req *framework.AllocRequest, h cluster.HostID) (framework.Reason, int32) {
	amount := float64(req.NSlots)
	if req.Job.Spec.Exclusive {
		amount = p.slots[h]
	}
	req.Host.Counters = append(req.Host.Counters, cluster.CounterAmount{Counter: p.first + cluster.CounterID(h), Amount: amount})
	return framework.None, -1
}

// HostBound implements framework.Bounder, so that allocators size plans on
// the hosts the counters let the job use: an exclusive job takes any
// number of tasks of a host whose counter is unused (an idle host) and
// none elsewhere; another job takes as many tasks as the counter has room
// for (none on a host that runs an exclusive job). Without it, a plan
// sized on free slots alone would put a bucket on a host an exclusive job
// holds, and the runner's check would refuse the whole plan although
// other hosts have room (issue 29). It names no limit (by is -1).
func (p *Plugin) HostBound(job *framework.Job, _ *framework.Alternative, _ *framework.Term, h cluster.HostID, view *framework.View) (int, int32) {
	free := view.State.CounterFree(p.first + cluster.CounterID(h))
	if job.Spec.Exclusive {
		if free+cluster.Epsilon >= p.slots[h] {
			return math.MaxInt, -1
		}
		return 0, -1
	}
	return int(math.Floor(max(free, 0) + cluster.Epsilon)), -1
}

// JobBound implements framework.Bounder: the counters are per host, and
// bound no job in all.
func (*Plugin) JobBound(*framework.Job, *framework.Alternative, *framework.Term, *framework.View) (total, perHost int, by int32) {
	return math.MaxInt, math.MaxInt, -1
}
