package framework_test

import (
	"testing"

	"github.com/xce-sched/xce/cluster"
	"github.com/xce-sched/xce/framework"
	ct "github.com/xce-sched/xce/internal/clustertest"
	"github.com/xce-sched/xce/resreq"
)

// TestCompileStatic: Term.Static keeps the top-level && operands of
// select[] that read no free amount. Hosts: a (type A, 4 slots, 1000 MB),
// b (type B, 1 slot, 100 MB), both idle; the want columns say, by hand,
// whether Static matches a and b.
func TestCompileStatic(t *testing.T) {
	c := ct.Build(ct.Spec{Hosts: []ct.Host{{Name: "a", Slots: 4, Mem: 1000, Type: "A"}, {Name: "b", Slots: 1, Mem: 100, Type: "B"}}})
	st := cluster.NewState(c)
	for _, tc := range []struct {
		sel  string
		a, b bool
	}{
		{"type == A", true, false},    // static: the whole select
		{"maxmem > 500", true, false}, // a total is static
		{"slots < 2", true, true},     // free slots: dropped
		{"mem < 500", true, true},     // free mem: dropped
		{"slots < 2 && type == A", true, false},
		{"type == B && mem > 500 && maxslots == 1", false, true},
		{"slots < 2 || type == A", true, true}, // not a conjunction: all dropped
		{"defined(mem) && !(mem > 2000)", true, true},
	} {
		req, err := resreq.Parse("select[" + tc.sel + "]")
		if err != nil {
			t.Fatal(err)
		}
		r, err := framework.Compile(req, c, 1, 1)
		if err != nil {
			t.Fatalf("%s: %v", tc.sel, err)
		}
		term := &r.Alts[0].Terms[0]
		if a, b := term.Static.Match(st.HostVals(0)), term.Static.Match(st.HostVals(1)); a != tc.a || b != tc.b {
			t.Errorf("select[%s]: Static matches a %v, b %v; want %v, %v", tc.sel, a, b, tc.a, tc.b)
		}
	}
}

// TestCompileRising: Term.Rising marks a select[] that may turn true on a
// host as its free amounts shrink, by hand for each form.
func TestCompileRising(t *testing.T) {
	c := ct.Build(ct.Spec{Hosts: []ct.Host{{Name: "a", Slots: 4, Mem: 1000, Type: "A"}}})
	for _, tc := range []struct {
		sel    string
		rising bool
	}{
		{"type == A", false},
		{"maxmem > 500", false},
		{"mem > 1000", false}, // only turns false as mem shrinks
		{"slots >= 2 && type == A", false},
		{"2 <= slots || maxslots > 8", false},
		{"!(slots < 2)", false},
		{"slots < 2", true},
		{"1000 > mem", true},
		{"!(mem > 1000)", true},
		{"slots == 2", true},
		{"slots != 2", true},
		{"mem / 2 > 100", true}, // arithmetic: not analysed
		{"mem > slots", true},
		{"slots >= 1 && mem <= 500", true},
	} {
		req, err := resreq.Parse("select[" + tc.sel + "]")
		if err != nil {
			t.Fatal(err)
		}
		r, err := framework.Compile(req, c, 1, 1)
		if err != nil {
			t.Fatalf("%s: %v", tc.sel, err)
		}
		if got := r.Alts[0].Terms[0].Rising; got != tc.rising || r.Rising != tc.rising {
			t.Errorf("select[%s]: Rising %v (request %v), want %v", tc.sel, got, r.Rising, tc.rising)
		}
	}
}
