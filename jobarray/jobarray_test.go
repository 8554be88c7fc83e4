package jobarray

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// TestParse: the index lists of LSF's manual and their elements, worked
// out by hand.
func TestParse(t *testing.T) {
	for _, tc := range []struct {
		in    string
		want  []int64
		limit int
	}{
		{"1", []int64{1}, 0},
		{"1-5", []int64{1, 2, 3, 4, 5}, 0},
		{"1-10:3", []int64{1, 4, 7, 10}, 0},
		{"1-9:3", []int64{1, 4, 7}, 0},
		{"5,1-3", []int64{1, 2, 3, 5}, 0},
		{"1-100%5", nil, 5}, // 100 elements, checked below
		{"7,2,9%1", []int64{2, 7, 9}, 1},
		{"2147483646", []int64{MaxIndex}, 0},
	} {
		got, err := Parse(tc.in, 1000)
		if err != nil {
			t.Errorf("Parse(%q): %v", tc.in, err)
			continue
		}
		if tc.want == nil {
			if len(got.Indices) != 100 || got.Indices[0] != 1 || got.Indices[99] != 100 {
				t.Errorf("Parse(%q): %d indices %v...", tc.in, len(got.Indices), got.Indices[:3])
			}
		} else if !slices.Equal(got.Indices, tc.want) {
			t.Errorf("Parse(%q) = %v, want %v", tc.in, got.Indices, tc.want)
		}
		if got.Limit != tc.limit {
			t.Errorf("Parse(%q): limit %d, want %d", tc.in, got.Limit, tc.limit)
		}
	}
}

// TestParseErrors: each error names the column of the character at fault.
func TestParseErrors(t *testing.T) {
	for _, tc := range []struct {
		in  string
		max int
		col int
		msg string
	}{
		{"", 10, 1, "empty index (expected n, n-m or n-m:step)"},
		{"0", 10, 1, "0 is out of range 1 to 2147483646"},
		{"1-", 10, 3, "expected a whole number"},
		{"5-3", 10, 3, "range 5-3 ends before it starts"},
		{"1-9:0", 10, 5, "0 is out of range 1 to 2147483646"},
		{"3:2", 10, 2, "a step needs a range (n-m:step)"},
		{"1,,2", 10, 3, "empty index (expected n, n-m or n-m:step)"},
		{"1-5,x", 10, 5, "expected a digit, got 'x'"},
		{"1-11", 10, 1, "more than 10 elements (the most an array may have)"},
		{"1-5,6-20", 10, 5, "more than 10 elements (the most an array may have)"},
		{"1-2147483646", 1000, 1, "more than 1000 elements (the most an array may have)"},
		{"1-3,2", 10, 5, "index 2 is listed twice"},
		{"1,1", 10, 3, "index 1 is listed twice"},
		{"5,1-9:2", 10, 3, "index 5 is listed twice"},
		{"1-3%", 10, 5, "expected a whole number"},
		{"1-3%0", 10, 5, "0 is out of range 1 to 2147483646"},
		{"1-3%2%2", 10, 6, "expected a digit, got '%'"},
		{"2147483647", 10, 1, "2147483647 is out of range 1 to 2147483646"},
		{"99999999999999999999", 10, 1, "99999999999999999999 is out of range 1 to 2147483646"},
	} {
		_, err := Parse(tc.in, tc.max)
		var e *Error
		if !errors.As(err, &e) || e.Col != tc.col || e.Msg != tc.msg {
			t.Errorf("Parse(%q) = %v, want col %d: %s", tc.in, err, tc.col, tc.msg)
		}
	}
}

