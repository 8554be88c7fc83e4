package resreq

import (
	"errors"
	"fmt"
	"math"
	"runtime/debug"
	"strings"
	"testing"
)

// Tests of MaxDepth, MaxTerms and MaxItems (limits.go): the attack shapes of
// issue 29 are refused with the limit's error, inputs at the limits are
// accepted, and no walk recurses as deep as the input is long.

// testStack caps the goroutine stack while a limit test runs, so that a
// recursion as deep as the input kills the test binary ("fatal error:
// stack overflow") instead of passing slowly. At the limits, parsed inputs
// need about 1 MB (deepest(), measured), hand-built trees under 2 MB.
const testStack = 4 << 20

func capStack(t *testing.T) {
	old := debug.SetMaxStack(testStack)
	t.Cleanup(func() { debug.SetMaxStack(old) })
}

// items returns prefix, item(0), sep, item(1), ..., item(n-1), suffix, and
// the 1-based column where item(k) starts (0 if k is not in 0..n-1).
func items(prefix, sep, suffix string, n, k int, item func(int) string) (string, int) {
	var b strings.Builder
	b.WriteString(prefix)
	col := 0
	for i := range n {
		if i > 0 {
			b.WriteString(sep)
		}
		if i == k {
			col = b.Len() + 1
		}
		b.WriteString(item(i))
	}
	b.WriteString(suffix)
	return b.String(), col
}

func lit(s string) func(int) string { return func(int) string { return s } }

func named(format string) func(int) string {
	return func(i int) string { return fmt.Sprintf(format, i) }
}

// lastIs is item, except that item n-1 is last.
func lastIs(n int, item func(int) string, last string) func(int) string {
	return func(i int) string {
		if i == n-1 {
			return last
		}
		return item(i)
	}
}

