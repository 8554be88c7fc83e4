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
//
// It visits each node once: && and || descend without asking readsFree of
// the whole subtree, which each level asking it made quadratic in a
// chain's length (issue 29); readsFree is asked only of the operands of a
// comparison or of a node falling does not descend into.
func falling(e resreq.Expr, c *cluster.Cluster, up bool) bool {
	switch n := e.(type) {
	case *resreq.Unary:
		if n.Op == resreq.OpNot {
			return falling(n.X, c, !up)
		}
	case *resreq.Binary:
		switch n.Op {
		case resreq.OpAnd, resreq.OpOr:
			return falling(n.X, c, up) && falling(n.Y, c, up)
		case resreq.OpLt, resreq.OpLe, resreq.OpGt, resreq.OpGe:
			xReads, yReads := readsFree(n.X, c), readsFree(n.Y, c)
			if !xReads && !yReads {
				return true
			}
			_, xIdent := n.X.(*resreq.Ident)
			_, yIdent := n.Y.(*resreq.Ident)
			// grows: the comparison holds for larger values of the free side.
			var grows bool
			switch {
			case xIdent && xReads && !yReads:
				grows = n.Op == resreq.OpGt || n.Op == resreq.OpGe
			case yIdent && yReads && !xReads:
				grows = n.Op == resreq.OpLt || n.Op == resreq.OpLe
			default:
				return false
			}
			return grows == up
		}
	}
	return !readsFree(e, c)
}
