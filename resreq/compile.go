package resreq

import "fmt"

// Select is a select expression compiled against a Schema. It is immutable
// and safe for concurrent use by many goroutines. The zero value and a nil
// *Select match every host.
type Select struct {
	match condFn // nil: matches every host
}

type (
	numFn  = func(vals []float64) float64
	condFn = func(vals []float64) bool
)

// Match evaluates the expression on one host's value vector (indexed by the
// Schema's columns; NaN marks an undefined attribute). It does not allocate.
// vals must be at least as long as the largest column the Schema returned
// for a name the expression uses; a shorter vector panics with an index out
// of range, like any slice access.
func (p *Select) Match(vals []float64) bool {
	if p == nil || p.match == nil {
		return true
	}
	return p.match(vals)
}

// All reports whether p matches every host without looking (no
// expression).
func (p *Select) All() bool { return p == nil || p.match == nil }

// CompileSelect compiles select expression e against schema s, once, for
// evaluation with Match on many hosts. A nil e gives a Select that matches
// every host (s is then not used).
//
// Name resolution: an Ident is looked up with s.Lookup. An Ident that s does
// not know is a string constant (s.StringValue(name)) when it is a direct
// operand of == or != whose other operand is a KindString attribute
// (`type == X86_64`); anywhere else it is an error `unknown resource "name"`
// at the Ident's Col. A StringLit is always a string constant. defined(x) is
// false, not an error, when s does not know x.
//
// Types: KindNumeric and KindBool attributes and numbers are numeric;
// comparisons, &&, ||, ! and defined() are boolean; a boolean used as a
// number is 1 or 0 (LSF's convention). String attributes and constants may
// only be compared with each other by == and !=; any other use (ordering
// comparison, arithmetic, as a condition, against a number) is an *Error at
// the Col of the string attribute's Ident (0 when the operand has no
// position, e.g. a StringLit).
//
// Evaluation (NaN marks an undefined value): any comparison with a NaN
// operand is false, including !=; a number is true as a condition iff it is
// neither NaN nor 0; arithmetic follows IEEE 754 (NaN propagates, division
// by zero gives ±Inf or NaN); && and || short-circuit left to right.
//
// All errors are *Error values.
func CompileSelect(e Expr, s Schema) (*Select, error) {
	if e == nil {
		return &Select{}, nil
	}
	if s == nil {
		return nil, errorf(0, "nil schema")
	}
	c := &compiler{s: s}
	v, err := c.expr(e)
	if err != nil {
		return nil, err
	}
	cond, err := c.asCond(v)
	if err != nil {
		return nil, err
	}
	if v.kind == vBool && v.konst {
		k := v.kb
		return &Select{match: func([]float64) bool { return k }}, nil
	}
	return &Select{match: cond}, nil
}

// CompileOrder resolves the keys of an order section to columns of s: for
// each key, its column in cols and its direction in desc (true for a
// descending `-name` key). Every key must name a KindNumeric attribute;
// otherwise it returns an *Error with Col 0 whose message names the key.
// Empty keys give empty (nil) slices.
func CompileOrder(keys []OrderKey, s Schema) (cols []int, desc []bool, err error) {
	if len(keys) == 0 {
		return nil, nil, nil
	}
	if s == nil {
		return nil, nil, errorf(0, "nil schema")
	}
	cols = make([]int, len(keys))
	desc = make([]bool, len(keys))
	for i, k := range keys {
		col, kind, ok := s.Lookup(k.Name)
		if !ok {
			return nil, nil, errorf(0, "unknown resource %q in order section", k.Name)
		}
		if kind != KindNumeric {
			return nil, nil, errorf(0, "order key %q is not a numeric attribute", k.Name)
		}
		cols[i], desc[i] = col, k.Desc
	}
	return cols, desc, nil
}

type valKind uint8

const (
	vNum     valKind = iota + 1 // num (or col/k) gives the value
	vBool                       // cond (or kb) gives the value
	vStr                        // a string attribute column or a string constant
	vUnknown                    // an Ident the schema does not know (== / != operands only)
)