func TestLimitsRefuse(t *testing.T) {
	capStack(t)
	type tc struct {
		name string
		in   string
		col  int
		msg  string
	}
	var cases []tc
	add := func(name, msg string, in string, col int) {
		cases = append(cases, tc{name, in, col, msg})
	}
	terms := fmt.Sprintf("select[]: more than %d terms", MaxTerms)
	nesting := fmt.Sprintf("select[]: nesting deeper than %d", MaxDepth)

	// Operand 1025 of a sum is its 1025th mem.
	in, col := items("select[", "+", " > 1]", 450000, MaxTerms, lit("mem"))
	add("sum of 450000 terms", terms, in, col)
	// Operand 1025 of a chain of comparisons is the left one of the 513th.
	in, col = items("select[", " && ", "]", 225000, MaxTerms/2, lit("mem>1"))
	add("&& chain of 450000 terms", terms, in, col)
	in, col = items("select[", " || ", "]", 225000, MaxTerms/2, lit("mem>1"))
	add("|| chain of 450000 terms", terms, in, col)
	in, col = items("", "&&", " order[mem]", 225000, MaxTerms/2, lit("a>1"))
	add("bare && chain", terms, in, col)
	in, col = items("select[", " * ", "]", 200000, MaxTerms, named("defined(x%d)"))
	add("defined() operands", terms, in, col)
	in, col = items("select[", " == ", "]", 2, 1, lit("(a"+strings.Repeat(" + 'x'", MaxTerms-1)+")"))
	add("limit per expression, not per parenthesis", terms, in, col+1)

	// The 201st '(' or unary operator.
	add("100000-deep parentheses", nesting,
		"select["+strings.Repeat("(", 100000)+"a"+strings.Repeat(")", 100000)+"]", len("select[")+MaxDepth+1)
	add("100000-deep bare parentheses", nesting,
		strings.Repeat("(", 100000)+"a"+strings.Repeat(")", 100000), MaxDepth+1)
	add("100000 !", nesting, "select["+strings.Repeat("!", 100000)+"gpu]", len("select[")+MaxDepth+1)
	add("100000 unary -", nesting, "select["+strings.Repeat("- ", 100000)+"mem > 1]", len("select[")+2*MaxDepth+1)
	add("50000 !(", nesting,
		"select["+strings.Repeat("!(", 50000)+"gpu"+strings.Repeat(")", 50000)+"]", len("select[")+MaxDepth+1)

	// Item 1025 of each list.
	in, col = items("rusage[", ":", "]", 200000, MaxItems, named("r%d=1"))
	add("rusage of 200000 names", "rusage[]: more than 1024 entries", in, col)
	in, col = items("rusage[", ",", "]", 200000, MaxItems, named("r%d=1"))
	add("rusage with commas", "rusage[]: more than 1024 entries", in, col)
	in, col = items("order[", ":", "]", 200000, MaxItems, named("-k%d"))
	add("order of 200000 keys", "order[]: more than 1024 entries", in, col)
	in, col = items("same[", ":", "]", 200000, MaxItems, named("k%d"))
	add("same of 200000 names", "same[]: more than 1024 entries", in, col)
	in, col = items("", " + ", "", 200000, MaxItems, lit("2*{span[hosts=1]}"))
	add("200000 compound terms", "more than 1024 compound terms", in, col)
	in, col = items("{", "+", "} || {a}", 200000, MaxItems, lit("3*{a}"))
	add("compound terms of an alternative", "more than 1024 compound terms", in, col)
	in, col = items("", " || ", "", 200000, MaxItems, lit("{select[a]}"))
	add("200000 alternatives", "more than 1024 alternatives", in, col)

	// Duplicates are still found in long lists (past the short scan).
	in, col = items("rusage[", ":", "]", MaxItems, MaxItems-1, lastIs(MaxItems, named("r%d=1"), "r5=2"))
	add("rusage duplicate at 1024", `duplicate rusage resource "r5"`, in, col)
	in, col = items("order[", ":", "]", MaxItems, MaxItems-1, lastIs(MaxItems, named("k%d"), "-k700"))
	add("order duplicate at 1024", `duplicate order key "k700"`, in, col+1)
	in, col = items("same[", ":", "]", MaxItems, MaxItems-1, lastIs(MaxItems, named("k%d"), "k9"))
	add("same duplicate at 1024", `duplicate attribute "k9" in same section`, in, col)
	in, col = items("rusage[", ":", "]", 10, 9, lastIs(10, named("r%d=1"), "r8=1"))
	add("rusage duplicate, short list", `duplicate rusage resource "r8"`, in, col)

	for _, c := range cases {
		r, err := Parse(c.in)
		var e *Error
		switch {
		case err == nil:
			t.Errorf("%s: Parse ok, want col %d %q", c.name, c.col, c.msg)
		case r != nil:
			t.Errorf("%s: Parse returned a Requirement with an error", c.name)
		case !errors.As(err, &e):
			t.Errorf("%s: error %T is not *Error", c.name, err)
		case e.Col != c.col || e.Msg != c.msg:
			t.Errorf("%s: col %d %q, want col %d %q", c.name, e.Col, e.Msg, c.col, c.msg)
		}
	}
}

// deepest is the select expression whose parse tree makes CompileSelect
// recurse deepest within the limits: 100 levels of `-(...) * mem + mem ==
// mem && mem || ssd` (2 levels of nesting and 5 operands each) around a sum
// of the remaining 524 operands. With mem = 1, level k is 1 iff level k-1
// is 0, and the sum is 524, so level 100 is 1; with mem = 0 every level is
// 0 (`&& mem` fails).
func deepest() string {
	s := strings.Repeat("mem + ", MaxTerms-5*MaxDepth/2-1) + "mem"
	for range MaxDepth / 2 {
		s = "-(" + s + ") * mem + mem == mem && mem || ssd"
	}
	return s
}

