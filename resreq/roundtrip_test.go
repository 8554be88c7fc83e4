package resreq

import (
	"reflect"
	"testing"

	"pgregory.net/rapid"
)

// TestRoundTripValid: every valid table input's canonical form parses to
// the same tree and prints the same string.
func TestRoundTripValid(t *testing.T) {
	for _, tc := range validCases() {
		checkRoundTrip(t, tc.want)
	}
}

// TestRoundTripProperty: random ASTs of the shape Parse produces print to a
// canonical string that parses back to an equal AST with the same string.
func TestRoundTripProperty(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		checkRoundTrip(rt, genRequirement(rt))
	})
}

type failer interface {
	Fatalf(format string, args ...any)
	Helper()
}

func checkRoundTrip(t failer, r *Requirement) {
	t.Helper()
	s := r.String()
	r2, err := Parse(s)
	if err != nil {
		t.Fatalf("Parse(%q) of canonical form of %s: %v", s, dump(r), err)
	}
	if s2 := r2.String(); s2 != s {
		t.Fatalf("String not stable: %q -> %q", s, s2)
	}
	clearCols(r2)
	if !reflect.DeepEqual(r, r2) {
		t.Fatalf("round trip of %q:\n got  %s\n want %s", s, dump(r2), dump(r))
	}
}

var (
	genNames = []string{"mem", "slots", "type", "gpu", "defined", "a.b", "_x1", "order", "select", "span", "hname"}
	genOps   = []Op{OpOr, OpAnd, OpEq, OpNe, OpLt, OpLe, OpGt, OpGe, OpAdd, OpSub, OpMul, OpDiv}
)

func genNumber(t *rapid.T) float64 {
	switch rapid.IntRange(0, 3).Draw(t, "numkind") {
	case 0:
		return float64(rapid.IntRange(0, 1<<20).Draw(t, "int"))
	case 1:
		return rapid.SampledFrom([]float64{0, 0.5, 1e15, 1e-7, 999999999999999, 123456789012345678, 1.7976931348623157e308}).Draw(t, "special")
	case 2:
		return rapid.Float64Range(0, 1).Draw(t, "frac")
	}
	return rapid.Float64Range(0, 1e300).Draw(t, "big")
}

func genExpr(t *rapid.T, depth int) Expr {
	kind := rapid.IntRange(0, 5).Draw(t, "exprkind")
	if depth <= 0 {
		kind %= 4
	}
	switch kind {
	case 0:
		return id(rapid.SampledFrom(genNames).Draw(t, "ident"))
	case 1:
		return num(genNumber(t))
	case 2:
		pattern := `[a-z0-9 _"-]{0,6}`
		if rapid.Bool().Draw(t, "squote") {
			pattern = `[a-z'.]{0,6}`
		}
		return str(rapid.StringMatching(pattern).Draw(t, "string"))
	case 3:
		return def(rapid.SampledFrom(genNames).Draw(t, "defname"))
	case 4:
		op := rapid.SampledFrom([]Op{OpNot, OpNeg}).Draw(t, "unop")
		return &Unary{Op: op, X: genExpr(t, depth-1)}
	}
	op := rapid.SampledFrom(genOps).Draw(t, "binop")
	return bin(op, genExpr(t, depth-1), genExpr(t, depth-1))
}

// genDistinct draws up to max distinct names from genNames (nil for none).
func genDistinct(t *rapid.T, label string, max int) []string {
	n := rapid.IntRange(0, max).Draw(t, label+"n")
	return append([]string(nil), rapid.Permutation(genNames).Draw(t, label)[:n]...)
}

func genTerm(t *rapid.T, count int) *Term {
	term := &Term{Count: count}
	if rapid.Bool().Draw(t, "hasSelect") {
		term.Select = genExpr(t, 4)
	}
	for _, name := range genDistinct(t, "order", 3) {
		term.Order = append(term.Order, OrderKey{Name: name, Desc: rapid.Bool().Draw(t, "desc")})
	}
	for _, name := range genDistinct(t, "rusage", 3) {
		term.Rusage = append(term.Rusage, Rusage{Name: name, Value: genNumber(t)})
	}
	switch rapid.IntRange(0, 3).Draw(t, "span") {
	case 1:
		term.Span = Span{Kind: SpanHostsOne}
	case 2:
		term.Span = Span{Kind: SpanHostsAny}
	case 3:
		term.Span = Span{Kind: SpanPtile, Ptile: rapid.IntRange(1, maxInt).Draw(t, "ptile")}
	}
	term.Same = genDistinct(t, "same", 2)
	return term
}

func genRequirement(t *rapid.T) *Requirement {
	r := &Requirement{}
	nalts := rapid.IntRange(1, 3).Draw(t, "nalts")
	for range nalts {
		c := &Compound{}
		nterms := rapid.IntRange(1, 3).Draw(t, "nterms")
		for i := range nterms {
			count := rapid.IntRange(1, 64).Draw(t, "count")
			if i == nterms-1 && rapid.Bool().Draw(t, "omitCount") {
				count = 0
			}
			c.Terms = append(c.Terms, genTerm(t, count))
		}
		r.Alternatives = append(r.Alternatives, c)
	}
	return r
}
