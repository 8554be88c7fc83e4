package resreq

import (
	"errors"
	"math"
	"reflect"
	"testing"
)

// hostA: 16 CPUs, 64000 MB, an X86_64 EPYC with a GPU, no ssd tag, and no
// scratch resource (NaN).
func hostA() []float64 {
	return testHost(map[string]float64{
		"slots": 8, "maxslots": 8, "mem": 64000, "maxmem": 64000, "ncpus": 16,
		"type": strX86, "model": strEPYC, "hname": strHostA, "gpu": 1,
	})
}

func compileString(t *testing.T, s string) (*Select, error) {
	t.Helper()
	r, err := Parse(s)
	if err != nil {
		t.Fatalf("Parse(%q): %v", s, err)
	}
	return CompileSelect(r.Alternatives[0].Terms[0].Select, testSchema())
}

func TestSelectMatch(t *testing.T) {
	cases := []struct {
		expr string
		want bool
	}{
		// numeric comparisons, both operand orders
		{"mem > 1000", true},
		{"mem > 64000", false},
		{"mem >= 64000", true},
		{"mem < 1000", false},
		{"mem <= 64000", true},
		{"mem == 64000", true},
		{"mem = 64000", true},
		{"mem != 64000", false},
		{"mem != 1", true},
		{"1000 < mem", true},
		{"64000 <= mem", true},
		{"64001 <= mem", false},
		{"mem > maxmem", false},
		{"mem == maxmem", true},
		// strings
		{"type == X86_64", true},
		{"type != X86_64", false},
		{"type == ARM64", false},
		{`type == "X86_64"`, true},
		{"X86_64 == type", true},
		{"ARM64 != type", true},
		{"type == model", false},
		{"type == nosuch", false},
		{"type != nosuch", true},
		{"hname == hostA", true},
		{"model == 'EPYC' && hname != hostB", true},
		{`"a" == "a"`, true},
		{`"a" != "a"`, false},
		// booleans
		{"gpu", true},
		{"ssd", false},
		{"!ssd", true},
		{"!gpu", false},
		{"gpu && !ssd", true},
		{"ssd || gpu", true},
		{"ssd || !gpu", false},
		{"gpu == 1", true},
		{"!!gpu", true},
		// undefined (NaN) values
		{"scratch > 0", false},
		{"scratch <= 0", false},
		{"scratch == scratch", false},
		{"scratch != 0", false},
		{"0 != scratch", false},
		{"ssd != 1", false},
		{"!(scratch > 0)", true},
		{"scratch", false},
		{"!scratch", true},
		{"scratch + 1 > 0", false},
		{"scratch * 0 == 0", false},
		{"-scratch < 0", false},
		{"defined(scratch)", false},
		{"defined(mem)", true},
		{"defined(ssd)", false},
		{"defined(gpu)", true},
		{"defined(nosuch)", false},
		{"!defined(nosuch)", true},
		{"defined(scratch) && scratch > 1 || mem > 1", true},
		// arithmetic
		{"ncpus*2 > 8", true},
		{"ncpus * 2 > 32", false},
		{"ncpus / 4 == 4", true},
		{"ncpus - 16 == 0", true},
		{"ncpus + 1 == 17", true},
		{"2 * ncpus == 32", true},
		{"16 / ncpus == 1", true},
		{"slots + maxslots == 16", true},
		{"mem / 0 > 1e308", true},
		{"-mem / 0 < -1e308", true},
		{"(mem - mem) / 0 == 0", false},
		{"(mem - mem) / 0 != 0", false},
		{"-mem < 0", true},
		{"2 * 3 == 6", true},
		{"1 / 0 > 0", true},
		{"0 / 0", false},
		{"ncpus", true},
		{"ncpus - 16", false},
		// booleans as numbers, numbers as booleans
		{"(mem > 1) + (slots > 1) == 2", true},
		{"(mem > 1) * 5 == 5", true},
		{"(ssd > 0) == 0", true},
		{"-(mem > 1) == -1", true},
		{"!mem", false},
		{"mem && 0", false},
		{"0 || ncpus", true},
		{"!0", true},
		{"1 && gpu", true},
		{"0 && gpu", false},
		{"1 || ssd", true},
		{"0 || ssd", false},
		{"gpu && gpu && gpu && !ssd", true},
		{"ssd || ssd || scratch || gpu", true},
		{"ssd || ssd || scratch", false},
		// the benchmark expression
		{benchExpr, true},
		{"mem > 1000 && slots >= 2 && type == X86_64 && !gpu && ncpus*2 > 8", false},
	}
	for _, tc := range cases {
		sel, err := compileString(t, tc.expr)
		if err != nil {
			t.Errorf("CompileSelect(%q): %v", tc.expr, err)
			continue
		}
		if got := sel.Match(hostA()); got != tc.want {
			t.Errorf("%q on hostA = %v, want %v", tc.expr, got, tc.want)
		}
	}
}

func TestSelectMatchAll(t *testing.T) {
	sel, err := CompileSelect(nil, testSchema())
	if err != nil {
		t.Fatal(err)
	}
	var nilSel *Select
	for _, s := range []*Select{sel, nilSel, {}} {
		if !s.Match(hostA()) || !s.Match(nil) {
			t.Errorf("%#v does not match every host", s)
		}
	}
	// An expression with no column access never touches vals.
	if sel, err := compileString(t, "1 < 2 && !defined(nosuch)"); err != nil || !sel.Match(nil) {
		t.Errorf("constant expression: %v %v", sel, err)
	}
}