// cval is a compiled subexpression. Exactly one representation is set:
// konst (k or kb), col >= 0 (a plain column), or num/cond.
type cval struct {
	kind  valKind
	konst bool
	k     float64 // numeric or string constant
	kb    bool    // boolean constant
	col   int     // >= 0: the value is vals[col]
	num   numFn
	cond  condFn
	name  string // attribute or string, for messages
	pos   int    // Col of the leftmost Ident/Defined inside, 0 if none
}

func constNum(k float64, pos int) cval {
	return cval{kind: vNum, konst: true, k: k, col: -1, pos: pos}
}

func constBool(b bool, pos int) cval {
	return cval{kind: vBool, konst: true, kb: b, col: -1, pos: pos}
}

func (v cval) describe() string {
	if v.col >= 0 {
		return fmt.Sprintf("string attribute %q", v.name)
	}
	return fmt.Sprintf("string %q", v.name)
}

type compiler struct {
	s Schema
}

func firstPos(a, b int) int {
	if a != 0 {
		return a
	}
	return b
}

// expr compiles e; an unknown Ident is an error.
func (c *compiler) expr(e Expr) (cval, *Error) {
	v, err := c.operand(e)
	if err == nil && v.kind == vUnknown {
		err = errorf(v.pos, "unknown resource %q", v.name)
	}
	return v, err
}

// operand compiles e; an unknown Ident gives a vUnknown value.
func (c *compiler) operand(e Expr) (cval, *Error) {
	switch n := e.(type) {
	case *Ident:
		if n == nil {
			break
		}
		col, kind, ok := c.s.Lookup(n.Name)
		switch {
		case !ok:
			return cval{kind: vUnknown, col: -1, name: n.Name, pos: n.Col}, nil
		case kind == KindString:
			return cval{kind: vStr, col: col, name: n.Name, pos: n.Col}, nil
		case col < 0:
			return cval{}, errorf(n.Col, "resource %q has a negative column", n.Name)
		}
		return cval{kind: vNum, col: col, name: n.Name, pos: n.Col}, nil
	case *Number:
		if n != nil {
			return constNum(n.Value, 0), nil
		}
	case *StringLit:
		if n != nil {
			return cval{kind: vStr, konst: true, k: c.s.StringValue(n.Value), col: -1, name: n.Value}, nil
		}
	case *Defined:
		if n == nil {
			break
		}
		col, _, ok := c.s.Lookup(n.Name)
		if !ok || col < 0 {
			return constBool(false, n.Col), nil
		}
		return cval{kind: vBool, col: -1, pos: n.Col, cond: func(v []float64) bool {
			x := v[col]
			return x == x
		}}, nil
	case *Unary:
		if n != nil {
			return c.unary(n)
		}
	case *Binary:
		if n != nil {
			return c.binary(n)
		}
	}
	return cval{}, errorf(0, "invalid expression node %T", e)
}

func (c *compiler) unary(n *Unary) (cval, *Error) {
	x, err := c.expr(n.X)
	if err != nil {
		return cval{}, err
	}
	switch n.Op {
	case OpNot:
		f, err := c.asCond(x)
		if err != nil {
			return cval{}, err
		}
		if x.konst {
			return constBool(!f(nil), x.pos), nil
		}
		if x.kind == vNum && x.col >= 0 {
			col := x.col
			return cval{kind: vBool, col: -1, pos: x.pos, cond: func(v []float64) bool {
				y := v[col]
				return !(y < 0 || y > 0)
			}}, nil
		}
		return cval{kind: vBool, col: -1, pos: x.pos, cond: func(v []float64) bool { return !f(v) }}, nil
	case OpNeg:
		f, err := c.asNum(x, "arithmetic on %s")
		if err != nil {
			return cval{}, err
		}
		if x.konst {
			return constNum(-f(nil), x.pos), nil
		}
		return cval{kind: vNum, col: -1, pos: x.pos, num: func(v []float64) float64 { return -f(v) }}, nil
	}
	return cval{}, errorf(x.pos, "invalid unary operator %d", n.Op)
}

func (c *compiler) binary(n *Binary) (cval, *Error) {
	switch n.Op {
	case OpAnd, OpOr:
		return c.logic(n)
	case OpEq, OpNe:
		return c.equality(n)
	case OpLt, OpLe, OpGt, OpGe:
		x, y, err := c.pair(n.X, n.Y)
		if err != nil {
			return cval{}, err
		}
		return c.compare(n.Op, x, y, "operator \""+n.Op.String()+"\" not defined on %s")
	case OpAdd, OpSub, OpMul, OpDiv:
		x, y, err := c.pair(n.X, n.Y)
		if err != nil {
			return cval{}, err
		}
		return c.arith(n.Op, x, y)
	}
	return cval{}, errorf(0, "invalid binary operator %d", n.Op)
}

