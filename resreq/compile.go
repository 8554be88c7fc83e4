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
// Limits: an expression with more than MaxTerms operands, or with unary
// operators nested more than MaxDepth deep, is refused with "select[]: more
// than 1024 terms" (at the Col of the operand past the limit, or 0 when the
// check fails before one, e.g. on a long chain of operators) or
// "select[]: nesting deeper than 200" (Col 0). Parse never builds such an
// expression; the checks, made before each descent, bound the work and the
// stack for trees built by hand (a node used twice counts twice). Within
// them the work is linear in the size of e, the compiler recurses only
// where e nests (not along chains like a + b + c or a && b && c), and
// Match recurses at most as deep as e.
//
// All errors are *Error values.
func CompileSelect(e Expr, s Schema) (*Select, error) {
	sel, _, err := compileSelect(e, s)
	if err != nil {
		return nil, err
	}
	return sel, nil
}

// compileSelect is CompileSelect that also returns the work done: the
// nodes visited, for the complexity tests.
func compileSelect(e Expr, s Schema) (*Select, int, *Error) {
	if e == nil {
		return &Select{}, 0, nil
	}
	if s == nil {
		return nil, 0, errorf(0, "nil schema")
	}
	c := &compiler{s: s}
	v, err := c.expr(e)
	if err != nil {
		return nil, c.work, err
	}
	cond, err := c.asCond(v)
	if err != nil {
		return nil, c.work, err
	}
	if v.kind == vBool && v.konst {
		k := v.kb
		return &Select{match: func([]float64) bool { return k }}, c.work, nil
	}
	return &Select{match: cond}, c.work, nil
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
	s      Schema
	terms  int // operands compiled (MaxTerms)
	binary int // binary operators being compiled, one per call level (< MaxTerms)
	unary  int // unary operators being compiled, one per call level (MaxDepth)
	work   int // nodes visited
}

// errTerms is the error for an operand past MaxTerms, at col.
func errTerms(col int) *Error { return errorf(col, "select[]: more than %d terms", MaxTerms) }

// operandAt counts one operand at col.
func (c *compiler) operandAt(col int) *Error {
	c.terms++
	if c.terms > MaxTerms {
		return errTerms(col)
	}
	return nil
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

// operand compiles e; an unknown Ident gives a vUnknown value. It checks
// the limits before it recurses.
func (c *compiler) operand(e Expr) (cval, *Error) {
	c.work++
	switch n := e.(type) {
	case *Ident:
		if n == nil {
			break
		}
		if err := c.operandAt(n.Col); err != nil {
			return cval{}, err
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
		if n == nil {
			break
		}
		if err := c.operandAt(0); err != nil {
			return cval{}, err
		}
		return constNum(n.Value, 0), nil
	case *StringLit:
		if n == nil {
			break
		}
		if err := c.operandAt(0); err != nil {
			return cval{}, err
		}
		return cval{kind: vStr, konst: true, k: c.s.StringValue(n.Value), col: -1, name: n.Value}, nil
	case *Defined:
		if n == nil {
			break
		}
		if err := c.operandAt(n.Col); err != nil {
			return cval{}, err
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
		if n == nil {
			break
		}
		if c.unary == MaxDepth {
			return cval{}, errorf(0, "select[]: nesting deeper than %d", MaxDepth)
		}
		c.unary++
		v, err := c.compileUnary(n)
		c.unary--
		return v, err
	case *Binary:
		if n == nil {
			break
		}
		// A tree of at most MaxTerms operands has fewer binary operators.
		if c.binary == MaxTerms-1 {
			return cval{}, errTerms(0)
		}
		c.binary++
		v, err := c.compileBinary(n)
		c.binary--
		return v, err
	}
	return cval{}, errorf(0, "invalid expression node %T", e)
}

func (c *compiler) compileUnary(n *Unary) (cval, *Error) {
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

func (c *compiler) compileBinary(n *Binary) (cval, *Error) {
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
		return c.arithChain(n)
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

func isArith(op Op) bool { return op == OpAdd || op == OpSub || op == OpMul || op == OpDiv }

// arithChain compiles n and the arithmetic operators down its left operands
// (`a + b * c - d` is ((a + (b * c)) - d)) in one loop rather than one call
// per operator: it compiles the bottom operand, then each right operand and
// its operator from the bottom up, which are the closures and the errors,
// in the same order, that compiling X, Y and then X op Y at every level
// gives. A chain of MaxTerms operators has too many operands.
func (c *compiler) arithChain(n *Binary) (cval, *Error) {
	spine := []*Binary{n}
	for {
		b, ok := spine[len(spine)-1].X.(*Binary)
		if !ok || b == nil || !isArith(b.Op) {
			break
		}
		if len(spine) == MaxTerms-1 {
			return cval{}, errTerms(0)
		}
		c.work++
		spine = append(spine, b)
	}
	x, err := c.expr(spine[len(spine)-1].X)
	if err != nil {
		return cval{}, err
	}
	for i := len(spine) - 1; i >= 0; i-- {
		y, err := c.expr(spine[i].Y)
		if err != nil {
			return cval{}, err
		}
		if x, err = c.arith(spine[i].Op, x, y); err != nil {
			return cval{}, err
		}
	}
	return x, nil
}

// logic compiles a chain of && (or of ||) into one loop over its operands.
func (c *compiler) logic(n *Binary) (cval, *Error) {
	ops, err := c.flatten(n)
	if err != nil {
		return cval{}, err
	}
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

// flatten lists the operands of the chain of n.Op (&& or ||) rooted at n,
// left to right, without recursion. Each operand and each pending subtree
// holds at least one operand of its own, so more than MaxTerms of them in
// all is an error (before the list grows further, even when nodes are
// shared).
func (c *compiler) flatten(n *Binary) ([]Expr, *Error) {
	var ops []Expr
	pending := []Expr{n}
	for len(pending) > 0 {
		c.work++
		e := pending[len(pending)-1]
		pending = pending[:len(pending)-1]
		if b, ok := e.(*Binary); ok && b != nil && b.Op == n.Op {
			pending = append(pending, b.Y, b.X)
		} else {
			ops = append(ops, e)
		}
		if len(ops)+len(pending) > MaxTerms {
			return nil, errTerms(0)
		}
	}
	return ops, nil
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
