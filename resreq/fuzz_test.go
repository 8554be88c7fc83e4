package resreq

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

// FuzzParse: Parse never panics, fails only with an *Error whose Col lies
// within 1..len+1, and a successful parse prints a canonical form that
// parses again to the same canonical form. Compiling the select sections
// against the fake schema must not panic either.
func FuzzParse(f *testing.F) {
	for _, tc := range validCases() {
		f.Add(tc.in)
	}
	for _, s := range []string{
		"select[mem>1000 && type==X86_64] order[-slots] rusage[mem=2000:lic=1] span[ptile=2] same[model]",
		"{select[gpu]} || {2*{span[hosts=1]}+{rusage[mem=1]}}",
		"select[mem>1 x", "a<b<c", "2*{a} + {b} + 3*{c}", "{a} || b", `select["x]`,
		"select[a > 1e999]", "select[(((((a)))))]", "rusage[mem=1,lic=2]", "&", "|", "1e", ".5", "a.b.c",
	} {
		f.Add(s)
	}
	for _, s := range limitSeeds() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := Parse(s)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("Parse(%q): error %T is not *Error", s, err)
			}
			if e.Col < 1 || e.Col > len(s)+1 {
				t.Fatalf("Parse(%q): col %d out of range", s, e.Col)
			}
			return
		}
		c := r.String()
		r2, err := Parse(c)
		if err != nil {
			t.Fatalf("Parse(%q) ok, but its canonical form %q fails: %v", s, c, err)
		}
		if c2 := r2.String(); c2 != c {
			t.Fatalf("canonical form not stable: %q -> %q -> %q", s, c, c2)
		}
		r3, _ := Parse(s) // r itself is compiled below with its Cols
		clearCols(r2)
		clearCols(r3)
		if !reflect.DeepEqual(r2, r3) {
			t.Fatalf("canonical form %q of %q parses to a different tree:\n got  %s\n want %s", c, s, dump(r2), dump(r3))
		}
		if len(r.Alternatives) > MaxItems {
			t.Fatalf("Parse(%.60q...): %d alternatives", s, len(r.Alternatives))
		}
		for _, alt := range r.Alternatives {
			if len(alt.Terms) > MaxItems {
				t.Fatalf("Parse(%.60q...): %d compound terms", s, len(alt.Terms))
			}
			for _, term := range alt.Terms {
				if n := max(len(term.Order), len(term.Rusage), len(term.Same)); n > MaxItems {
					t.Fatalf("Parse(%.60q...): a list of %d items", s, n)
				}
				if n := countOperands(term.Select); n > MaxTerms {
					t.Fatalf("Parse(%.60q...): %d operands", s, n)
				}
				sel, err := CompileSelect(term.Select, testSchema())
				var e *Error
				switch {
				case err == nil:
					sel.Match(hostA())
				case errors.As(err, &e) && strings.HasPrefix(e.Msg, "select[]:"):
					t.Fatalf("Parse(%.60q...) accepted, CompileSelect refused: %v", s, err)
				}
				_, _, _ = CompileOrder(term.Order, testSchema())
			}
		}
	})
}

// countOperands counts the leaves of e, without recursion.
func countOperands(e Expr) int {
	n := 0
	for stack := []Expr{e}; len(stack) > 0; {
		x := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		switch x := x.(type) {
		case nil:
		case *Binary:
			stack = append(stack, x.X, x.Y)
		case *Unary:
			stack = append(stack, x.X)
		default:
			n++
		}
	}
	return n
}

// limitSeeds are inputs at and just past the limits, in the shapes of
// issue 29 (kept small enough for a fuzz corpus).
func limitSeeds() []string {
	sum := func(n int) string { return "select[" + strings.Repeat("mem+", n-2) + "mem > 1]" }
	list := func(prefix, sep, suffix string, n int, item func(int) string) string {
		s, _ := items(prefix, sep, suffix, n, -1, item)
		return s
	}
	return []string{
		sum(MaxTerms), sum(MaxTerms + 1),
		list("select[", " && ", "]", MaxTerms/2, named("mem>%d")),
		list("", "||", "", MaxTerms/2+1, named("mem==%d")),
		list("select[", " * ", "] rusage[mem=1]", MaxTerms+1, named("defined(x%d)")),
		strings.Repeat("(", MaxDepth) + "a" + strings.Repeat(")", MaxDepth),
		strings.Repeat("(", MaxDepth+1) + "a" + strings.Repeat(")", MaxDepth+1),
		"select[" + strings.Repeat("!", MaxDepth) + "gpu]", "select[" + strings.Repeat("- ", MaxDepth+1) + "mem > 1]",
		strings.Repeat("!(", MaxDepth/2) + "gpu" + strings.Repeat(")", MaxDepth/2),
		deepest(),
		list("rusage[", ":", "]", MaxItems, named("r%d=1")), list("rusage[", ",", "]", MaxItems+1, named("r%d=1")),
		list("rusage[", ":", "]", 12, lastIs(12, named("r%d=1"), "r3=1")),
		list("order[", ":", "]", MaxItems+1, named("-k%d")), list("same[", ":", "]", MaxItems, named("k%d")),
		list("same[", ":", "]", 20, lastIs(20, named("k%d"), "k0")),
		list("", " + ", "", MaxItems+1, lit("2*{span[hosts=1]}")),
		list("", " || ", "", MaxItems, named("{select[mem>%d]}")),
		list("", " || ", "", MaxItems+1, lit("{a}")),
	}
}
