package resreq

import (
	"reflect"
	"testing"
)

// Operator shorthands for the tables.
const (
	or, and                = OpOr, OpAnd
	eq, ne, lt, le, gt, ge = OpEq, OpNe, OpLt, OpLe, OpGt, OpGe
	add, sub, mul, div     = OpAdd, OpSub, OpMul, OpDiv
)

type validCase struct {
	in   string
	want *Requirement
	str  string // canonical form
}

func validCases() []validCase {
	a, b, c, d := id("a"), id("b"), id("c"), id("d")
	return []validCase{
		// empty
		{"", one(Term{}), ""},
		{" \t\n\r ", one(Term{}), ""},

		// select, with and without the keyword; every operator
		{"select[mem>1000]", sel(bin(gt, id("mem"), num(1000))), "select[mem > 1000]"},
		{"mem>1000", sel(bin(gt, id("mem"), num(1000))), "select[mem > 1000]"},
		{"select [ mem >= 1000 ]", sel(bin(ge, id("mem"), num(1000))), "select[mem >= 1000]"},
		{"select[a<b]", sel(bin(lt, a, b)), "select[a < b]"},
		{"select[a<=b]", sel(bin(le, a, b)), "select[a <= b]"},
		{"select[a==b]", sel(bin(eq, a, b)), "select[a == b]"},
		{"select[a!=b]", sel(bin(ne, a, b)), "select[a != b]"},
		{"type=X86_64", sel(bin(eq, id("type"), id("X86_64"))), "select[type == X86_64]"},

		// precedence and associativity
		{"a || b && c", sel(bin(or, a, bin(and, b, c))), "select[a || b && c]"},
		{"(a || b) && c", sel(bin(and, bin(or, a, b), c)), "select[(a || b) && c]"},
		{"a&&b||c&&d", sel(bin(or, bin(and, a, b), bin(and, c, d))), "select[a && b || c && d]"},
		{"a && (b && c)", sel(bin(and, a, bin(and, b, c))), "select[a && (b && c)]"},
		{"a || (b || c)", sel(bin(or, a, bin(or, b, c))), "select[a || (b || c)]"},
		{"a + b * c > d - e / f",
			sel(bin(gt, bin(add, a, bin(mul, b, c)), bin(sub, d, bin(div, id("e"), id("f"))))),
			"select[a + b * c > d - e / f]"},
		{"(a + b) * c", sel(bin(mul, bin(add, a, b), c)), "select[(a + b) * c]"},
		{"a - b - c", sel(bin(sub, bin(sub, a, b), c)), "select[a - b - c]"},
		{"a - (b - c)", sel(bin(sub, a, bin(sub, b, c))), "select[a - (b - c)]"},
		{"a * (b * c)", sel(bin(mul, a, bin(mul, b, c))), "select[a * (b * c)]"},
		{"((a))", sel(a), "select[a]"},
		{"(a < b) == (c < d)", sel(bin(eq, bin(lt, a, b), bin(lt, c, d))), "select[(a < b) == (c < d)]"},
		{"a == (b == c)", sel(bin(eq, a, bin(eq, b, c))), "select[a == (b == c)]"},
		{"(a > b) + 1 > 0", sel(bin(gt, bin(add, bin(gt, a, b), num(1)), num(0))), "select[(a > b) + 1 > 0]"},

		// unary
		{"!a && -b < 3", sel(bin(and, not(a), bin(lt, neg(b), num(3)))), "select[!a && -b < 3]"},
		{"!(a == b)", sel(not(bin(eq, a, b))), "select[!(a == b)]"},
		{"!a == b", sel(bin(eq, not(a), b)), "select[!a == b]"},
		{"- - a", sel(neg(neg(a))), "select[--a]"},
		{"-(a+b)", sel(neg(bin(add, a, b))), "select[-(a + b)]"},
		{"a / -b", sel(bin(div, a, neg(b))), "select[a / -b]"},

		// defined(), strings, numbers, identifiers
		{"defined(scratch) && scratch > 100",
			sel(bin(and, def("scratch"), bin(gt, id("scratch"), num(100)))),
			"select[defined(scratch) && scratch > 100]"},
		{"select[defined ( x )]", sel(def("x")), "select[defined(x)]"},
		{"defined > 0", sel(bin(gt, id("defined"), num(0))), "select[defined > 0]"},
		{`select[hname == "host-01"]`, sel(bin(eq, id("hname"), str("host-01"))), `select[hname == "host-01"]`},
		{`select[model=='EPYC']`, sel(bin(eq, id("model"), str("EPYC"))), `select[model == "EPYC"]`},
		{`select['say "hi"' == x]`, sel(bin(eq, str(`say "hi"`), id("x"))), `select['say "hi"' == x]`},
		{"a > 1.5e3 && b < .25 && c == 007 && d > 2.50",
			sel(bin(and, bin(and, bin(and, bin(gt, a, num(1500)), bin(lt, b, num(0.25))),
				bin(eq, c, num(7))), bin(gt, d, num(2.5)))),
			"select[a > 1500 && b < 0.25 && c == 7 && d > 2.5]"},
		{"a > 1E+20 && b > 1e-7 && c > 1e15", sel(bin(and, bin(and, bin(gt, a, num(1e20)), bin(gt, b, num(1e-7))), bin(gt, c, num(1e15)))),
			"select[a > 1e+20 && b > 1e-07 && c > 1e+15]"},
		{"ncpus*2/4 > 8", sel(bin(gt, bin(div, bin(mul, id("ncpus"), num(2)), num(4)), num(8))), "select[ncpus * 2 / 4 > 8]"},
		{"2*ncpus > 8", sel(bin(gt, bin(mul, num(2), id("ncpus")), num(8))), "select[2 * ncpus > 8]"},
		{"select[_x.y2 > 0]", sel(bin(gt, id("_x.y2"), num(0))), "select[_x.y2 > 0]"},
		{"select[span > 1] span[hosts=1]", one(Term{Select: bin(gt, id("span"), num(1)), Span: Span{Kind: SpanHostsOne}}),
			"select[span > 1] span[hosts=1]"},
		{"order > 1 order[order]", one(Term{Select: bin(gt, id("order"), num(1)), Order: []OrderKey{{Name: "order"}}}),
			"select[order > 1] order[order]"},

		// order
		{"order[mem]", one(Term{Order: []OrderKey{{Name: "mem"}}}), "order[mem]"},
		{"order[-slots:mem:-maxmem]", one(Term{Order: []OrderKey{{"slots", true}, {"mem", false}, {"maxmem", true}}}),
			"order[-slots:mem:-maxmem]"},
		{"order[ - slots : mem ]", one(Term{Order: []OrderKey{{"slots", true}, {"mem", false}}}), "order[-slots:mem]"},

		// rusage
		{"rusage[mem=2000]", one(Term{Rusage: []Rusage{{"mem", 2000}}}), "rusage[mem=2000]"},
		{"rusage[mem=2000:lic_matlab=1]", one(Term{Rusage: []Rusage{{"mem", 2000}, {"lic_matlab", 1}}}),
			"rusage[mem=2000:lic_matlab=1]"},
		{"rusage[mem=2000, lic=0.5]", one(Term{Rusage: []Rusage{{"mem", 2000}, {"lic", 0.5}}}), "rusage[mem=2000:lic=0.5]"},
		{"rusage[ mem = 1000000 ]", one(Term{Rusage: []Rusage{{"mem", 1e6}}}), "rusage[mem=1000000]"},
		{"rusage[scratch=0]", one(Term{Rusage: []Rusage{{"scratch", 0}}}), "rusage[scratch=0]"},

		// span
		{"span[hosts=1]", one(Term{Span: Span{Kind: SpanHostsOne}}), "span[hosts=1]"},
		{"span[hosts=-1]", one(Term{Span: Span{Kind: SpanHostsAny}}), "span[hosts=-1]"},
		{"span[hosts = - 1]", one(Term{Span: Span{Kind: SpanHostsAny}}), "span[hosts=-1]"},
		{"span[ptile=4]", one(Term{Span: Span{Kind: SpanPtile, Ptile: 4}}), "span[ptile=4]"},
		{"span[ ptile = 16 ]", one(Term{Span: Span{Kind: SpanPtile, Ptile: 16}}), "span[ptile=16]"},

		// same
		{"same[type]", one(Term{Same: []string{"type"}}), "same[type]"},
		{"same[type:model]", one(Term{Same: []string{"type", "model"}}), "same[type:model]"},

		// all sections, any order, any whitespace
		{"same[model] span[ptile=2] rusage[mem=10] order[-mem] select[gpu]",
			one(Term{Select: id("gpu"), Order: []OrderKey{{"mem", true}}, Rusage: []Rusage{{"mem", 10}},
				Span: Span{Kind: SpanPtile, Ptile: 2}, Same: []string{"model"}}),
			"select[gpu] order[-mem] rusage[mem=10] span[ptile=2] same[model]"},
		{"select[gpu]order[-mem]rusage[mem=10]span[ptile=2]same[model]",
			one(Term{Select: id("gpu"), Order: []OrderKey{{"mem", true}}, Rusage: []Rusage{{"mem", 10}},
				Span: Span{Kind: SpanPtile, Ptile: 2}, Same: []string{"model"}}),
			"select[gpu] order[-mem] rusage[mem=10] span[ptile=2] same[model]"},
		{"swp > 15 && hpux order[ut]",
			one(Term{Select: bin(and, bin(gt, id("swp"), num(15)), id("hpux")), Order: []OrderKey{{Name: "ut"}}}),
			"select[swp > 15 && hpux] order[ut]"},
		{"\n select[mem>1]\n\trusage[mem=1]\n", one(Term{Select: bin(gt, id("mem"), num(1)), Rusage: []Rusage{{"mem", 1}}}),
			"select[mem > 1] rusage[mem=1]"},

		// compound
		{"2*{select[gpu] rusage[mem=16000]} + 6*{rusage[mem=1000]}",
			alts(comp(Term{Count: 2, Select: id("gpu"), Rusage: []Rusage{{"mem", 16000}}},
				Term{Count: 6, Rusage: []Rusage{{"mem", 1000}}})),
			"2*{select[gpu] rusage[mem=16000]} + 6*{rusage[mem=1000]}"},
		{"1*{select[gpu]}+2*{span[ptile=2]}+ 4 * { same[type] }",
			alts(comp(Term{Count: 1, Select: id("gpu")}, Term{Count: 2, Span: Span{Kind: SpanPtile, Ptile: 2}},
				Term{Count: 4, Same: []string{"type"}})),
			"1*{select[gpu]} + 2*{span[ptile=2]} + 4*{same[type]}"},
		{"2*{select[gpu]} + {select[!gpu]}",
			alts(comp(Term{Count: 2, Select: id("gpu")}, Term{Select: not(id("gpu"))})),
			"2*{select[gpu]} + {select[!gpu]}"},
		{"4*{span[hosts=1]}", alts(comp(Term{Count: 4, Span: Span{Kind: SpanHostsOne}})), "4*{span[hosts=1]}"},
		{"2*{} + {}", alts(comp(Term{Count: 2}, Term{})), "2*{} + {}"},
		{"3*{mem>1 rusage[mem=1]}", alts(comp(Term{Count: 3, Select: bin(gt, id("mem"), num(1)), Rusage: []Rusage{{"mem", 1}}})),
			"3*{select[mem > 1] rusage[mem=1]}"},

		// alternatives
		{"{select[type==X86_64]} || {select[type==ARM64]}",
			alts(comp(Term{Select: bin(eq, id("type"), id("X86_64"))}), comp(Term{Select: bin(eq, id("type"), id("ARM64"))})),
			"{select[type == X86_64]} || {select[type == ARM64]}"},
		{"{ type==X86_64 }||{ mem > 1 span[hosts=1] }",
			alts(comp(Term{Select: bin(eq, id("type"), id("X86_64"))}),
				comp(Term{Select: bin(gt, id("mem"), num(1)), Span: Span{Kind: SpanHostsOne}})),
			"{select[type == X86_64]} || {select[mem > 1] span[hosts=1]}"},
		{"{2*{select[gpu]} + {rusage[mem=1]}} || {select[ssd]}",
			alts(comp(Term{Count: 2, Select: id("gpu")}, Term{Rusage: []Rusage{{"mem", 1}}}), comp(Term{Select: id("ssd")})),
			"{2*{select[gpu]} + {rusage[mem=1]}} || {select[ssd]}"},
		{"{a || b}", sel(bin(or, a, b)), "select[a || b]"},
		{"{select[gpu]}", sel(id("gpu")), "select[gpu]"},
		{"{3*{select[gpu]}}", alts(comp(Term{Count: 3, Select: id("gpu")})), "3*{select[gpu]}"},
		{"{a} || {} || {b}", alts(comp(Term{Select: a}), comp(Term{}), comp(Term{Select: b})),
			"{select[a]} || {} || {select[b]}"},
	}
}