// TestParseName: bsub -J's form, with columns in the whole name.
func TestParseName(t *testing.T) {
	s, isArray, err := ParseName("sweep[1-4:2]%1", 10)
	if err != nil || !isArray || s.Name != "sweep" || !slices.Equal(s.Indices, []int64{1, 3}) || s.Limit != 1 {
		t.Errorf("sweep[1-4:2]%%1: %+v %v %v", s, isArray, err)
	}
	s, isArray, err = ParseName("plain", 10)
	if err != nil || isArray || s.Name != "plain" {
		t.Errorf("plain: %+v %v %v", s, isArray, err)
	}
	s, isArray, err = ParseName("[2]", 10)
	if err != nil || !isArray || s.Name != "" || !slices.Equal(s.Indices, []int64{2}) {
		t.Errorf("[2]: %+v %v %v", s, isArray, err)
	}
	for _, tc := range []struct {
		in  string
		col int
		msg string
	}{
		{"a[1-3", 6, "missing ']' after the index list"},
		{"a]1[", 2, "']' before '['"},
		{"a]1", 2, "']' outside an index list [...]"},
		{"a%2", 2, "'%' outside an index list [...]"},
		{"a[1-3]x", 7, "expected %limit or the end after ']', got 'x'"},
		{"a[1-3]%x", 8, "expected a digit, got 'x'"},
		{"a[3-2]", 5, "range 3-2 ends before it starts"},
		{"a[1,[2]", 5, "unexpected '[' in the index list"},
		{"a[1%2]", 4, "unexpected '%' in the index list"},
		{"job[1-3,x]", 9, "expected a digit, got 'x'"},
	} {
		_, _, err := ParseName(tc.in, 10)
		var e *Error
		if !errors.As(err, &e) || e.Col != tc.col || e.Msg != tc.msg {
			t.Errorf("ParseName(%q) = %v, want col %d: %s", tc.in, err, tc.col, tc.msg)
		}
	}
}

// TestFormat: ranges of consecutive indices are written n-m.
func TestFormat(t *testing.T) {
	if got, want := Format(Spec{Indices: []int64{1, 2, 3, 5, 7, 8}, Limit: 2}), "1-3,5,7-8%2"; got != want {
		t.Errorf("Format = %q, want %q", got, want)
	}
}

// FuzzParse: any input gives an error or an array within bounds, with
// ascending distinct indices in range, that Format writes back to the same
// array, and whose size Count gives; nothing panics.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"1", "1-5", "1-10:3,20%4", "a[1-3]%2", "3:2", "1-3,2", "%", "[", "1-2147483646"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		spec, err := Parse(s, 100)
		if err == nil {
			if len(spec.Indices) == 0 || len(spec.Indices) > 100 {
				t.Fatalf("%q: %d elements", s, len(spec.Indices))
			}
			for i, k := range spec.Indices {
				if k < 1 || k > MaxIndex || i > 0 && k <= spec.Indices[i-1] {
					t.Fatalf("%q: indices %v", s, spec.Indices)
				}
			}
			back, err := Parse(Format(spec), 100)
			if err != nil || !slices.Equal(back.Indices, spec.Indices) || back.Limit != spec.Limit {
				t.Fatalf("%q: Format %q gives %+v, %v", s, Format(spec), back, err)
			}
		} else if e := (*Error)(nil); !errors.As(err, &e) || e.Col < 1 || e.Col > len(s)+2 {
			t.Fatalf("%q: error %v", s, err)
		}
		// Count agrees: the element count, or Parse's error but for an
		// index listed twice (which Count cannot see).
		if n, cerr := Count(s, 100); err == nil && (cerr != nil || n != len(spec.Indices)) ||
			err != nil && !strings.Contains(err.Error(), "listed twice") && fmt.Sprint(cerr) != err.Error() {
			t.Fatalf("%q: Count = %d, %v; Parse: %d, %v", s, n, cerr, len(spec.Indices), err)
		}
		if _, _, err := ParseName(s, 100); err != nil {
			if e := (*Error)(nil); !errors.As(err, &e) || e.Col < 1 || e.Col > len(s)+2 {
				t.Fatalf("ParseName %q: error %v", s, err)
			}
		}
	})
}

// TestParseRef: job names as bjobs and bkill take them.
func TestParseRef(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Ref
		ok   bool
	}{
		{"12", Ref{12, 0}, true}, {"12[3]", Ref{12, 3}, true}, {"1[1]", Ref{1, 1}, true},
		{"0", Ref{}, false}, {"-1", Ref{}, false}, {"+1", Ref{}, false}, {"12[", Ref{}, false}, {"12[]", Ref{}, false},
		{"12[0]", Ref{}, false}, {"12[3", Ref{}, false}, {"12[3]x", Ref{}, false}, {"[3]", Ref{}, false},
		{"12[+3]", Ref{}, false}, {"99999999999999999999", Ref{}, false}, {"", Ref{}, false},
	} {
		got, err := ParseRef(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("ParseRef(%q) = %v, %v; want %v ok %v", tc.in, got, err, tc.want, tc.ok)
		}
		if tc.ok && got.String() != tc.in {
			t.Errorf("%v.String() = %q, want %q", got, got.String(), tc.in)
		}
	}
}
