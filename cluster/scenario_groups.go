package cluster

import (
	"slices"

	"github.com/goccy/go-yaml/ast"
)

// This file loads the host_groups and user_groups sections of a scenario
// or configuration (docs/scenario.md, "user_groups and host_groups").

// groupNodes are the YAML nodes of one group, for error positions.
type groupNodes struct {
	key     ast.Node   // the group's name
	keyPath string     // the group's path
	path    string     // the path of its member list
	members []ast.Node // per member
}

// loadGroups reads host_groups, then user_groups, and expands them (the
// expansion is kept in l.c.groups for the sections that name groups; Init
// recomputes it).
func (l *loader) loadGroups(top *fieldSet) error {
	hostNodes, err := l.loadHostGroups(top)
	if err != nil {
		return err
	}
	userNodes, err := l.loadUserGroups(top)
	if err != nil {
		return err
	}
	idx, gerr := flattenGroups(l.c, func(name string) (HostID, bool) {
		h, ok := l.hostIDs[name]
		return h, ok
	})
	if gerr != nil {
		nodes := userNodes
		if gerr.hosts {
			nodes = hostNodes
		}
		g := nodes[gerr.group]
		if gerr.member < 0 {
			return l.errAt(g.key, g.keyPath, "%s", gerr.msg)
		}
		return l.errAt(g.members[gerr.member], indexPath(g.path, gerr.member), "%s", gerr.msg)
	}
	l.c.groups = idx
	return nil
}

func (l *loader) loadHostGroups(top *fieldSet) ([]groupNodes, error) {
	e, ok := top.m["host_groups"]
	if !ok {
		return nil, nil
	}
	es, _, err := l.mapping(e.val, e.path)
	if err != nil {
		return nil, err
	}
	var nodes []groupNodes
	for _, ge := range es {
		if err := l.groupName(ge, "host group", "all"); err != nil {
			return nil, err
		}
		if _, isHost := l.hostIDs[ge.key]; isHost {
			return nil, l.errAt(ge.kn, ge.path, "host group %s has the name of a host; give it another name", quoteValue(ge.key))
		}
		members, gn, err := l.groupMembers(ge.kn, ge.val, ge.path, "host")
		if err != nil {
			return nil, err
		}
		l.c.HostGroups = append(l.c.HostGroups, HostGroup{Name: ge.key, Members: members})
		nodes = append(nodes, gn)
	}
	return nodes, nil
}

func (l *loader) loadUserGroups(top *fieldSet) ([]groupNodes, error) {
	e, ok := top.m["user_groups"]
	if !ok {
		return nil, nil
	}
	es, _, err := l.mapping(e.val, e.path)
	if err != nil {
		return nil, err
	}
	var nodes []groupNodes
	for _, ge := range es {
		if err := l.groupName(ge, "user group", "all", "default"); err != nil {
			return nil, err
		}
		r, _, err := l.resolve(ge.val, ge.path)
		if err != nil {
			return nil, err
		}
		ug := UserGroup{Name: ge.key}
		var gn groupNodes
		if _, isMap := r.(*ast.MappingNode); isMap {
			fs, err := l.fields(ge.val, ge.path, []string{"members", "shares"})
			if err != nil {
				return nil, err
			}
			if err := l.required(fs, "members"); err != nil {
				return nil, err
			}
			me := fs.m["members"]
			if ug.Members, gn, err = l.groupMembers(me.kn, me.val, me.path, "user"); err != nil {
				return nil, err
			}
			if ug.Shares, err = l.groupShares(fs, ug.Members); err != nil {
				return nil, err
			}
		} else if ug.Members, gn, err = l.groupMembers(ge.kn, ge.val, ge.path, "user"); err != nil {
			return nil, err
		}
		gn.key, gn.keyPath = ge.kn, ge.path
		l.c.UserGroups = append(l.c.UserGroups, ug)
		nodes = append(nodes, gn)
	}
	return nodes, nil
}

// groupName checks the name of a group: a name, none of reserved.
func (l *loader) groupName(ge entry, what string, reserved ...string) error {
	if err := l.checkName(ge.kn, ge.path, ge.key); err != nil {
		return err
	}
	if contains(reserved, ge.key) {
		return l.errAt(ge.kn, ge.path, "%s is reserved and cannot name a %s", quoteValue(ge.key), what)
	}
	return nil
}

// groupMembers reads a group's member list at n: distinct names, at least
// one, not "all". what ("host", "user") names a member that is not a
// group in messages.
func (l *loader) groupMembers(key, n ast.Node, path, what string) ([]string, groupNodes, error) {
	gn := groupNodes{key: key, keyPath: path, path: path}
	r, _, err := l.resolve(n, path)
	if err != nil {
		return nil, gn, err
	}
	if _, isSeq := r.(*ast.SequenceNode); !isSeq {
		return nil, gn, l.errAt(orNode(r, n), path, "expected a list of %s names and %s group names, got %s", what, what, kind(r))
	}
	names, seq, err := l.nameList(n, path, "member", nil, "")
	if err != nil {
		return nil, gn, err
	}
	if len(names) == 0 {
		return nil, gn, l.errAt(seq, path, "a group needs at least one member")
	}
	gn.members, _, _ = l.sequence(n, path)
	if k := slices.Index(names, "all"); k >= 0 {
		return nil, gn, l.errAt(gn.members[k], indexPath(path, k), "\"all\" cannot be a member of a group: list the members")
	}
	return names, gn, nil
}

// groupShares reads a user group's shares: direct member (or "default") →
// shares.
func (l *loader) groupShares(fs *fieldSet, members []string) ([]UserShare, error) {
	if !l.has(fs, "shares") {
		return nil, nil
	}
	e := fs.m["shares"]
	es, _, err := l.mapping(e.val, e.path)
	if err != nil {
		return nil, err
	}
	isMember := make(map[string]bool, len(members))
	for _, m := range members {
		isMember[m] = true
	}
	var out []UserShare
	for _, se := range es {
		if se.key != "default" && !isMember[se.key] {
			return nil, l.errAt(se.kn, se.path, "%s is not a member of the group (shares go to its members, or \"default\")", quoteValue(se.key))
		}
		n, err := l.toInt(se.val, se.path, 1, maxCount)
		if err != nil {
			return nil, err
		}
		out = append(out, UserShare{User: se.key, Shares: int(n)})
	}
	return out, nil
}
