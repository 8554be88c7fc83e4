package framework

import (
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/xce-sched/xce/cluster"
	ct "github.com/xce-sched/xce/internal/clustertest"
	"github.com/xce-sched/xce/resreq"
)

// fallingBefore is falling as it was before issue 29: it asked readsFree
// of the whole subtree at every level (quadratic in a chain's length).
// The property below holds the linear one to its answers.
func fallingBefore(e resreq.Expr, c *cluster.Cluster, up bool) bool {
	if !readsFree(e, c) {
		return true
	}
	switch n := e.(type) {
	case *resreq.Unary:
		return n.Op == resreq.OpNot && fallingBefore(n.X, c, !up)
	case *resreq.Binary:
		switch n.Op {
		case resreq.OpAnd, resreq.OpOr:
			return fallingBefore(n.X, c, up) && fallingBefore(n.Y, c, up)
		case resreq.OpLt, resreq.OpLe, resreq.OpGt, resreq.OpGe:
			x, xFree := n.X.(*resreq.Ident)
			y, yFree := n.Y.(*resreq.Ident)
			xFree = xFree && readsFree(x, c)
			yFree = yFree && readsFree(y, c)
			var grows bool
			switch {
			case xFree && !readsFree(n.Y, c):
				grows = n.Op == resreq.OpGt || n.Op == resreq.OpGe
			case yFree && !readsFree(n.X, c):
				grows = n.Op == resreq.OpLt || n.Op == resreq.OpLe
			default:
				return false
			}
			return grows == up
		}
	}
	return false
}

// drawExpr draws a select expression over free amounts (slots, mem),
// totals (maxmem), strings (type) and numbers, of depth at most depth.
func drawExpr(t *rapid.T, depth int) resreq.Expr {
	if depth == 0 || rapid.IntRange(0, 3).Draw(t, "leaf") == 0 {
		switch rapid.IntRange(0, 4).Draw(t, "leaf kind") {
		case 0:
			return &resreq.Number{Value: float64(rapid.IntRange(0, 9).Draw(t, "number"))}
		case 1:
			return &resreq.Defined{Name: "mem"}
		}
		return &resreq.Ident{Name: rapid.SampledFrom([]string{"slots", "mem", "maxmem", "type", "A"}).Draw(t, "name")}
	}
	if rapid.IntRange(0, 4).Draw(t, "unary") == 0 {
		return &resreq.Unary{Op: rapid.SampledFrom([]resreq.Op{resreq.OpNot, resreq.OpNeg}).Draw(t, "unary op"), X: drawExpr(t, depth-1)}
	}
	ops := []resreq.Op{resreq.OpOr, resreq.OpAnd, resreq.OpEq, resreq.OpNe, resreq.OpLt, resreq.OpLe, resreq.OpGt, resreq.OpGe, resreq.OpAdd, resreq.OpMul}
	return &resreq.Binary{Op: rapid.SampledFrom(ops).Draw(t, "op"), X: drawExpr(t, depth-1), Y: drawExpr(t, depth-1)}
}

// TestPropertyFallingLinear: the linear falling answers as the one before
// it on random expressions, both ways up.
func TestPropertyFallingLinear(t *testing.T) {
	c := ct.Build(ct.Spec{Hosts: []ct.Host{{Name: "a", Slots: 4, Mem: 1000, Type: "A"}}})
	rapid.Check(t, func(t *rapid.T) {
		e := drawExpr(t, 5)
		for _, up := range []bool{true, false} {
			if got, want := falling(e, c, up), fallingBefore(e, c, up); got != want {
				t.Fatalf("%v (up %v): falling %v, before %v", e, up, got, want)
			}
		}
	})
}

// BenchmarkFallingChain: a select[] of the most terms resreq accepts, a
// chain of && and || of free comparisons, classified once per op.
func BenchmarkFallingChain(b *testing.B) {
	c := ct.Build(ct.Spec{Hosts: []ct.Host{{Name: "a", Slots: 4, Mem: 1000, Type: "A"}}})
	var sb strings.Builder
	for i := range resreq.MaxTerms / 2 {
		if i > 0 {
			sb.WriteString([]string{" && ", " || "}[i%2])
		}
		sb.WriteString("slots > 1")
	}
	req, err := resreq.Parse("select[" + sb.String() + "]")
	if err != nil {
		b.Fatal(err)
	}
	e := req.Alternatives[0].Terms[0].Select
	b.ResetTimer()
	for b.Loop() {
		falling(e, c, true)
	}
}
