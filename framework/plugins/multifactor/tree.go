package multifactor

import (
	"cmp"
	"math"
	"slices"

	"github.com/xce-sched/xce/cluster"
)

// tree is Slurm's association tree: root, its accounts (nested by
// parent), and under each account its user associations. Each node
// keeps its raw usage (decayed CPU-seconds, Slurm's usage_raw), charged
// to the user association and every account above it up to root.
type tree struct {
	nodes []node // 0 is root
	// accounts and users find nodes: account name → node, and
	// account + "\x00" + user → the user association's node.
	accounts map[string]int32
	users    map[string]int32
	nUsers   int // user associations (Fair Tree's g_user_assoc_count)
	// order is Fair Tree's scratch: the children being ranked.
	order []int32
}

// node is one association.
type node struct {
	parent   int32
	children []int32
	user     bool
	shares   float64 // raw shares (sacctmgr Fairshare)
	usage    float64 // raw usage, decayed
	// levelFS is Fair Tree's level fair-share S/U among its siblings.
	levelFS float64
	// fs is a user association's fair-share factor as of the last
	// calculation.
	fs float64
}

// newTree builds the tree of the configured accounts (in file order, a
// parent before its children whatever the file's order).
func newTree(accounts []cluster.SlurmAccount) *tree {
	t := &tree{nodes: []node{{parent: -1, shares: 1}}, accounts: map[string]int32{}, users: map[string]int32{}}
	byName := map[string]int{}
	for i, a := range accounts {
		byName[a.Name] = i
	}
	var add func(i int) int32
	add = func(i int) int32 {
		a := accounts[i]
		if id, ok := t.accounts[a.Name]; ok {
			return id
		}
		parent := int32(0)
		if p, ok := byName[a.Parent]; ok && a.Parent != "" {
			parent = add(p) // the loader refused cycles
		}
		id := t.addNode(parent, false, float64(a.Shares))
		t.accounts[a.Name] = id
		return id
	}
	for i := range accounts {
		add(i)
	}
	for _, a := range accounts {
		for _, u := range a.Users {
			t.users[a.Name+"\x00"+u.User] = t.addNode(t.accounts[a.Name], true, float64(u.Shares))
			t.nUsers++
		}
	}
	return t
}

func (t *tree) addNode(parent int32, user bool, shares float64) int32 {
	id := int32(len(t.nodes))
	t.nodes = append(t.nodes, node{parent: parent, user: user, shares: shares})
	t.nodes[parent].children = append(t.nodes[parent].children, id)
	return id
}

// assoc returns the user association of user under account, adding the
// account (under root) and the association, each with 1 share
// (sacctmgr's default Fairshare), when they do not exist yet.
func (t *tree) assoc(account, user string) int32 {
	if id, ok := t.users[account+"\x00"+user]; ok {
		return id
	}
	a, ok := t.accounts[account]
	if !ok {
		a = t.addNode(0, false, 1)
		t.accounts[account] = a
	}
	id := t.addNode(a, true, 1)
	t.users[account+"\x00"+user] = id
	t.nUsers++
	return id
}

// charge adds usage to association id and every account above it.
func (t *tree) charge(id int32, usage float64) {
	for n := id; n >= 0; n = t.nodes[n].parent {
		t.nodes[n].usage += usage
	}
}

// decay multiplies every usage by f.
func (t *tree) decay(f float64) {
	if f == 1 {
		return
	}
	for i := range t.nodes {
		t.nodes[i].usage *= f
	}
}

// levelShares returns the raw shares of n's siblings, n included.
func (t *tree) levelShares(n int32) float64 {
	s := 0.0
	for _, c := range t.nodes[t.nodes[n].parent].children {
		s += t.nodes[c].shares
	}
	return s
}

