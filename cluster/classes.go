package cluster

import (
	"fmt"
	"slices"

	"github.com/xce-sched/xce/resreq"
)

// Host classes (docs/host-classes.md). A run of consecutive single-slot
// hosts that are identical in everything a request can read, except their
// names, is one entry of the cluster, a host class, when no job's request
// reads a host name or a free amount: whatever the scheduler decides then
// depends only on how many of the run's hosts are idle, never on which.
// The state keeps, for a class, the number of idle members as its free
// slots and one idle member's consumables as its free amounts (a member
// that takes a task has no slot left, so it is never looked at again
// until that task ends). A job's part on a class is a count of members,
// so placing a job of n tasks there costs O(1), not O(n), and a
// reservation on a class holds a count, never particular hosts.

// NumHosts returns how many hosts c has, a host class counting its
// members.
func (c *Cluster) NumHosts() int {
	n := 0
	for i := range c.Hosts {
		n += c.Hosts[i].NumHosts()
	}
	return n
}

// initClasses checks the host class entries and notes whether there are
// any.
func (c *Cluster) initClasses() error {
	c.classes = false
	for i := range c.Hosts {
		h := &c.Hosts[i]
		if h.Members <= 1 {
			continue
		}
		if h.Slots != h.Members {
			return fmt.Errorf("host %s: a class of %d hosts of one slot has %d slots, not %d", quote(h.Name), h.Members, h.Members, h.Slots)
		}
		if c.gpuRes >= 0 {
			if v := h.Capacity[c.gpuRes]; v == v && v > 0 {
				return fmt.Errorf("host %s: a host class cannot have GPUs (each device is bound to a job)", quote(h.Name))
			}
		}
		c.classes = true
	}
	return nil
}

// HostClasses returns a copy of c in which every run of two or more
// consecutive hosts that no job of c.Jobs can tell apart is one host class
// entry (Host.Members), and the number of entries that are classes. Hosts
// are alike when each has one slot and they agree on their consumables,
// type, model, tags, GPU model, status and the queues that may use them.
//
// It returns c itself and 0 when there is no such run, or when something
// could tell the members of a class apart: a host with GPUs (a job holds
// particular devices), a limit that names hosts or counts per host, an
// exclusive or a preemptive queue (a member would be held, suspended or
// freed for itself), a queue host list not in host order, a job that is
// running in the snapshot, an exclusive or GPU job, or a request that
// reads a host's name (select[], order[] or same[] on hname) or a free
// amount (select[] or order[] on slots or a consumable).
//
// The copy shares c's slices except Hosts and Queues, has no host groups
// (what named hosts is resolved: the queues' host lists are remapped), and
// is initialized. c must have been initialized.
func (c *Cluster) HostClasses() (*Cluster, int, error) {
	if !c.classesApply() {
		return c, 0, nil
	}
	// Runs of alike hosts.
	entry := make([]HostID, len(c.Hosts)) // old host -> new entry
	var hosts []Host
	classes := 0
	for i := 0; i < len(c.Hosts); {
		j := i + 1
		for j < len(c.Hosts) && c.alike(HostID(i), HostID(j)) {
			j++
		}
		h := c.Hosts[i]
		if j-i > 1 {
			h.Members, h.Slots = j-i, j-i
			h.Name = c.Hosts[i].Name + ".." + c.Hosts[j-1].Name
			classes++
		}
		for k := i; k < j; k++ {
			entry[k] = HostID(len(hosts))
		}
		hosts = append(hosts, h)
		i = j
	}
	if classes == 0 {
		return c, 0, nil
	}
	out := *c
	out.Hosts = hosts
	out.HostGroups = nil
	out.Queues = slices.Clone(c.Queues)
	for q := range out.Queues {
		if old := c.Queues[q].Hosts; old != nil {
			var hs []HostID
			for _, h := range old {
				if e := entry[h]; len(hs) == 0 || hs[len(hs)-1] != e {
					hs = append(hs, e)
				}
			}
			out.Queues[q].Hosts = hs
		}
	}
	if err := out.Init(); err != nil {
		return nil, 0, fmt.Errorf("host classes: %w", err)
	}
	return &out, classes, nil
}

// classesApply reports whether nothing in c's configuration or jobs can
// tell alike hosts apart (HostClasses).
func (c *Cluster) classesApply() bool {
	if c.gpuRes >= 0 {
		return false
	}
	for i := range c.Limits {
		if c.Limits[i].Hosts.Set() {
			return false
		}
	}
	for q := range c.Queues {
		qu := &c.Queues[q]
		if qu.Exclusive || len(qu.Preemptive) > 0 || !slices.IsSorted(qu.Hosts) {
			return false
		}
	}
	for i := range c.Jobs {
		j := &c.Jobs[i]
		if len(j.RunningOn) > 0 || j.Exclusive || j.GPU != nil || j.Req != nil && c.tellsApart(j.Req) {
			return false
		}
	}
	return true
}

// alike reports whether hosts a and b may be members of one class.
func (c *Cluster) alike(a, b HostID) bool {
	x, y := &c.Hosts[a], &c.Hosts[b]
	if x.Slots != 1 || y.Slots != 1 || x.Members > 1 || y.Members > 1 || x.Status != y.Status ||
		x.Type != y.Type || x.Model != y.Model || x.GPUModel != y.GPUModel {
		return false
	}
	if !slices.EqualFunc(x.Capacity, y.Capacity, func(p, q float64) bool { return p == q || p != p && q != q }) {
		return false
	}
	if len(x.Tags) != len(y.Tags) {
		return false
	}
	for _, t := range x.Tags {
		if !slices.Contains(y.Tags, t) {
			return false
		}
	}
	for q := range c.queueHosts {
		if m := c.queueHosts[q]; m != nil && m[a] != m[b] {
			return false
		}
	}
	return true
}

// tellsApart reports whether req reads what differs between the members
// of a class: a host's name, or (in select[] and order[]) a free amount.
func (c *Cluster) tellsApart(req *resreq.Requirement) bool {
	for _, alt := range req.Alternatives {
		for _, t := range alt.Terms {
			if t.Select != nil && c.readsMember(t.Select) {
				return true
			}
			for _, k := range t.Order {
				if c.memberName(k.Name) {
					return true
				}
			}
			if slices.Contains(t.Same, "hname") {
				return true
			}
		}
	}
	return false
}

// readsMember reports whether expression e reads a host's name or a free
// amount.
func (c *Cluster) readsMember(e resreq.Expr) bool {
	switch n := e.(type) {
	case *resreq.Ident:
		return c.memberName(n.Name)
	case *resreq.Defined:
		return n.Name == "hname"
	case *resreq.Unary:
		return c.readsMember(n.X)
	case *resreq.Binary:
		return c.readsMember(n.X) || c.readsMember(n.Y)
	}
	return false
}

// memberName reports whether attribute name differs between the members
// of a class: the host name, the free slots or a free consumable.
func (c *Cluster) memberName(name string) bool {
	if name == "hname" || name == "slots" {
		return true
	}
	_, ok := c.ResourceByName(name)
	return ok
}