func TestLimitsAccept(t *testing.T) {
	capStack(t)
	cases := []struct {
		name  string
		in    string
		canon string // want String()
		host  map[string]float64
		match bool
	}{
		{"sum of 1024 terms", "select[" + strings.Repeat("mem+", MaxTerms-2) + "mem > 1022]",
			"select[" + strings.Repeat("mem + ", MaxTerms-2) + "mem > 1022]", map[string]float64{"mem": 1}, true},
		{"sum of 1024 terms, false", "select[" + strings.Repeat("mem+", MaxTerms-2) + "mem > 1023]",
			"select[" + strings.Repeat("mem + ", MaxTerms-2) + "mem > 1023]", map[string]float64{"mem": 1}, false},
		{"&& chain of 1024 terms", strings.Repeat("mem>1&&", MaxTerms/2-1) + "mem>1",
			"select[" + strings.Repeat("mem > 1 && ", MaxTerms/2-1) + "mem > 1]", map[string]float64{"mem": 2}, true},
		{"&& chain of 1024 terms, false", strings.Repeat("mem>1&&", MaxTerms/2-1) + "mem>1",
			"select[" + strings.Repeat("mem > 1 && ", MaxTerms/2-1) + "mem > 1]", map[string]float64{"mem": 1}, false},
		{"|| chain of 1024 terms", func() string { s, _ := items("select[", "||", "]", MaxTerms/2, -1, named("mem==%d")); return s }(),
			func() string { s, _ := items("select[", " || ", "]", MaxTerms/2, -1, named("mem == %d")); return s }(),
			map[string]float64{"mem": 511}, true},
		{"|| chain of 1024 terms, false", func() string { s, _ := items("select[", "||", "]", MaxTerms/2, -1, named("mem==%d")); return s }(),
			func() string { s, _ := items("select[", " || ", "]", MaxTerms/2, -1, named("mem == %d")); return s }(),
			map[string]float64{"mem": 512}, false},
		{"200-deep parentheses", "select[" + strings.Repeat("(", MaxDepth) + "gpu" + strings.Repeat(")", MaxDepth) + "]",
			"select[gpu]", map[string]float64{"gpu": 1}, true},
		{"200 !", "select[" + strings.Repeat("!", MaxDepth) + "gpu]",
			"select[" + strings.Repeat("!", MaxDepth) + "gpu]", map[string]float64{"gpu": 1}, true},
		{"199 !", "select[" + strings.Repeat("!", MaxDepth-1) + "gpu]",
			"select[" + strings.Repeat("!", MaxDepth-1) + "gpu]", map[string]float64{"gpu": 1}, false},
		{"200 unary -", "select[" + strings.Repeat("- ", MaxDepth) + "mem > 0]",
			"select[" + strings.Repeat("-", MaxDepth) + "mem > 0]", map[string]float64{"mem": 5}, true},
		{"deepest recursion", deepest(), "select[" + deepest() + "]", map[string]float64{"mem": 1}, true},
		{"deepest recursion, false", deepest(), "select[" + deepest() + "]", map[string]float64{"mem": 0}, false},
	}
	for _, c := range cases {
		r, err := Parse(c.in)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if got := r.String(); got != c.canon {
			t.Errorf("%s: String() = %.80q..., want %.80q...", c.name, got, c.canon)
		}
		sel, err := CompileSelect(r.Alternatives[0].Terms[0].Select, testSchema())
		if err != nil {
			t.Errorf("%s: CompileSelect: %v", c.name, err)
			continue
		}
		if got := sel.Match(testHost(c.host)); got != c.match {
			t.Errorf("%s: Match(%v) = %v, want %v", c.name, c.host, got, c.match)
		}
	}
}

