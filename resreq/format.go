package resreq

import (
	"math"
	"strconv"
	"strings"
)

// String renders r in canonical form (docs/resreq.md): one alternative is
// rendered as its Compound; several are rendered `{A} || {B} ...`. For any r
// returned by Parse, Parse(r.String()) yields an equal Requirement (up to the
// Col fields of Ident and Defined) with the same String. Inputs that differ
// only in whitespace, section order, separators (`,` or `:` in rusage, `=` or
// `==`) or redundant parentheses have the same canonical form. A nil r
// renders as "".
func (r *Requirement) String() string {
	if r == nil {
		return ""
	}
	if len(r.Alternatives) == 1 {
		return r.Alternatives[0].String()
	}
	var b strings.Builder
	for i, c := range r.Alternatives {
		if i > 0 {
			b.WriteString(" || ")
		}
		b.WriteByte('{')
		c.writeTo(&b)
		b.WriteByte('}')
	}
	return b.String()
}

// String renders c in canonical form: a single term with Count 0 is
// rendered as its simple string (Term.String); otherwise terms are joined
// with " + ", each as `n*{sections}`, or `{sections}` for Count 0.
func (c *Compound) String() string {
	var b strings.Builder
	c.writeTo(&b)
	return b.String()
}

func (c *Compound) writeTo(b *strings.Builder) {
	if c == nil {
		return
	}
	if len(c.Terms) == 1 && c.Terms[0].Count == 0 {
		c.Terms[0].writeTo(b)
		return
	}
	for i, t := range c.Terms {
		if i > 0 {
			b.WriteString(" + ")
		}
		if t.Count != 0 {
			b.WriteString(strconv.Itoa(t.Count))
			b.WriteByte('*')
		}
		b.WriteByte('{')
		t.writeTo(b)
		b.WriteByte('}')
	}
}

// String renders t's sections (not its Count, which Compound.String
// renders) in canonical form: the present sections in the order select,
// order, rusage, span, same, separated by one space, e.g.
// `select[mem > 1000] order[-slots:mem] rusage[mem=2000:lic=1] span[ptile=4] same[type]`.
// A term with no section renders as "".
func (t *Term) String() string {
	var b strings.Builder
	t.writeTo(&b)
	return b.String()
}

func (t *Term) writeTo(b *strings.Builder) {
	if t == nil {
		return
	}
	n := b.Len()
	sep := func() {
		if b.Len() > n {
			b.WriteByte(' ')
		}
	}
	if t.Select != nil {
		b.WriteString("select[")
		writeExpr(b, t.Select)
		b.WriteByte(']')
	}
	if len(t.Order) > 0 {
		sep()
		b.WriteString("order[")
		for i, k := range t.Order {
			if i > 0 {
				b.WriteByte(':')
			}
			if k.Desc {
				b.WriteByte('-')
			}
			b.WriteString(k.Name)
		}
		b.WriteByte(']')
	}
	if len(t.Rusage) > 0 {
		sep()
		b.WriteString("rusage[")
		for i, r := range t.Rusage {
			if i > 0 {
				b.WriteByte(':')
			}
			b.WriteString(r.Name)
			b.WriteByte('=')
			b.WriteString(formatNumber(r.Value))
		}
		b.WriteByte(']')
	}
	if s := t.Span.String(); s != "" {
		sep()
		b.WriteString(s)
	}
	if len(t.Same) > 0 {
		sep()
		b.WriteString("same[")
		b.WriteString(strings.Join(t.Same, ":"))
		b.WriteByte(']')
	}
}

// String renders the span section: "" for SpanNone, `span[hosts=1]`,
// `span[hosts=-1]` or `span[ptile=N]`.
func (s Span) String() string {
	switch s.Kind {
	case SpanHostsOne:
		return "span[hosts=1]"
	case SpanHostsAny:
		return "span[hosts=-1]"
	case SpanPtile:
		return "span[ptile=" + strconv.Itoa(s.Ptile) + "]"
	}
	return ""
}