func TestParseValid(t *testing.T) {
	cases := validCases()
	if len(cases) < 40 {
		t.Fatalf("only %d cases", len(cases))
	}
	for _, tc := range cases {
		r, err := Parse(tc.in)
		if err != nil {
			t.Errorf("Parse(%q): %v", tc.in, err)
			continue
		}
		if got := r.String(); got != tc.str {
			t.Errorf("Parse(%q).String() = %q, want %q", tc.in, got, tc.str)
		}
		clearCols(r)
		if !reflect.DeepEqual(r, tc.want) {
			t.Errorf("Parse(%q):\n got  %s\n want %s", tc.in, dump(r), dump(tc.want))
		}
	}
}

// TestParseCols pins the Col of Ident and Defined nodes.
func TestParseCols(t *testing.T) {
	r, err := Parse("select[ mem>1 && defined(x)] || zz")
	if err == nil {
		t.Fatalf("expected error, got %s", r)
	}
	r, err = Parse("{x} || {select[ mem>1 && defined(x)]}")
	if err != nil {
		t.Fatal(err)
	}
	b := r.Alternatives[1].Terms[0].Select.(*Binary)
	if got := b.X.(*Binary).X.(*Ident).Col; got != 17 {
		t.Errorf("mem col = %d, want 17", got)
	}
	if got := b.Y.(*Defined).Col; got != 26 {
		t.Errorf("defined col = %d, want 26", got)
	}
	if got := r.Alternatives[0].Terms[0].Select.(*Ident).Col; got != 2 {
		t.Errorf("x col = %d, want 2", got)
	}
}

