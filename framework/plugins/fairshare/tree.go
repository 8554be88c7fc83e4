package fairshare

import (
	"github.com/xce-sched/xce/cluster"
	"github.com/xce-sched/xce/framework"
)

// This file builds the share tree (docs/fairshare.md, "User groups"): the
// root is the queue; its children are the users and user groups its
// shares name; a group's children are its direct members. A user's jobs
// are charged to the one path from the root to the user's leaf, which
// the plugin finds the first time it meets the user.

// node is one share account: the root, a user group, or a user (a leaf).
type node struct {
	parent int32 // -1 for the root
	depth  int32
	shares float64
	group  int    // the user group of a group node; -1 for the root and leaves
	user   string // the user of a leaf
	acct   account
	// children of the root and of a group node: sub[k] is the node of
	// the level's k-th group entry (-1 until first used).
	sub []int32

	// Order's scratch, reset after each call.
	heap  []int32 // active children, a heap by priority
	pos   int32   // index in the parent's heap; -1 when not in it
	prio  float64
	extra int              // slots of this cycle's picks charged through the node
	jobs  []*framework.Job // a leaf's pending jobs, in order
	next  *framework.Job   // the job the node would give next
	picks int              // a leaf's jobs given so far
}

// level is how the root or a user group divides its share among its
// children (LSF's USER_SHARES of the queue, or of the group in lsb.users):
// at the root, users is the users the queue's shares name; in a group,
// every direct user member.
type level struct {
	users  map[string]float64 // users named at this level → shares
	groups []groupEntry       // user groups named at this level, in order
	deflt  float64            // the share of a user not named
}

type groupEntry struct {
	group  int
	shares float64
}

// rootLevel reads a queue's shares: a key that names a user group is the
// group's share; "default" the share of every other user, each on their
// own (1 when absent).
func rootLevel(c *cluster.Cluster, shares []cluster.UserShare) *level {
	lv := &level{users: map[string]float64{}, deflt: 1}
	for _, us := range shares {
		switch g, isGroup := c.UserGroupByName(us.User); {
		case us.User == "default":
			lv.deflt = float64(us.Shares)
		case isGroup:
			lv.groups = append(lv.groups, groupEntry{g, float64(us.Shares)})
		default:
			lv.users[us.User] = float64(us.Shares)
		}
	}
	return lv
}

// groupLevel reads how user group g divides its share: each direct member
// has its entry of the group's shares, or the group's "default" (1 when
// absent).
func groupLevel(c *cluster.Cluster, g int) *level {
	ug := &c.UserGroups[g]
	lv := &level{users: map[string]float64{}, deflt: 1}
	own := map[string]float64{}
	for _, us := range ug.Shares {
		if us.User == "default" {
			lv.deflt = float64(us.Shares)
		} else {
			own[us.User] = float64(us.Shares)
		}
	}
	for _, m := range ug.Members {
		s, ok := own[m]
		if !ok {
			s = lv.deflt
		}
		if sub, isGroup := c.UserGroupByName(m); isGroup {
			lv.groups = append(lv.groups, groupEntry{sub, s})
		} else {
			lv.users[m] = s
		}
	}
	return lv
}

// levelOf returns the level of node n (the root's, or its group's).
func (p *Plugin) levelOf(n int32) *level {
	g := p.nodes[n].group
	if g < 0 {
		return p.root
	}
	if p.groupLevels[g] == nil {
		p.groupLevels[g] = groupLevel(p.c, g)
	}
	return p.groupLevels[g]
}

// leaf returns the leaf of user, making the nodes of its path on first
// use. At each level, from the root down: a user the level names (or, in
// a group, a direct member) is a leaf there; else the first user group of
// the level, in order, that holds the user is descended into; else, at
// the root, the user gets a leaf of the default share.
func (p *Plugin) leaf(user string) int32 {
	if n, ok := p.leafOf[user]; ok {
		return n
	}
	n := int32(0)
	for {
		lv := p.levelOf(n)
		if s, ok := lv.users[user]; ok {
			n = p.newNode(n, s, -1, user)
			break
		}
		k := -1
		for i, ge := range lv.groups {
			if p.c.InUserGroup(user, ge.group) {
				k = i
				break
			}
		}
		if k < 0 {
			// Only the root lacks a child for a user: a group
			// descended into holds the user directly or in a subgroup.
			n = p.newNode(n, lv.deflt, -1, user)
			break
		}
		nd := &p.nodes[n]
		if nd.sub == nil {
			nd.sub = make([]int32, len(lv.groups))
			for i := range nd.sub {
				nd.sub[i] = -1
			}
		}
		if nd.sub[k] < 0 {
			child := p.newNode(n, lv.groups[k].shares, lv.groups[k].group, "")
			p.nodes[n].sub[k] = child
		}
		n = p.nodes[n].sub[k]
	}
	p.leafOf[user] = n
	return n
}

func (p *Plugin) newNode(parent int32, shares float64, group int, user string) int32 {
	p.nodes = append(p.nodes, node{parent: parent, depth: p.nodes[parent].depth + 1, shares: shares, group: group, user: user, pos: -1})
	return int32(len(p.nodes) - 1)
}