func (c *compiler) pair(ex, ey Expr) (x, y cval, err *Error) {
	if x, err = c.expr(ex); err != nil {
		return
	}
	y, err = c.expr(ey)
	return
}

// logic compiles a chain of && (or of ||) into one loop over its operands.
func (c *compiler) logic(n *Binary) (cval, *Error) {
	var ops []Expr
	var flatten func(e Expr)
	flatten = func(e Expr) {
		if b, ok := e.(*Binary); ok && b != nil && b.Op == n.Op {
			flatten(b.X)
			flatten(b.Y)
			return
		}
		ops = append(ops, e)
	}
	flatten(n)
	isAnd := n.Op == OpAnd
	var fs []condFn
	pos := 0
	for _, e := range ops {
		v, err := c.expr(e)
		if err != nil {
			return cval{}, err
		}
		f, err := c.asCond(v)
		if err != nil {
			return cval{}, err
		}
		pos = firstPos(pos, v.pos)
		if v.konst {
			if f(nil) != isAnd { // false in an &&, true in an ||: decides alone
				// Keep compiling the rest to report its errors.
				fs = append(fs, nil)
			}
			continue
		}
		fs = append(fs, f)
	}
	for _, f := range fs {
		if f == nil {
			return constBool(!isAnd, pos), nil
		}
	}
	switch {
	case len(fs) == 0:
		return constBool(isAnd, pos), nil
	case len(fs) == 1:
		return cval{kind: vBool, col: -1, pos: pos, cond: fs[0]}, nil
	case len(fs) == 2 && isAnd:
		a, b := fs[0], fs[1]
		return cval{kind: vBool, col: -1, pos: pos, cond: func(v []float64) bool { return a(v) && b(v) }}, nil
	case len(fs) == 2:
		a, b := fs[0], fs[1]
		return cval{kind: vBool, col: -1, pos: pos, cond: func(v []float64) bool { return a(v) || b(v) }}, nil
	case isAnd:
		return cval{kind: vBool, col: -1, pos: pos, cond: func(v []float64) bool {
			for _, f := range fs {
				if !f(v) {
					return false
				}
			}
			return true
		}}, nil
	}
	return cval{kind: vBool, col: -1, pos: pos, cond: func(v []float64) bool {
		for _, f := range fs {
			if f(v) {
				return true
			}
		}
		return false
	}}, nil
}

// equality compiles == and !=, resolving an unknown Ident compared with a
// string attribute to a string constant.
func (c *compiler) equality(n *Binary) (cval, *Error) {
	x, err := c.operand(n.X)
	if err != nil {
		return cval{}, err
	}
	y, err := c.operand(n.Y)
	if err != nil {
		if x.kind == vUnknown {
			return cval{}, errorf(x.pos, "unknown resource %q", x.name)
		}
		return cval{}, err
	}
	isStrAttr := func(v cval) bool { return v.kind == vStr && v.col >= 0 }
	if x.kind == vUnknown && isStrAttr(y) {
		x = cval{kind: vStr, konst: true, k: c.s.StringValue(x.name), col: -1, name: x.name, pos: x.pos}
	}
	if y.kind == vUnknown && isStrAttr(x) {
		y = cval{kind: vStr, konst: true, k: c.s.StringValue(y.name), col: -1, name: y.name, pos: y.pos}
	}
	for _, v := range [2]cval{x, y} {
		if v.kind == vUnknown {
			return cval{}, errorf(v.pos, "unknown resource %q", v.name)
		}
	}
	if (x.kind == vStr) != (y.kind == vStr) {
		s, o := x, y
		if y.kind == vStr {
			s, o = y, x
		}
		return cval{}, errorf(firstPos(s.pos, o.pos), "cannot compare %s with a number", s.describe())
	}
	if x.kind == vStr { // both strings: compare their numbers
		x.kind, y.kind = vNum, vNum
	}
	return c.compare(n.Op, x, y, "")
}
