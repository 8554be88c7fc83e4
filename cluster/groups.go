package cluster

import (
	"fmt"
	"slices"
	"strings"
)

// This file holds user groups and host groups (docs/scenario.md,
// "user_groups and host_groups") and their expansion into flat member
// lists, done once when the cluster is initialised.

// UserGroup is a named set of users, as an LSF lsb.users UserGroup section
// defines one. A member is a user or another user group (a subgroup), whose
// members belong to the group too, recursively.
type UserGroup struct {
	Name string
	// Members are the group's direct members as configured: user names
	// and names of other user groups, in order.
	Members []string
	// Shares divide the group's fairshare share among its direct members
	// (LSF's USER_SHARES column of lsb.users), in order; the member
	// "default" gives the share of the direct members not listed (1 when
	// absent). Empty: every direct member has 1 share, so they divide the
	// group's share equally (docs/fairshare.md).
	Shares []UserShare
}

// HostGroup is a named set of hosts, as an LSF lsb.hosts HostGroup section
// defines one. A member is a host or another host group, whose hosts
// belong to the group too, recursively.
type HostGroup struct {
	Name string
	// Members are the group's direct members as configured: host names
	// and names of other host groups, in order.
	Members []string
}

// UserID numbers the users that user groups name: a user's index in
// Cluster.GroupUsers. Users are open-ended (any job may have any user);
// only those the groups list have an ID.
type UserID int32

// MaxGroupMembers is the most entries the groups' flat member lists may
// hold together (each group counts its users or hosts, its subgroups'
// included, once each), so that nested groups cannot blow up memory.
const MaxGroupMembers = 1 << 22

// groupIndex is the expansion of a cluster's groups, built by Init.
type groupIndex struct {
	users      []string   // sorted, distinct: every user a user group lists directly
	userFlat   [][]UserID // per user group: its users, subgroups' included, sorted
	hostFlat   [][]HostID // per host group: its hosts, subgroups' included, sorted
	userByName map[string]int
	hostByName map[string]int
}

// groupError is an error in the groups of a cluster: about member Member
// (an index in the group's Members) of user group or host group Group, or
// about the whole group when Member is -1.
type groupError struct {
	hosts  bool
	group  int
	member int
	msg    string
}

func (e *groupError) Error() string { return e.msg }

// flattenGroups expands the user and host groups of c; hostID looks host
// names up. It reports an unknown host, a group named like a host, a
// reserved name, a cycle, or more than MaxGroupMembers entries in all.
func flattenGroups(c *Cluster, hostID func(string) (HostID, bool)) (*groupIndex, *groupError) {
	g := &groupIndex{userByName: make(map[string]int, len(c.UserGroups)), hostByName: make(map[string]int, len(c.HostGroups))}
	for i, ug := range c.UserGroups {
		if ug.Name == "all" || ug.Name == "default" {
			return nil, &groupError{group: i, member: -1, msg: fmt.Sprintf("%s is reserved and cannot name a user group", quoteValue(ug.Name))}
		}
		if _, dup := g.userByName[ug.Name]; dup {
			return nil, &groupError{group: i, member: -1, msg: fmt.Sprintf("duplicate user group %s", quoteValue(ug.Name))}
		}
		g.userByName[ug.Name] = i
	}
	for i, hg := range c.HostGroups {
		if hg.Name == "all" {
			return nil, &groupError{hosts: true, group: i, member: -1, msg: "\"all\" is reserved and cannot name a host group"}
		}
		if _, isHost := hostID(hg.Name); isHost {
			return nil, &groupError{hosts: true, group: i, member: -1, msg: fmt.Sprintf("host group %s has the name of a host", quoteValue(hg.Name))}
		}
		if _, dup := g.hostByName[hg.Name]; dup {
			return nil, &groupError{hosts: true, group: i, member: -1, msg: fmt.Sprintf("duplicate host group %s", quoteValue(hg.Name))}
		}
		g.hostByName[hg.Name] = i
	}
	for _, ug := range c.UserGroups {
		for _, m := range ug.Members {
			if _, sub := g.userByName[m]; !sub {
				g.users = append(g.users, m)
			}
		}
	}
	slices.Sort(g.users)
	g.users = slices.Compact(g.users)

	total := 0
	uf := flattener[UserID]{names: func(i int) (string, []string) { return c.UserGroups[i].Name, c.UserGroups[i].Members },
		byName: g.userByName, total: &total, what: "user group"}
	uf.leaf = func(name string) (UserID, bool) {
		k, ok := slices.BinarySearch(g.users, name)
		return UserID(k), ok
	}
	if err := uf.run(len(c.UserGroups)); err != nil {
		return nil, err
	}
	hf := flattener[HostID]{names: func(i int) (string, []string) { return c.HostGroups[i].Name, c.HostGroups[i].Members },
		byName: g.hostByName, total: &total, what: "host group", leaf: hostID, needLeaf: "host or host group"}
	if err := hf.run(len(c.HostGroups)); err != nil {
		err.hosts = true
		return nil, err
	}
	g.userFlat, g.hostFlat = uf.flat, hf.flat
	return g, nil
}

// flattener expands one kind of groups: a depth-first walk in group order
// that merges each group's direct members with its subgroups' flat lists.
type flattener[ID ~int32] struct {
	names    func(i int) (string, []string) // group i's name and members
	byName   map[string]int                 // group name → index
	leaf     func(string) (ID, bool)        // a member that is not a group
	needLeaf string                         // when set, a member must be a leaf or a group: what to call it
	what     string                         // "user group", "host group"
	total    *int                           // entries so far, all kinds

	flat  [][]ID
	state []uint8 // 0 unvisited, 1 on the stack, 2 done
	stack []int
}

