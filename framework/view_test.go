package framework_test

import (
	"testing"

	"github.com/xce-sched/xce/cluster"
	"github.com/xce-sched/xce/framework"
	ct "github.com/xce-sched/xce/internal/clustertest"
)

// TestCapacity: a host's capacity for a term is its free slots bounded by
// free/per-slot for each per-slot rusage, worked by hand on a host of 8
// slots and 3,500 MB (and one without mem); CapacityBound is the same over
// the cluster's largest host. A tiny per-slot amount, whose quotient is
// beyond int, leaves the slots as the bound.
func TestCapacity(t *testing.T) {
	c := ct.Build(ct.Spec{Hosts: []ct.Host{{Name: "a", Slots: 8, Mem: 3500}, {Name: "b", Slots: 4, Mem: -1}}})
	v := &framework.View{Cluster: c, State: cluster.NewState(c)}
	for _, tc := range []struct {
		perSlot       float64
		a, b, boundOf int
	}{
		{0, 8, 4, 8},
		{1000, 3, 0, 3},
		{500, 7, 0, 7},
		{3500, 1, 0, 1},
		{4000, 0, 0, 0},
		{1e-16, 8, 0, 8},
	} {
		term := &framework.Term{PerSlot: []cluster.ResAmount{{Res: 0, Amount: tc.perSlot}}}
		if got := v.Capacity(0, term); got != tc.a {
			t.Errorf("mem=%v: host a takes %d, want %d", tc.perSlot, got, tc.a)
		}
		if got := v.Capacity(1, term); got != tc.b {
			t.Errorf("mem=%v: host b takes %d, want %d", tc.perSlot, got, tc.b)
		}
		if got := v.CapacityBound(term); got != tc.boundOf {
			t.Errorf("mem=%v: bound %d, want %d", tc.perSlot, got, tc.boundOf)
		}
	}
}
