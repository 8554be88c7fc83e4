package limit

import (
	"math"

	"github.com/xce-sched/xce/cluster"
	"github.com/xce-sched/xce/framework"
)

var _ framework.Bounder = (*Plugin)(nil)

// HostBound implements framework.Bounder: the least, over the limits that
// apply to job and count host h, of the tasks of term t their instance on
// h has room for (tasks returns how a counter's room bounds them), and the
// first limit with that least room. An instance not created yet is
// unused: it has room for its maximum. It creates no instance.
func (p *Plugin) HostBound(job *framework.Job, alt *framework.Alternative, t *framework.Term, h cluster.HostID, view *framework.View) (int, int32) {
	p.bind(job)
	n, by := math.MaxInt, int32(-1)
	for _, a := range p.applied {
		if a.lim.hostMask != nil && !a.lim.hostMask[h] {
			continue
		}
		first, ok := p.find(a, h)
		k := tasks(a.lim, alt, t, func(k int) float64 {
			if !ok {
				return a.lim.res[k].max
			}
			return view.State.CounterFree(first + cluster.CounterID(k))
		})
		if k < n {
			n, by = k, a.lim.idx
		}
	}
	return n, by
}

// JobBound implements framework.Bounder. A limit that counts every host
// with one instance (no hosts consumer, or hosts: all) bounds the job's
// tasks in all and on any host by that instance's room; a limit with one
// instance per host of every host (per_host: all) bounds any host by its
// maximum. A limit on a list of hosts bounds neither: the other hosts are
// free of it. by is the first limit with the least room in all.
func (p *Plugin) JobBound(job *framework.Job, alt *framework.Alternative, t *framework.Term, view *framework.View) (total, perHost int, by int32) {
	p.bind(job)
	total, perHost, by = math.MaxInt, math.MaxInt, -1
	for _, a := range p.applied {
		cl := a.lim
		switch {
		case cl.hostMask != nil:
		case cl.lim.Hosts.PerConsumer:
			perHost = min(perHost, tasks(cl, alt, t, func(k int) float64 { return cl.res[k].max }))
		default:
			first, ok := p.find(a, -1)
			n := tasks(cl, alt, t, func(k int) float64 {
				if !ok {
					return cl.res[k].max
				}
				return view.State.CounterFree(first + cluster.CounterID(k))
			})
			if n < total {
				total, by = n, cl.idx
			}
			perHost = min(perHost, n)
		}
	}
	return total, perHost, by
}

// tasks returns how many tasks of term t one instance of limit cl lets a
// placement charge, given room(k), what is left of its k-th counter: as
// many as slots are left; a limited host resource's room over t's
// per-slot amount; none when a jobs, shared-resource or host-resource
// counter has no room for what the per-host pass charges at least once (one
// job, the alternative's shared amount, t's per-host rusage). Rooms are compared as the runner's check does (with
// cluster.Epsilon).
func tasks(cl *compiled, alt *framework.Alternative, t *framework.Term, room func(k int) float64) int {
	n := math.MaxInt
	for k, r := range cl.res {
		var per float64 // the counter's charge per task; 0: per job
		once := 0.0     // the charge once per job
		switch r.kind {
		case kindSlots:
			per = 1
		case kindJobs:
			once = 1
		case kindHostRes:
			// Per-host rusage is charged on every host; per-job rusage
			// only on the first, so a bound leaves it out.
			per = t.HostAmount(cluster.ResID(r.id), 1, false)
			once = t.HostAmount(cluster.ResID(r.id), 0, false)
			per -= once
		case kindShared:
			once = sharedAmount(alt, r.id)
		}
		free := room(k)
		if once > 0 && !cluster.Within(once, free) {
			return 0
		}
		if per > 0 {
			// Compared as floats: a tiny amount gives a quotient beyond int.
			if q := math.Floor((free + cluster.Epsilon) / per); q < float64(n) {
				n = max(int(q), 0)
			}
		}
	}
	return n
}

// find returns the first counter of instance a on host h (the shared
// instance when the limit is not per host), or false when it was not
// created yet. Unlike counters, it creates nothing.
func (p *Plugin) find(a applied, h cluster.HostID) (cluster.CounterID, bool) {
	if a.lim.lim.Hosts.PerConsumer {
		if h < 0 || int(a.inst) >= len(p.hostFirst) || p.hostFirst[a.inst] == nil {
			return -1, false
		}
		page := p.hostFirst[a.inst][h/hostPage]
		if page == nil || page[h%hostPage] < 0 {
			return -1, false
		}
		return page[h%hostPage], true
	}
	first := p.instFirst[a.inst]
	return first, first >= 0
}
