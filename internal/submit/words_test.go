package submit

import (
	"errors"
	"slices"
	"testing"

	"pgregory.net/rapid"
)

// TestSplit: the quoting rules, one case each, expected words by hand.
func TestSplit(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     []string
	}{
		{"empty", "", nil},
		{"blanks only", " \t ", nil},
		{"two words", "a b", []string{"a", "b"}},
		{"spaces and tabs", "  a\t\tb  ", []string{"a", "b"}},
		{"single quotes", "'a b'", []string{"a b"}},
		{"single quotes keep backslash", `'a\b'`, []string{`a\b`}},
		{"double quotes", `"a b"`, []string{"a b"}},
		{"adjacent parts", `a'b'"c"d`, []string{"abcd"}},
		{"quote in single quotes", `'it'\''s'`, []string{"it's"}},
		{"escaped double quote", `"a\"b"`, []string{`a"b`}},
		{"escaped backslash", `"a\\b"`, []string{`a\b`}},
		{"escaped dollar", `"\$HOME"`, []string{"$HOME"}},
		{"escaped backquote", "\"\\`x\\`\"", []string{"`x`"}},
		{"other backslash in double quotes", `"\x\n"`, []string{`\x\n`}},
		{"backslash-newline in double quotes", "\"a\\\nb\"", []string{"ab"}},
		{"no expansion in double quotes", `"$HOME $(id)"`, []string{"$HOME $(id)"}},
		{"no expansion", "$HOME *.c ~ `id` $(id)", []string{"$HOME", "*.c", "~", "`id`", "$(id)"}},
		{"operators are ordinary", "a;b|c>d&e<f(g)", []string{"a;b|c>d&e<f(g)"}},
		{"escaped blank", `a\ b`, []string{"a b"}},
		{"escaped quote", `\'`, []string{"'"}},
		{"backslash-newline", "a\\\nb", []string{"ab"}},
		{"empty word", "''", []string{""}},
		{"empty words between", `a '' "" b`, []string{"a", "", "", "b"}},
		{"comment", "a # c 'd", []string{"a"}},
		{"comment only", "# only", nil},
		{"hash inside a word", "a#b", []string{"a#b"}},
		{"quoted hash", `'#x' "#y" \#z`, []string{"#x", "#y", "#z"}},
		{"carriage return is a word byte", "a\rb \r", []string{"a\rb", "\r"}},
		{"newline is a word byte", "a\nb", []string{"a\nb"}},
		{"non-ASCII", "é 'ü x'", []string{"é", "ü x"}},
		{"escaped multibyte", `\é`, []string{"é"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Split(tc.in)
			if err != nil {
				t.Fatalf("Split(%q): %v", tc.in, err)
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("Split(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

// TestSplitErrors: every splitting error, with its column.
func TestSplitErrors(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
	}{
		{"unterminated single quote", "'abc", "col 1: unterminated single quote"},
		{"unterminated single quote later", `a 'b' 'c`, "col 7: unterminated single quote"},
		{"unterminated double quote", `ab "cd`, "col 4: unterminated double quote"},
		{"escaped closing double quote", `"a\"`, "col 1: unterminated double quote"},
		{"backslash at end", `abc\`, "col 4: backslash at end of line"},
		{"backslash at end in a later word", `a b\`, "col 4: backslash at end of line"},
		{"single quote in double quotes does not close", `"a'`, "col 1: unterminated double quote"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Split(tc.in)
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("Split(%q) = %q, %v; want an *Error", tc.in, got, err)
			}
			if err.Error() != tc.want {
				t.Fatalf("Split(%q): error %q, want %q", tc.in, err, tc.want)
			}
		})
	}
}

// TestQuote: Quote's output, by hand.
func TestQuote(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", "''"},
		{"abc", "abc"},
		{"-n", "-n"},
		{"/a/b.c,d:e=f+g@h%i_j", "/a/b.c,d:e=f+g@h%i_j"},
		{"a b", "'a b'"},
		{"it's", `'it'\''s'`},
		{"'", `''\'''`},
		{"#x", "'#x'"},
		{"$HOME", "'$HOME'"},
		{`a\b`, `'a\b'`},
		{"a\nb", "'a\nb'"},
		{"é", "'é'"},
	} {
		if got := Quote(tc.in); got != tc.want {
			t.Errorf("Quote(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	if got := Join([]string{"sleep", "10", "a b", ""}); got != "sleep 10 'a b' ''" {
		t.Errorf("Join = %q", got)
	}
}

// genWord draws a word biased towards the bytes the quoting rules treat
// specially, or any string.
func genWord(t *rapid.T, label string) string {
	if rapid.Bool().Draw(t, label+"any") {
		return rapid.String().Draw(t, label)
	}
	b := rapid.SliceOfN(rapid.SampledFrom([]byte(" \t'\"\\#$`\n\rab-é\x00")), 0, 12).Draw(t, label)
	return string(b)
}

// TestSplitJoinProperty: Split(Join(words)) == words, and Split(Quote(w))
// is the one word w, for any words.
func TestSplitJoinProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(0, 6).Draw(t, "n")
		words := make([]string, n)
		for i := range words {
			words[i] = genWord(t, "word")
		}
		line := Join(words)
		got, err := Split(line)
		if err != nil {
			t.Fatalf("Split(Join(%q)) = Split(%q): %v", words, line, err)
		}
		if !slices.Equal(got, words) {
			t.Fatalf("Split(Join(%q)) = Split(%q) = %q", words, line, got)
		}
	})
}

// TestWordColumn: the column of a value byte, through quotes and escapes.
func TestWordColumn(t *testing.T) {
	line := `x a'b c'\de"f\"g"`
	ws, err := split(line, 0, "f", 1)
	if err != nil || len(ws) != 2 {
		t.Fatalf("split: %v %v", ws, err)
	}
	w := ws[1] // value `ab cdef"g`, raw from column 3
	if w.val != `ab cdef"g` || w.col != 3 {
		t.Fatalf("word %q at col %d", w.val, w.col)
	}
	// value byte:  a  b  ' ' c  d   e   f   "   g   end
	want := []int{3, 5, 6, 7, 10, 11, 13, 15, 16, 18}
	for off, col := range want {
		if got := w.column(off); got != col {
			t.Errorf("column(%d) = %d, want %d", off, got, col)
		}
	}
	a := word{val: "abc", raw: "abc", arg: 2, col: 1}
	if got := a.column(2); got != 3 {
		t.Errorf("argument column(2) = %d, want 3", got)
	}
}
