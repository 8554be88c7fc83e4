package framework

import (
	"github.com/xce-sched/xce/cluster"
	"github.com/xce-sched/xce/resreq"
)

// This file classifies select[] expressions by how they read free amounts
// (free slots, free consumables), which change as jobs start and end.

// readsFree reports whether select expression e reads a value that changes
// as jobs start and end: a host's free slots or the free amount of a
// consumable (not a total such as maxmem, not defined()).
func readsFree(e resreq.Expr, c *cluster.Cluster) bool {
	switch n := e.(type) {
	case *resreq.Ident:
		if n.Name == "slots" {
			return true
		}
		_, ok := c.ResourceByName(n.Name)
		return ok
	case *resreq.Unary:
		return readsFree(n.X, c)
	case *resreq.Binary:
		return readsFree(n.X, c) || readsFree(n.Y, c)
	}
	return false
}

// staticConjuncts returns the conjunction of the top-level && operands of
// e that read no free amount, nil (every host) when there is none.
func staticConjuncts(e resreq.Expr, c *cluster.Cluster) resreq.Expr {
	if b, ok := e.(*resreq.Binary); ok && b.Op == resreq.OpAnd {
		x, y := staticConjuncts(b.X, c), staticConjuncts(b.Y, c)
		switch {
		case x == nil:
			return y
		case y == nil:
			return x
		}
		return &resreq.Binary{Op: resreq.OpAnd, X: x, Y: y}
	}
	if readsFree(e, c) {
		return nil
	}
	return e
}

// falling reports whether condition e, taken as is (up) or negated (!up),
// can only turn from true to false on a host as its free amounts shrink
// (what starting jobs does). It recognises static parts, && and ||, !, and
// comparisons of a free amount with a static operand: free > x and
// free >= x fall with it, free < x and free <= x rise. Anything else that
// reads a free amount (==, !=, arithmetic on it, a bare free amount as a
// condition) counts as rising: the answer errs on the safe side.
func falling(e resreq.Expr, c *cluster.Cluster, up bool) bool {
	if !readsFree(e, c) {
		return true
	}
	switch n := e.(type) {
	case *resreq.Unary:
		return n.Op == resreq.OpNot && falling(n.X, c, !up)
	case *resreq.Binary:
		switch n.Op {
		case resreq.OpAnd, resreq.OpOr:
			return falling(n.X, c, up) && falling(n.Y, c, up)
		case resreq.OpLt, resreq.OpLe, resreq.OpGt, resreq.OpGe:
			x, xFree := n.X.(*resreq.Ident)
			y, yFree := n.Y.(*resreq.Ident)
			xFree = xFree && readsFree(x, c)
			yFree = yFree && readsFree(y, c)
			// grows: the comparison holds for larger values of the free side.
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
