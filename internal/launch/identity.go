//go:build linux

package launch

import (
	"fmt"
	"os/user"
	"slices"
	"strconv"
	"syscall"
)

// identity is who a job runs as. set: the agent is root, so the child
// takes uid, gid and groups at exec, and output files are opened with
// them; otherwise the job inherits the agent's own credentials, which
// equal uid and gid.
type identity struct {
	uid, gid int
	groups   []int // supplementary groups, gid among them
	set      bool
}

// userDB looks a uid up: its user name and group ids (os/user: the
// primary group and every group listing the user).
type userDB func(uid uint32) (name string, groups []string, err error)

// osUserDB is the host's user database, through os/user.
func osUserDB(uid uint32) (string, []string, error) {
	u, err := user.LookupId(strconv.FormatUint(uint64(uid), 10))
	if err != nil {
		return "", nil, err
	}
	groups, err := u.GroupIds()
	if err != nil {
		return "", nil, fmt.Errorf("groups of %s: %w", u.Username, err)
	}
	return u.Username, groups, nil
}

// resolveIdentity decides who s runs as, for an agent running with
// effective ids euid and egid. uid 0 needs s.AllowRoot. A root agent runs
// any user the database knows (whose name is s.User, when set), with the
// supplementary groups the database gives and s.GID; any other agent runs
// only its own uid and gid, with its own groups.
func resolveIdentity(s *Spec, euid, egid int, db userDB) (identity, error) {
	uid, gid := int(s.UID), int(s.GID)
	if uid == 0 && !s.AllowRoot {
		return identity{}, fmt.Errorf("%w: job %d: uid 0", ErrRoot, s.Job)
	}
	if euid != 0 {
		if uid != euid || gid != egid {
			return identity{}, fmt.Errorf("%w: job %d: uid %d gid %d, but the agent is not root and runs as uid %d gid %d",
				ErrIdentity, s.Job, uid, gid, euid, egid)
		}
		return identity{uid: uid, gid: gid}, nil
	}
	name, ids, err := db(s.UID)
	if err != nil {
		return identity{}, fmt.Errorf("%w: job %d: uid %d: %w", ErrIdentity, s.Job, uid, err)
	}
	if s.User != "" && s.User != name {
		return identity{}, fmt.Errorf("%w: job %d: submitted by %q, but uid %d is %q here", ErrIdentity, s.Job, s.User, uid, name)
	}
	groups := []int{gid}
	for _, g := range ids {
		n, err := strconv.ParseUint(g, 10, 32)
		if err != nil {
			return identity{}, fmt.Errorf("%w: job %d: group id %q of %s: %w", ErrIdentity, s.Job, g, name, err)
		}
		if !slices.Contains(groups, int(n)) {
			groups = append(groups, int(n))
		}
	}
	return identity{uid: uid, gid: gid, groups: groups, set: true}, nil
}

// credential is the child's credential, or nil to inherit the agent's.
func (id identity) credential() *syscall.Credential {
	if !id.set {
		return nil
	}
	groups := make([]uint32, len(id.groups))
	for i, g := range id.groups {
		groups[i] = uint32(g)
	}
	return &syscall.Credential{Uid: uint32(id.uid), Gid: uint32(id.gid), Groups: groups}
}
