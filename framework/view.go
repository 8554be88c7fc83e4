package framework

import (
	"cmp"
	"math"
	"slices"

	"github.com/xce-sched/xce/cluster"
)

// View is the read-only picture of the cluster that plugins plan against:
// the configuration and the current free counters (which include what the
// current attempt has claimed).
type View struct {
	Cluster *cluster.Cluster
	State   *cluster.State
	// Bounders are the runner's preparers that bound placements (the
	// limit plugin); TaskCapacity and TaskBound apply them. Nil: none.
	Bounders []Bounder
}

// Usable returns None when host h may take tasks of term t of a job in
// queue q at all (open, in the queue's host list, select[] satisfied,
// every same[] attribute defined), or the host reason why not. It ignores
// free capacity.
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
	vals := v.State.HostVals(h)
	if !t.Select.Match(vals) {
		return HostSelect
	}
	if !t.SameDefined(vals) {
		return HostSame
	}
	return None
}

// Capacity returns how many tasks of term t host h can take now: its free
// slots, bounded by free/perSlot for each per-slot rusage; none when a
// per-host rusage does not fit. It ignores per-job rusage (which only the
// term's first host reserves), so on that host it is an upper bound. It
// does not check Usable. On a host class it is the number of idle members
// when one task fits an idle member, else 0 (each member takes at most
// one: MemberCapacity).
func (v *View) Capacity(h cluster.HostID, t *Term) int {
	n := v.State.FreeSlots(h)
	if v.Cluster.IsClass(h) {
		if n > 0 && !v.memberFits(h, t) {
			return 0
		}
		return n
	}
	for _, r := range t.PerHost {
		if !cluster.Within(r.Amount, v.State.Free(h, r.Res)) { // NaN: the host lacks the resource
			return 0
		}
	}
	for _, r := range t.PerSlot {
		if r.Amount <= 0 {
			continue
		}
		free := v.State.Free(h, r.Res)
		if !(free >= 0) { // NaN: the host lacks the resource
			return 0
		}
		// Compared as floats: a tiny amount gives a quotient beyond int.
		if k := math.Floor((free + cluster.Epsilon) / r.Amount); k < float64(n) {
			n = int(k)
		}
	}
	return max(n, 0)
}

// memberFits reports whether one task of term t fits an idle member of
// host class h: its per-host and per-slot rusage within a member's free
// amounts (per-job rusage aside).
func (v *View) memberFits(h cluster.HostID, t *Term) bool {
	// A resource has one reserve method: each amount stands alone.
	for _, r := range t.PerHost {
		if !cluster.Within(r.Amount, v.State.Free(h, r.Res)) {
			return false
		}
	}
	for _, r := range t.PerSlot {
		if !cluster.Within(r.Amount, v.State.Free(h, r.Res)) {
			return false
		}
	}
	return true
}

// Members returns how many hosts entry h stands for: a host class's
// members, else 1.
func (v *View) Members(h cluster.HostID) int { return v.Cluster.Hosts[h].NumHosts() }

// MemberCapacity splits a capacity n of host h (Capacity, TaskCapacity)
// into hosts: it returns the tasks each can take and how many hosts can:
// (n, 1) for a host (none when n is 0), (1, n) for a host class.
func (v *View) MemberCapacity(h cluster.HostID, n int) (each, hosts int) {
	switch {
	case n <= 0:
		return 0, 0
	case v.Cluster.IsClass(h):
		return 1, n
	}
	return n, 1
}

// CapacityBound returns an upper bound on Capacity(h, t) for every host h
// at any time: the most slots a host has, bounded by the largest total of
// each per-slot rusage resource over its amount; 0 when no host has as
// much of a per-host rusage resource as the term asks.
func (v *View) CapacityBound(t *Term) int {
	n := v.State.MaxSlots()
	for _, r := range t.PerHost {
		if !cluster.Within(r.Amount, v.State.MaxTotal(r.Res)) {
			return 0
		}
	}
	for _, r := range t.PerSlot {
		if k := math.Floor((v.State.MaxTotal(r.Res) + cluster.Epsilon) / r.Amount); r.Amount > 0 && k < float64(n) {
			n = int(k)
		}
	}
	return max(n, 0)
}

