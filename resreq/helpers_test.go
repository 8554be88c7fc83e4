package resreq

import (
	"fmt"
	"strings"
)

// AST constructors for expected values. Col fields are left 0; parsed trees
// are compared after clearCols.

func id(name string) Expr       { return &Ident{Name: name} }
func num(v float64) Expr        { return &Number{Value: v} }
func str(s string) Expr         { return &StringLit{Value: s} }
func def(name string) Expr      { return &Defined{Name: name} }
func not(x Expr) Expr           { return &Unary{Op: OpNot, X: x} }
func neg(x Expr) Expr           { return &Unary{Op: OpNeg, X: x} }
func bin(op Op, x, y Expr) Expr { return &Binary{Op: op, X: x, Y: y} }

// one is a requirement of one alternative of one term (Count 0).
func one(t Term) *Requirement {
	return &Requirement{Alternatives: []*Compound{{Terms: []*Term{&t}}}}
}

// sel is a requirement whose only section is select[e].
func sel(e Expr) *Requirement { return one(Term{Select: e}) }

// comp is a compound of the given terms.
func comp(terms ...Term) *Compound {
	c := &Compound{}
	for i := range terms {
		c.Terms = append(c.Terms, &terms[i])
	}
	return c
}

func alts(cs ...*Compound) *Requirement { return &Requirement{Alternatives: cs} }

// clearCols zeroes the Col fields of every Ident and Defined in r.
func clearCols(r *Requirement) {
	for _, c := range r.Alternatives {
		for _, t := range c.Terms {
			clearExprCols(t.Select)
		}
	}
}

func clearExprCols(e Expr) {
	switch n := e.(type) {
	case *Ident:
		n.Col = 0
	case *Defined:
		n.Col = 0
	case *Unary:
		clearExprCols(n.X)
	case *Binary:
		clearExprCols(n.X)
		clearExprCols(n.Y)
	}
}

// dump renders r structurally (S-expressions, nil vs empty made visible)
// for failure messages.
func dump(r *Requirement) string {
	if r == nil {
		return "<nil>"
	}
	var b strings.Builder
	for i, c := range r.Alternatives {
		fmt.Fprintf(&b, "alt%d:", i)
		for _, t := range c.Terms {
			fmt.Fprintf(&b, " {n=%d sel=%s order=%#v rusage=%#v span=%v same=%#v}",
				t.Count, dumpExpr(t.Select), t.Order, t.Rusage, t.Span, t.Same)
		}
		b.WriteByte(' ')
	}
	return b.String()
}

func dumpExpr(e Expr) string {
	switch n := e.(type) {
	case nil:
		return "nil"
	case *Ident:
		return fmt.Sprintf("id(%s@%d)", n.Name, n.Col)
	case *Number:
		return fmt.Sprintf("num(%v)", n.Value)
	case *StringLit:
		return fmt.Sprintf("str(%q)", n.Value)
	case *Defined:
		return fmt.Sprintf("def(%s@%d)", n.Name, n.Col)
	case *Unary:
		return fmt.Sprintf("(%s %s)", n.Op, dumpExpr(n.X))
	case *Binary:
		return fmt.Sprintf("(%s %s %s)", n.Op, dumpExpr(n.X), dumpExpr(n.Y))
	}
	return fmt.Sprintf("%T", e)
}
