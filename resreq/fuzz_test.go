package resreq

import (
	"errors"
	"reflect"
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
		for _, alt := range r.Alternatives {
			for _, term := range alt.Terms {
				if sel, err := CompileSelect(term.Select, testSchema()); err == nil {
					sel.Match(hostA())
				}
				_, _, _ = CompileOrder(term.Order, testSchema())
			}
		}
	})
}