// TestCanonicalEquivalence: inputs that differ only in whitespace, section
// order, separators, redundant parentheses or the select keyword share one
// canonical form.
func TestCanonicalEquivalence(t *testing.T) {
	groups := [][]string{
		{
			"select[mem>1000 && type==X86_64] order[-slots] rusage[mem=2000:lic=1] span[ptile=2] same[model]",
			"same[model] span[ptile=2] rusage[mem=2000,lic=1] order[-slots] select[(mem>1000)&&(type=X86_64)]",
			"mem > 1000 && type == X86_64 order[ - slots ]rusage[ mem=2000 , lic=1 ]span[ptile=2]same[model]",
			"{select[((mem > 1000)) && type == X86_64] order[-slots] rusage[mem=2e3:lic=1.0] span[ptile=2] same[model]}",
		},
		{
			"{select[gpu]} || {2*{span[hosts=1]}+{rusage[mem=1]}}",
			"{ gpu }||{ 2 * { span[ hosts = 1 ] } + { rusage[mem=1] } }",
		},
	}
	for _, g := range groups {
		var first string
		for i, s := range g {
			r, err := Parse(s)
			if err != nil {
				t.Errorf("Parse(%q): %v", s, err)
				continue
			}
			if i == 0 {
				first = r.String()
			} else if got := r.String(); got != first {
				t.Errorf("Parse(%q).String() = %q, want %q (from %q)", s, got, first, g[0])
			}
		}
	}
}

