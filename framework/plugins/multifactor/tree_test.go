package multifactor

import (
	"math"
	"testing"

	"github.com/xce-sched/xce/cluster"
)

// TestClassicExample is the worked example of Slurm's Classic Fairshare
// page (classic_fair_share.html, "Example"): accounts A (40 shares) with
// B (30: user 1) and C (10: users 2 and 3), D (60) with E (25: user 4)
// and F (35: user 5); usages, as fractions of the total, user 1 0.2,
// user 2 0.25, user 4 0.25. The page's factors: 0.408479, 0.022097,
// 0.125000, 0.500000, 0.749154 (d = 1).
func TestClassicExample(t *testing.T) {
	tr := newTree([]cluster.SlurmAccount{
		{Name: "A", Shares: 40}, {Name: "D", Shares: 60},
		{Name: "B", Parent: "A", Shares: 30, Users: []cluster.UserShare{{User: "u1", Shares: 1}}},
		{Name: "C", Parent: "A", Shares: 10, Users: []cluster.UserShare{{User: "u2", Shares: 1}, {User: "u3", Shares: 1}}},
		{Name: "E", Parent: "D", Shares: 25, Users: []cluster.UserShare{{User: "u4", Shares: 1}}},
		{Name: "F", Parent: "D", Shares: 35, Users: []cluster.UserShare{{User: "u5", Shares: 1}}},
	})
	tr.charge(tr.assoc("B", "u1"), 0.2)
	tr.charge(tr.assoc("C", "u2"), 0.25)
	tr.charge(tr.assoc("E", "u4"), 0.25)
	tr.nodes[0].usage = 1 // the page's usages are fractions of the total
	tr.classic(1)
	for _, c := range []struct {
		account, user string
		want          float64
	}{{"B", "u1", 0.408479}, {"C", "u2", 0.022097}, {"C", "u3", 0.125}, {"E", "u4", 0.5}, {"F", "u5", 0.749154}} {
		if got := tr.nodes[tr.assoc(c.account, c.user)].fs; math.Abs(got-c.want) > 5e-7 {
			t.Errorf("%s: %.6f; want %.6f", c.user, got, c.want)
		}
	}
	// With FairShareDampeningFactor=5 the exponent is divided by 5: user 2
	// 2^(−(0.275/0.05)/5) = 2^−1.1.
	tr.classic(5)
	if got := tr.nodes[tr.assoc("C", "u2")].fs; math.Abs(got-math.Exp2(-1.1)) > 1e-12 {
		t.Errorf("damped: %v; want %v", got, math.Exp2(-1.1))
	}
}

// TestFairTreeTies walks the page's tie rules by hand (fair_tree.html,
// "Ties") over 5 user associations: root → accounts a (users z, w) and b
// (users x, y), and user r directly under root; every share 1; usage: r
// 10, z 10 (so a 10, root 20). Level fair-shares under root: b +Inf (no
// usage), r and a (1/3) / (10/20) = 2/3. Sorted: b, r, a (a user before
// an account of equal LF). b's users x and y (+Inf, tied) share the top
// rank 5 → 1. r: rank 3 (two ranks used) → 3/5. a ties with r: its first
// user keeps r's rank; a's users sort w (+Inf) before z (S 1/2 over U 1 =
// 1/2), so w → 3/5, and z takes the next rank, 1 → 1/5.
func TestFairTreeTies(t *testing.T) {
	tr := newTree([]cluster.SlurmAccount{
		{Name: "a", Shares: 1, Users: []cluster.UserShare{{User: "z", Shares: 1}, {User: "w", Shares: 1}}},
		{Name: "b", Shares: 1, Users: []cluster.UserShare{{User: "x", Shares: 1}, {User: "y", Shares: 1}}},
	})
	r := tr.addNode(0, true, 1)
	tr.nUsers++
	tr.charge(r, 10)
	tr.charge(tr.assoc("a", "z"), 10)
	tr.fairTree()
	for _, c := range []struct {
		id   int32
		want float64
	}{{tr.assoc("b", "x"), 1}, {tr.assoc("b", "y"), 1}, {r, 3.0 / 5}, {tr.assoc("a", "w"), 3.0 / 5}, {tr.assoc("a", "z"), 1.0 / 5}} {
		if got := tr.nodes[c.id].fs; got != c.want {
			t.Errorf("node %d: %v; want %v", c.id, got, c.want)
		}
	}
}