func TestSelectMatchAllocs(t *testing.T) {
	sel, err := compileString(t, benchExpr+" || mem / (ncpus - 1) != -scratch")
	if err != nil {
		t.Fatal(err)
	}
	h := hostA()
	if n := testing.AllocsPerRun(100, func() { sel.Match(h) }); n != 0 {
		t.Errorf("Match allocates %v times", n)
	}
}

func TestCompileSelectErrors(t *testing.T) {
	cases := []struct {
		expr string
		col  int
		msg  string
	}{
		{"nosuch > 1", 1, `unknown resource "nosuch"`},
		{"mem > 1 && foo", 12, `unknown resource "foo"`},
		{"X86_64 == ARM64", 1, `unknown resource "X86_64"`},
		{"mem == X86_64", 8, `unknown resource "X86_64"`},
		{`"a" == X86_64`, 8, `unknown resource "X86_64"`},
		{"foo == mem + bar", 1, `unknown resource "foo"`},
		{"type < ARM64", 8, `unknown resource "ARM64"`},
		{"defined(nosuch) && nosuch > 1", 20, `unknown resource "nosuch"`},
		{`type < "X86_64"`, 1, `operator "<" not defined on string attribute "type"`},
		{`type >= model`, 1, `operator ">=" not defined on string attribute "type"`},
		{`mem > "abc"`, 0, `operator ">" not defined on string "abc"`},
		{"type + 1 > 0", 1, `arithmetic on string attribute "type"`},
		{"1 - hname", 5, `arithmetic on string attribute "hname"`},
		{"-hname == 1", 2, `arithmetic on string attribute "hname"`},
		{"type", 1, `string attribute "type" used as a condition`},
		{"!type", 2, `string attribute "type" used as a condition`},
		{"gpu && model", 8, `string attribute "model" used as a condition`},
		{`"x"`, 0, `string "x" used as a condition`},
		{"type == mem", 1, `cannot compare string attribute "type" with a number`},
		{"mem == type", 8, `cannot compare string attribute "type" with a number`},
		{"type != 3", 1, `cannot compare string attribute "type" with a number`},
		{`(mem > 1) == "a"`, 2, `cannot compare string "a" with a number`},
	}
	for _, tc := range cases {
		sel, err := compileString(t, tc.expr)
		if err == nil {
			t.Errorf("CompileSelect(%q) = %v, want error %q", tc.expr, sel, tc.msg)
			continue
		}
		var e *Error
		if !errors.As(err, &e) {
			t.Errorf("CompileSelect(%q) error %T is not *Error", tc.expr, err)
			continue
		}
		if e.Col != tc.col || e.Msg != tc.msg {
			t.Errorf("CompileSelect(%q) = col %d %q, want col %d %q", tc.expr, e.Col, e.Msg, tc.col, tc.msg)
		}
	}
}

func TestCompileSelectInvalidAST(t *testing.T) {
	for _, e := range []Expr{(*Ident)(nil), &Unary{Op: OpAdd, X: num(1)}, &Binary{Op: OpNot, X: num(1), Y: num(2)},
		&Binary{Op: OpAnd, X: num(1), Y: nil}} {
		if _, err := CompileSelect(e, testSchema()); err == nil {
			t.Errorf("CompileSelect(%s) accepted an invalid tree", dumpExpr(e))
		}
	}
	if _, err := CompileSelect(id("mem"), nil); err == nil {
		t.Error("CompileSelect with a nil schema succeeded")
	}
}

func TestCompileOrder(t *testing.T) {
	cols, desc, err := CompileOrder([]OrderKey{{"mem", true}, {"slots", false}, {"scratch", true}}, testSchema())
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(cols, []int{2, 0, 10}) || !reflect.DeepEqual(desc, []bool{true, false, true}) {
		t.Errorf("CompileOrder = %v %v", cols, desc)
	}
	if cols, desc, err := CompileOrder(nil, testSchema()); cols != nil || desc != nil || err != nil {
		t.Errorf("CompileOrder(nil) = %v %v %v", cols, desc, err)
	}
	for _, tc := range []struct{ key, msg string }{
		{"nosuch", `unknown resource "nosuch" in order section`},
		{"type", `order key "type" is not a numeric attribute`},
		{"gpu", `order key "gpu" is not a numeric attribute`},
	} {
		_, _, err := CompileOrder([]OrderKey{{"mem", false}, {tc.key, false}}, testSchema())
		var e *Error
		if !errors.As(err, &e) || e.Col != 0 || e.Msg != tc.msg {
			t.Errorf("CompileOrder(%q) error = %v, want col 0 %q", tc.key, err, tc.msg)
		}
	}
}

// TestNaNVector: a host with every attribute undefined fails every
// comparison and passes every negation of one.
func TestNaNVector(t *testing.T) {
	h := testHost(nil)
	for _, s := range []string{"mem > 0", "mem <= 0", "mem == mem", "mem != 0", "type == X86_64", "type != X86_64", "gpu", "defined(mem)"} {
		sel, err := compileString(t, s)
		if err != nil {
			t.Fatal(err)
		}
		if sel.Match(h) {
			t.Errorf("%q matches an all-NaN host", s)
		}
		if sel, _ := compileString(t, "!("+s+")"); !sel.Match(h) {
			t.Errorf("!(%q) does not match an all-NaN host", s)
		}
	}
	if math.IsNaN(hostA()[2]) {
		t.Fatal("hostA mem undefined")
	}
}