// TestLimitsAcceptLists: lists of exactly MaxItems items parse, in order.
func TestLimitsAcceptLists(t *testing.T) {
	capStack(t)
	rusage, _ := items("rusage[", ":", "]", MaxItems, -1, named("r%d=1"))
	order, _ := items("order[", ":", "]", MaxItems, -1, named("-k%d"))
	same, _ := items("same[", ":", "]", MaxItems, -1, named("k%d"))
	compound, _ := items("", " + ", "", MaxItems, -1, func(i int) string { return fmt.Sprintf("%d*{span[hosts=1]}", i+1) })
	alts, _ := items("", " || ", "", MaxItems, -1, named("{select[mem > %d]}"))
	full := "{select[" + strings.Repeat("mem + ", MaxTerms-2) + "mem > 1]}" // each has its own budget
	for _, in := range []string{rusage, order, same, compound, alts, full + " || " + full,
		"select[" + strings.Repeat("mem + ", MaxTerms-2) + "mem > 1] " + order + " " + rusage + " " + same} {
		r, err := Parse(in)
		if err != nil {
			t.Errorf("Parse(%.60q...): %v", in, err)
			continue
		}
		if got := r.String(); got != in {
			t.Errorf("String() = %.60q..., want %.60q...", got, in)
		}
	}
	r, err := Parse(rusage + order + same)
	if err != nil {
		t.Fatal(err)
	}
	term := r.Alternatives[0].Terms[0]
	if len(term.Rusage) != MaxItems || len(term.Order) != MaxItems || len(term.Same) != MaxItems {
		t.Fatalf("lengths %d %d %d, want %d", len(term.Rusage), len(term.Order), len(term.Same), MaxItems)
	}
	for i := range MaxItems {
		name := fmt.Sprintf("k%d", i)
		if term.Rusage[i] != (Rusage{Name: fmt.Sprintf("r%d", i), Value: 1}) ||
			term.Order[i] != (OrderKey{Name: name, Desc: true}) || term.Same[i] != name {
			t.Fatalf("item %d: %v %v %q", i, term.Rusage[i], term.Order[i], term.Same[i])
		}
	}
	r, err = Parse(compound)
	if err != nil {
		t.Fatal(err)
	}
	for i, term := range r.Alternatives[0].Terms {
		if term.Count != i+1 {
			t.Fatalf("compound term %d has count %d", i, term.Count)
		}
	}
}

// leftChain is X op X op ... (n operands), built without recursion.
func leftChain(op Op, n int, x func(int) Expr) Expr {
	e := x(0)
	for i := 1; i < n; i++ {
		e = &Binary{Op: op, X: e, Y: x(i)}
	}
	return e
}

// rightChain is X op (X op (... X)) (n operands).
func rightChain(op Op, n int, x func(int) Expr) Expr {
	e := x(n - 1)
	for i := n - 2; i >= 0; i-- {
		e = &Binary{Op: op, X: x(i), Y: e}
	}
	return e
}

// doubled is a tree of k levels whose nodes are op(child, child) with the
// one child shared: 2^k uses of leaf, in k+1 nodes.
func doubled(op Op, k int, leaf Expr) Expr {
	e := leaf
	for range k {
		e = &Binary{Op: op, X: e, Y: e}
	}
	return e
}

// balanced is a balanced tree of op over leaves x(lo) .. x(hi-1).
func balanced(op Op, lo, hi int, x func(int) Expr) Expr {
	if hi-lo == 1 {
		return x(lo)
	}
	mid := (lo + hi) / 2
	return &Binary{Op: op, X: balanced(op, lo, mid, x), Y: balanced(op, mid, hi, x)}
}

func unaryChain(op Op, n int, x Expr) Expr {
	for range n {
		x = &Unary{Op: op, X: x}
	}
	return x
}