// TaskCapacity returns how many tasks of term t (of alternative alt of
// job) host h can take now: Capacity, bounded by every Bounder (a per-host
// limit's room; on a host class, each member's). It does not check
// Usable.
func (v *View) TaskCapacity(job *Job, alt *Alternative, t *Term, h cluster.HostID) int {
	n := v.Capacity(h, t)
	each, hosts := v.MemberCapacity(h, n) // a host class's members are bounded one by one
	for _, b := range v.Bounders {
		if each == 0 {
			break
		}
		hb, _ := b.HostBound(job, alt, t, h, v)
		each = min(each, hb)
	}
	return max(each, 0) * hosts
}

// TaskBound returns upper bounds for term t (of alternative alt of job):
// on the tasks it can place in all (math.MaxInt when no Bounder bounds
// them), and on TaskCapacity of every host at any time in this state
// (CapacityBound, bounded by the Bounders').
func (v *View) TaskBound(job *Job, alt *Alternative, t *Term) (total, perHost int) {
	total, perHost = math.MaxInt, v.CapacityBound(t)
	for _, b := range v.Bounders {
		tot, ph, _ := b.JobBound(job, alt, t, v)
		total, perHost = min(total, tot), min(perHost, ph)
	}
	return max(total, 0), max(perHost, 0)
}

// NumHosts returns how many hosts queue q may use (a host class counts
// its members).
func (v *View) NumHosts(q cluster.QueueID) int {
	base := v.Cluster.Queues[q].Hosts
	if !v.Cluster.HasClasses() {
		if base != nil {
			return len(base)
		}
		return len(v.Cluster.Hosts)
	}
	n := 0
	if base != nil {
		for _, h := range base {
			n += v.Members(h)
		}
		return n
	}
	for h := range v.Cluster.Hosts {
		n += v.Members(cluster.HostID(h))
	}
	return n
}

// Hosts returns the hosts of queue q in walk order: the queue's host list,
// or every host in cluster order. The result is a new slice.
func (v *View) Hosts(q cluster.QueueID) []cluster.HostID {
	n := len(v.Cluster.Hosts)
	if base := v.Cluster.Queues[q].Hosts; base != nil {
		n = len(base)
	}
	return v.AppendHosts(make([]cluster.HostID, 0, n), q)
}

// AppendHosts appends queue q's hosts, as Hosts returns them, to dst and
// returns the result.
func (v *View) AppendHosts(dst []cluster.HostID, q cluster.QueueID) []cluster.HostID {
	if base := v.Cluster.Queues[q].Hosts; base != nil {
		return append(dst, base...)
	}
	n := len(dst)
	dst = slices.Grow(dst, len(v.Cluster.Hosts))[:n+len(v.Cluster.Hosts)]
	for i := range v.Cluster.Hosts {
		dst[n+i] = cluster.HostID(i)
	}
	return dst
}

// Ordered returns queue q's hosts sorted by term's order[] keys on their
// current values: ascending, or descending for a '-' key; undefined (NaN)
// values last; ties in walk order. The result is a new slice.
func (v *View) Ordered(q cluster.QueueID, t *Term) []cluster.HostID {
	hosts := v.Hosts(q)
	if len(t.Order) == 0 {
		return hosts
	}
	slices.SortStableFunc(hosts, func(a, b cluster.HostID) int {
		va, vb := v.State.HostVals(a), v.State.HostVals(b)
		for k, col := range t.Order {
			x, y := va[col], vb[col]
			if t.Desc[k] {
				x, y = -x, -y
			}
			if c := compareNaNLast(x, y); c != 0 {
				return c
			}
		}
		return 0
	})
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