// formatNumber renders v: integers below 1e15 in plain decimal ("16000"),
// anything else in strconv's shortest 'g' form ("0.5", "1e+20").
func formatNumber(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// String returns the operator's canonical spelling ("&&", "==", "!", ...).
func (o Op) String() string {
	switch o {
	case OpOr:
		return "||"
	case OpAnd:
		return "&&"
	case OpEq:
		return "=="
	case OpNe:
		return "!="
	case OpLt:
		return "<"
	case OpLe:
		return "<="
	case OpGt:
		return ">"
	case OpGe:
		return ">="
	case OpAdd:
		return "+"
	case OpSub, OpNeg:
		return "-"
	case OpMul:
		return "*"
	case OpDiv:
		return "/"
	case OpNot:
		return "!"
	}
	return "?"
}

// spaced returns a binary operator's spelling between single spaces.
func (o Op) spaced() string {
	switch o {
	case OpOr:
		return " || "
	case OpAnd:
		return " && "
	case OpEq:
		return " == "
	case OpNe:
		return " != "
	case OpLt:
		return " < "
	case OpLe:
		return " <= "
	case OpGt:
		return " > "
	case OpGe:
		return " >= "
	case OpAdd:
		return " + "
	case OpSub:
		return " - "
	case OpMul:
		return " * "
	case OpDiv:
		return " / "
	}
	return " " + o.String() + " "
}

// Precedence levels used for parenthesisation.
const (
	precOr = iota + 1
	precAnd
	precCmp
	precAdd
	precMul
	precUnary
	precPrimary
)

func (o Op) prec() int {
	switch o {
	case OpOr:
		return precOr
	case OpAnd:
		return precAnd
	case OpEq, OpNe, OpLt, OpLe, OpGt, OpGe:
		return precCmp
	case OpAdd, OpSub:
		return precAdd
	case OpMul, OpDiv:
		return precMul
	}
	return precUnary
}

func exprPrec(e Expr) int {
	switch n := e.(type) {
	case *Binary:
		if n != nil {
			return n.Op.prec()
		}
	case *Unary:
		return precUnary
	}
	return precPrimary
}

// fmtItem is a pending piece of writeExpr's output: a literal when lit is
// not empty, else expression e (a nil e renders as "()").
type fmtItem struct {
	e   Expr
	lit string
}

// writeExpr renders e with parentheses only where the tree differs from
// what precedence and left associativity would give (comparisons never
// chain, so a comparison operand of a comparison is parenthesised). It
// keeps its pending pieces on a slice, not on the call stack, so any tree
// renders, however deep; a nil node renders as "()".
func writeExpr(b *strings.Builder, e Expr) {
	stack := []fmtItem{{e: e}}
	// push queues operand x, in parentheses when paren; pieces are pushed
	// in reverse order of output.
	push := func(x Expr, paren bool) {
		if paren {
			stack = append(stack, fmtItem{lit: ")"}, fmtItem{e: x}, fmtItem{lit: "("})
			return
		}
		stack = append(stack, fmtItem{e: x})
	}
	for len(stack) > 0 {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if it.lit != "" {
			b.WriteString(it.lit)
			continue
		}
		if isNilExpr(it.e) {
			b.WriteString("()")
			continue
		}
		switch n := it.e.(type) {
		case *Binary:
			p := n.Op.prec()
			lp := p
			if p == precCmp {
				lp++
			}
			push(n.Y, exprPrec(n.Y) <= p)
			stack = append(stack, fmtItem{lit: n.Op.spaced()})
			push(n.X, exprPrec(n.X) < lp)
		case *Unary:
			push(n.X, exprPrec(n.X) < precUnary)
			stack = append(stack, fmtItem{lit: n.Op.String()})
		default: // a leaf
			b.WriteString(n.String())
		}
	}
}

// isNilExpr reports whether e is nil or a nil pointer to a node type.
func isNilExpr(e Expr) bool {
	switch n := e.(type) {
	case nil:
		return true
	case *Binary:
		return n == nil
	case *Unary:
		return n == nil
	case *Ident:
		return n == nil
	case *Number:
		return n == nil
	case *StringLit:
		return n == nil
	case *Defined:
		return n == nil
	}
	return false
}

// String returns the name.
func (n *Ident) String() string { return n.Name }

// String renders the value as formatNumber does: plain decimal integers
// below 1e15, else strconv's shortest 'g' form.
func (n *Number) String() string { return formatNumber(n.Value) }

// String renders the value in double quotes, or in single quotes when it
// contains a double quote (the language has no escapes).
func (n *StringLit) String() string {
	if strings.IndexByte(n.Value, '"') >= 0 {
		return "'" + n.Value + "'"
	}
	return `"` + n.Value + `"`
}

// String renders `defined(name)`.
func (n *Defined) String() string { return "defined(" + n.Name + ")" }

// String renders `!X` or `-X`, parenthesising a binary operand.
func (n *Unary) String() string {
	var b strings.Builder
	writeExpr(&b, n)
	return b.String()
}

// String renders `X op Y` with single spaces around the operator and
// parentheses only where precedence requires them.
func (n *Binary) String() string {
	var b strings.Builder
	writeExpr(&b, n)
	return b.String()
}
