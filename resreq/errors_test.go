package resreq

import (
	"errors"
	"strings"
	"testing"
)

func TestParseErrors(t *testing.T) {
	deep := strings.Repeat("(", 300) + "a" + strings.Repeat(")", 300)
	cases := []struct {
		in  string
		col int
		msg string
	}{
		// select
		{"select[mem>1000", 16, "expected ']' after select expression"},
		{"select[mem>1 x", 14, "expected ']' after select expression"},
		{"select[]", 8, "expected expression, found ']'"},
		{"select[(a > 1]", 14, "expected ')'"},
		{"select[a > ]", 12, "expected expression, found ']'"},
		{"a<b<c", 4, "comparisons cannot be chained; use parentheses"},
		{"a == b != c", 8, "comparisons cannot be chained; use parentheses"},
		{"select[defined(3)]", 16, "expected attribute name after 'defined('"},
		{"select[defined(x]", 17, "expected ')' after defined(x"},
		{"mem > 3 )", 9, "expected operator or section after select expression, found ')'"},
		{deep, 201, "select[]: nesting deeper than 200"},
		// lexical
		{"select[a &b]", 10, "expected '&&'"},
		{"select[a |b]", 10, "expected '||'"},
		{`select[type == "X86_64]`, 16, "unterminated string"},
		{"select[a > 12abc]", 12, "malformed number"},
		{"select[a > 1e]", 12, "malformed number"},
		{"select[a > 1e999]", 12, "number out of range"},
		{"rusage[mem=1;lic=2]", 13, `unexpected character ";"`},
		{"select[a é]", 10, `unexpected character "é"`},
		// sections
		{"foo[x]", 1, `unknown section "foo"`},
		{"select[a] mem>1", 11, `unknown section "mem"`},
		{"cu[type:cu1]", 1, `unsupported section "cu"`},
		{"select[a] select[b]", 11, `duplicate section "select"`},
		{"a span[hosts=1] span[ptile=2]", 17, `duplicate section "span"`},
		{"mem>1 select[b]", 7, `duplicate section "select"`},
		{"select[a] span", 15, `expected '[' after "span"`},
		{"select[a] || select[b]", 11, "expected section, found '||'"},
		// order, same
		{"order[]", 7, "expected attribute name in order section"},
		{"order[a b]", 9, "expected ':' or ']' in order section"},
		{"select[a] order[b", 18, "expected ':' or ']' in order section"},
		{"order[a:-a]", 10, `duplicate order key "a"`},
		{"order[a,b]", 8, "expected ':' or ']' in order section"},
		{"same[type:type]", 11, `duplicate attribute "type" in same section`},
		{"same[1]", 6, "expected attribute name in same section"},
		// rusage
		{"rusage[mem=]", 12, "expected number after '='"},
		{"rusage[mem=abc]", 12, "expected number after '='"},
		{"rusage[mem=1:mem=2]", 14, `duplicate rusage resource "mem"`},
		{"rusage[mem=-5]", 12, "rusage value must be >= 0"},
		{"rusage[mem 5]", 12, "expected '=' after rusage name"},
		{"rusage[duration=10]", 8, `unsupported rusage keyword "duration"`},
		{"rusage[]", 8, "expected resource name in rusage section"},
		// span
		{"span[ptile=0]", 12, "ptile must be >= 1"},
		{"span[ptile=-2]", 12, "ptile must be >= 1"},
		{"span[ptile=1.5]", 12, "ptile must be an integer"},
		{"span[ptile=3000000000]", 12, "ptile too large"},
		{"span[hosts=2]", 12, "hosts must be 1 or -1"},
		{"span[hosts=-1.0e0 ]", 0, ""}, // valid: -1
		{"span[block=2]", 6, `expected "hosts" or "ptile" in span section`},
		{"span[ptile 2]", 12, `expected '=' after "ptile"`},
		{"span[ptile=x]", 12, "expected number after '='"},
		{"span[ptile=2:hosts=1]", 13, "expected ']' after span value"},
		// compound and alternatives
		{"0*{select[a]}", 1, "count must be >= 1"},
		{"2.5*{a}", 1, "count must be an integer"},
		{"2*{a} + {b} + 3*{c}", 9, "only the last compound term may omit its count"},
		{"2*{a} + 3", 10, "expected '*' after term count"},
		{"2*{a} + 3*b", 11, "expected '{' after '*'"},
		{"2*{a} + x", 9, "expected term count or '{' after '+'"},
		{"2*{a} 3*{b}", 7, "expected '+' or end of input"},
		{"2*{a", 5, "expected '}' after compound term"},
		{"2*{a} || {b}", 7, "expected '+' or end of input"},
		{"{a} || b", 8, "expected '{' after '||'"},
		{"{a} {b}", 5, "expected '||' or end of input"},
		{"{a", 3, "expected '}' after alternative"},
		{"{2*{a} x}", 8, "expected '}' after alternative"},
		{"{{a}}", 2, "expected section, found '{'"},
		{"a}", 2, "unexpected '}'"},
	}
	for _, tc := range cases {
		r, err := Parse(tc.in)
		if tc.msg == "" {
			if err != nil {
				t.Errorf("Parse(%q): unexpected error %v", tc.in, err)
			}
			continue
		}
		if err == nil {
			t.Errorf("Parse(%q) = %q, want error %q", tc.in, r, tc.msg)
			continue
		}
		if r != nil {
			t.Errorf("Parse(%q) returned a Requirement with an error", tc.in)
		}
		var e *Error
		if !errors.As(err, &e) {
			t.Errorf("Parse(%q) error %T is not *Error", tc.in, err)
			continue
		}
		if e.Col != tc.col || e.Msg != tc.msg {
			t.Errorf("Parse(%q) = col %d %q, want col %d %q", tc.in, e.Col, e.Msg, tc.col, tc.msg)
		}
	}
}

func TestErrorString(t *testing.T) {
	_, err := Parse("select[mem>1 x")
	want := "resreq: col 14: expected ']' after select expression"
	if err == nil || err.Error() != want {
		t.Fatalf("err = %v, want %q", err, want)
	}
}