// fairTree computes every user association's fair-share factor by the
// Fair Tree algorithm (https://slurm.schedmd.com/fair_tree.html): each
// association's level fair-share is LF = S / U, with S its shares over
// its siblings' and U its usage over its parent's (LF is +Inf for U = 0,
// and 0 for S = 0); the tree is walked depth-first, children in
// decreasing LF (a user before an account of equal LF), and users are
// ranked in the order found, the first getting rank = the number of user
// associations; the factor is rank / that number. Ties: sibling users of
// equal LF share a rank; sibling accounts of equal LF have their
// children merged before they are sorted; a user of equal LF to the
// account before it shares the rank of that account's last-ranked user
// (the page: "A user with the same Level Fairshare as a sibling account
// will receive the same rank as its highest ranked user").
func (t *tree) fairTree() {
	if t.nUsers == 0 {
		return
	}
	rank, rnt := t.nUsers, t.nUsers
	t.rank(t.nodes[0].children, &rank, &rnt, false)
}

// rank ranks the users under siblings (one level, or merged levels).
func (t *tree) rank(siblings []int32, rank, rnt *int, tiedIn bool) {
	sorted := slices.Clone(siblings)
	for _, c := range sorted {
		n := &t.nodes[c]
		s := 0.0
		if ls := t.levelShares(c); ls > 0 {
			s = n.shares / ls
		}
		u := 0.0
		if pu := t.nodes[n.parent].usage; pu > 0 {
			u = n.usage / pu
		}
		switch {
		case s == 0:
			n.levelFS = 0
		case u == 0:
			n.levelFS = math.Inf(1)
		default:
			n.levelFS = s / u
		}
	}
	slices.SortStableFunc(sorted, func(a, b int32) int {
		na, nb := &t.nodes[a], &t.nodes[b]
		if c := cmp.Compare(nb.levelFS, na.levelFS); c != 0 {
			return c
		}
		switch {
		case na.user && !nb.user:
			return -1
		case !na.user && nb.user:
			return 1
		}
		return 0
	})
	prev := math.NaN()
	for i := 0; i < len(sorted); i++ {
		n := &t.nodes[sorted[i]]
		tied := (i == 0 && tiedIn) || n.levelFS == prev
		if n.user {
			if !tied {
				*rank = *rnt
			}
			n.fs = float64(*rank) / float64(t.nUsers)
			*rnt--
			prev = n.levelFS
			continue
		}
		// Merge the children of the sibling accounts of equal LF.
		var children []int32
		j := i
		for ; j < len(sorted) && !t.nodes[sorted[j]].user && t.nodes[sorted[j]].levelFS == n.levelFS; j++ {
			children = append(children, t.nodes[sorted[j]].children...)
		}
		t.rank(children, rank, rnt, tied)
		prev = n.levelFS
		i = j - 1
	}
}

// classic computes every user association's classic fair-share factor
// (https://slurm.schedmd.com/classic_fair_share.html): F = 2^(−UE/S/d)
// with S the normalized shares (the product, from the user up to root,
// of each association's shares over its siblings'), d the dampening
// factor, and UE the effective usage: for an association just under
// root its usage over root's, below that UA + (UEparent − UA) × Schild /
// Sall_siblings with UA its usage over root's.
func (t *tree) classic(damp float64) {
	root := t.nodes[0].usage
	var walk func(n int32, sNorm, ueParent float64, depth int)
	walk = func(n int32, sNorm, ueParent float64, depth int) {
		nd := &t.nodes[n]
		share := 0.0
		if ls := t.levelShares(n); ls > 0 {
			share = nd.shares / ls
		}
		sNorm *= share
		ua := 0.0
		if root > 0 {
			ua = min(nd.usage/root, 1)
		}
		ue := ua
		if depth > 1 {
			ue = ua + (ueParent-ua)*share
		}
		if nd.user {
			nd.fs = 0
			if sNorm > 0 {
				nd.fs = math.Exp2(-(ue / sNorm) / damp)
			}
			return
		}
		for _, c := range nd.children {
			walk(c, sNorm, ue, depth+1)
		}
	}
	for _, c := range t.nodes[0].children {
		walk(c, 1, 0, 1)
	}
}