func (f *flattener[ID]) run(n int) *groupError {
	f.flat = make([][]ID, n)
	f.state = make([]uint8, n)
	for i := range n {
		if f.state[i] == 0 {
			if err := f.visit(i); err != nil {
				return err
			}
		}
	}
	return nil
}

func (f *flattener[ID]) visit(i int) *groupError {
	f.state[i] = 1
	f.stack = append(f.stack, i)
	_, members := f.names(i)
	var ids []ID
	var subs []int
	for k, m := range members {
		if sub, ok := f.byName[m]; ok {
			switch f.state[sub] {
			case 1:
				return &groupError{group: i, member: k, msg: "cycle of " + f.what + "s: " + f.cycle(sub)}
			case 0:
				if err := f.visit(sub); err != nil {
					return err
				}
			}
			subs = append(subs, sub)
			continue
		}
		id, ok := f.leaf(m)
		if !ok {
			if f.needLeaf != "" {
				return &groupError{group: i, member: k, msg: fmt.Sprintf("unknown %s %s", f.needLeaf, quoteValue(m))}
			}
			continue
		}
		ids = append(ids, id)
	}
	size := len(ids)
	for _, s := range subs {
		size += len(f.flat[s])
	}
	if *f.total+size > MaxGroupMembers {
		name, _ := f.names(i)
		return &groupError{group: i, member: -1, msg: fmt.Sprintf("%s %s: the groups' members, subgroups expanded, pass %d in all", f.what, quoteValue(name), MaxGroupMembers)}
	}
	ids = slices.Grow(ids, size-len(ids))
	for _, s := range subs {
		ids = append(ids, f.flat[s]...)
	}
	slices.Sort(ids)
	ids = slices.Clip(slices.Compact(ids))
	*f.total += len(ids)
	f.flat[i] = ids
	f.state[i] = 2
	f.stack = f.stack[:len(f.stack)-1]
	return nil
}

// cycle renders the cycle that closes at group sub, on the stack: "a → b → a".
func (f *flattener[ID]) cycle(sub int) string {
	k := slices.Index(f.stack, sub)
	var parts []string
	for _, g := range f.stack[k:] {
		name, _ := f.names(g)
		parts = append(parts, clipText(name))
	}
	name, _ := f.names(sub)
	return strings.Join(append(parts, clipText(name)), " → ")
}

// UserGroupByName returns the index in UserGroups of the named user group.
func (c *Cluster) UserGroupByName(name string) (int, bool) {
	if c.groups == nil {
		return 0, false
	}
	g, ok := c.groups.userByName[name]
	return g, ok
}

// HostGroupByName returns the index in HostGroups of the named host group.
func (c *Cluster) HostGroupByName(name string) (int, bool) {
	if c.groups == nil {
		return 0, false
	}
	g, ok := c.groups.hostByName[name]
	return g, ok
}

// GroupUsers returns the users that user groups list, sorted; a user's
// index is its UserID.
func (c *Cluster) GroupUsers() []string {
	if c.groups == nil {
		return nil
	}
	return c.groups.users
}

// GroupUserID returns the UserID of user, false when no user group lists
// it.
func (c *Cluster) GroupUserID(user string) (UserID, bool) {
	if c.groups == nil {
		return 0, false
	}
	k, ok := slices.BinarySearch(c.groups.users, user)
	return UserID(k), ok
}

// UserGroupUsers returns the users of user group g, its subgroups'
// included, sorted by UserID. The slice is shared: do not modify it.
func (c *Cluster) UserGroupUsers(g int) []UserID { return c.groups.userFlat[g] }

// HostGroupHosts returns the hosts of host group g, its subgroups'
// included, sorted by HostID. The slice is shared: do not modify it.
func (c *Cluster) HostGroupHosts(g int) []HostID { return c.groups.hostFlat[g] }

// InUserGroup reports whether user belongs to user group g, directly or
// through a subgroup.
func (c *Cluster) InUserGroup(user string, g int) bool {
	id, ok := c.GroupUserID(user)
	if !ok {
		return false
	}
	_, in := slices.BinarySearch(c.groups.userFlat[g], id)
	return in
}

// ExpandHosts returns the hosts that names, host names and host group
// names, stand for: sorted by HostID, each once. Unknown names are left
// out.
func (c *Cluster) ExpandHosts(names []string) []HostID {
	var out []HostID
	for _, n := range names {
		if g, ok := c.HostGroupByName(n); ok {
			out = append(out, c.groups.hostFlat[g]...)
		} else if h, ok := c.HostByName(n); ok {
			out = append(out, h)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// UserSet is the set of users that a list of user names and user group
// names stands for (a limit's users): membership costs a binary search,
// whatever the size of the groups.
type UserSet struct {
	c     *Cluster
	names []string // sorted: the names that are not user groups
	ids   []bool   // per UserID: in a named group
}

// NewUserSet returns the users names stand for: each name a user group
// (its users, subgroups' included) or a user.
func (c *Cluster) NewUserSet(names []string) *UserSet {
	s := &UserSet{c: c}
	for _, n := range names {
		g, ok := c.UserGroupByName(n)
		if !ok {
			s.names = append(s.names, n)
			continue
		}
		if s.ids == nil {
			s.ids = make([]bool, len(c.groups.users))
		}
		for _, id := range c.groups.userFlat[g] {
			s.ids[id] = true
		}
	}
	slices.Sort(s.names)
	return s
}

// Has reports whether user is in the set.
func (s *UserSet) Has(user string) bool {
	if _, ok := slices.BinarySearch(s.names, user); ok {
		return true
	}
	if s.ids == nil {
		return false
	}
	id, ok := s.c.GroupUserID(user)
	return ok && s.ids[id]
}