// TestDocExamples pins the examples of docs/resreq.md §3 and §4.
func TestDocExamples(t *testing.T) {
	const in = "mem>1000&&(type=X86_64) same[model] span[ptile=2] rusage[mem=2e3,lic=1.0] order[ - slots]"
	const want = "select[mem > 1000 && type == X86_64] order[-slots] rusage[mem=2000:lic=1] span[ptile=2] same[model]"
	if r, err := Parse(in); err != nil || r.String() != want {
		t.Errorf("Parse(%q) = %v, %v; want %q", in, r, err, want)
	}
	bad := "same[model] span[ptile=2] rusage[mem=2e3,lic=1.0] order[ - slots] mem>1000&&(type=X86_64)"
	if _, err := Parse(bad); err == nil || err.Error() != `resreq: col 67: unknown section "mem"` {
		t.Errorf("Parse(%q) error = %v", bad, err)
	}
	for in, want := range map[string]string{
		"select[a] span[hosts=1] span[ptile=2]": `resreq: col 25: duplicate section "span"`,
		"span[ptile=0]":                         "resreq: col 12: ptile must be >= 1",
		"foo[x]":                                `resreq: col 1: unknown section "foo"`,
		"rusage[mem=]":                          "resreq: col 12: expected number after '='",
	} {
		if _, err := Parse(in); err == nil || err.Error() != want {
			t.Errorf("Parse(%q) error = %v, want %q", in, err, want)
		}
	}
}