// TestLimitsCompile: CompileSelect refuses hand-built trees past the
// limits, without recursing along them, and accepts them at the limits.
func TestLimitsCompile(t *testing.T) {
	capStack(t)
	mem := func(int) Expr { return &Ident{Name: "mem", Col: 3} }
	memAt := func(i int) Expr { return &Ident{Name: "mem", Col: i + 1} }
	gt1 := func(int) Expr { return bin(gt, id("mem"), num(1)) }
	terms := fmt.Sprintf("select[]: more than %d terms", MaxTerms)
	nesting := fmt.Sprintf("select[]: nesting deeper than %d", MaxDepth)
	cases := []struct {
		name  string
		e     Expr
		col   int
		msg   string // "" for no error
		match bool   // on mem = 1, gpu = 1
	}{
		{"left sum of 450000", bin(gt, leftChain(add, 450000, mem), num(1)), 0, terms, false},
		{"right sum of 450000", rightChain(add, 450000, mem), 0, terms, false},
		{"balanced sum of 2048", doubled(add, 11, &Ident{Name: "mem", Col: 7}), 7, terms, false},
		{"2^64 shared +", doubled(add, 64, &Ident{Name: "mem", Col: 7}), 7, terms, false},
		{"left && of 450000", leftChain(and, 450000, gt1), 0, terms, false},
		{"right || of 450000", rightChain(or, 450000, gt1), 0, terms, false},
		{"2^64 shared &&", doubled(and, 64, bin(gt, id("mem"), num(0))), 0, terms, false},
		{"balanced product of 2048", balanced(mul, 0, 2*MaxTerms, memAt), MaxTerms + 1, terms, false},
		{"1000000 !", unaryChain(OpNot, 1000000, id("gpu")), 0, nesting, false},
		{"1000000 -", bin(gt, unaryChain(OpNeg, 1000000, id("mem")), num(0)), 0, nesting, false},
		// At the limits.
		{"left sum of 1024", bin(gt, leftChain(add, MaxTerms-1, mem), num(1022)), 0, "", true},
		{"right sum of 1024", bin(lt, num(1022), rightChain(add, MaxTerms-1, mem)), 0, "", true},
		{"right - of 1024", bin(eq, rightChain(sub, MaxTerms-1, mem), num(1)), 0, "", true}, // 1-(1-(...1)) with 1023 ones
		{"2^9 shared + twice", bin(eq, doubled(add, 9, id("mem")), doubled(add, 9, id("mem"))), 0, "", true},
		{"balanced product of 1024", balanced(mul, 0, MaxTerms, memAt), 0, "", true},
		{"left && of 1024", leftChain(and, MaxTerms/2, gt1), 0, "", false},
		{"2^10 shared ||", doubled(or, 10, id("gpu")), 0, "", true},
		{"200 !", unaryChain(OpNot, MaxDepth, id("gpu")), 0, "", true},
		{"200 -", bin(lt, unaryChain(OpNeg, MaxDepth-1, id("mem")), num(0)), 0, "", true},
	}
	host := testHost(map[string]float64{"mem": 1, "gpu": 1})
	for _, c := range cases {
		sel, err := CompileSelect(c.e, testSchema())
		if c.msg == "" {
			if err != nil {
				t.Errorf("%s: %v", c.name, err)
			} else if got := sel.Match(host); got != c.match {
				t.Errorf("%s: Match = %v, want %v", c.name, got, c.match)
			}
			continue
		}
		var e *Error
		switch {
		case err == nil:
			t.Errorf("%s: compiled, want col %d %q", c.name, c.col, c.msg)
		case !errors.As(err, &e):
			t.Errorf("%s: error %T is not *Error", c.name, err)
		case e.Col != c.col || e.Msg != c.msg:
			t.Errorf("%s: col %d %q, want col %d %q", c.name, e.Col, e.Msg, c.col, c.msg)
		}
	}
}

// TestStringDeep: String renders hand-built trees of any depth without
// recursing along them, and nil nodes as "()".
func TestStringDeep(t *testing.T) {
	capStack(t)
	const n = 200000
	a := func(int) Expr { return id("a") }
	cases := []struct {
		name string
		e    Expr
		want string
	}{
		{"left sum", leftChain(add, n, a), "a" + strings.Repeat(" + a", n-1)},
		{"right difference", rightChain(sub, n, a), strings.Repeat("a - (", n-2) + "a - a" + strings.Repeat(")", n-2)},
		{"right &&", rightChain(and, n, a), strings.Repeat("a && (", n-2) + "a && a" + strings.Repeat(")", n-2)},
		{"! chain", unaryChain(OpNot, n, id("a")), strings.Repeat("!", n) + "a"},
		{"-(a+b) chain", unaryChain(OpNeg, 3, bin(add, id("a"), num(math.Inf(1)))), "---(a + +Inf)"},
		{"nil nodes", bin(add, (*Ident)(nil), &Unary{Op: OpNot, X: (*Binary)(nil)}), "() + !()"},
		{"nil leaves", bin(eq, (*Number)(nil), bin(or, (*StringLit)(nil), (*Defined)(nil))), "() == (() || ())"},
		{"nil operand", bin(mul, nil, id("b")), "() * b"},
	}
	for _, c := range cases {
		if got := c.e.String(); got != c.want {
			t.Errorf("%s: String() = %.60q..., want %.60q...", c.name, got, c.want)
		}
	}
	for _, e := range []Expr{(*Binary)(nil), (*Unary)(nil)} {
		if got := e.String(); got != "()" {
			t.Errorf("%T(nil).String() = %q, want \"()\"", e, got)
		}
	}
}
