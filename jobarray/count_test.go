package jobarray

import (
	"fmt"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// TestCount: element counts worked out by hand, an index listed twice
// counted twice (Parse refuses it), and Parse's errors for the rest.
func TestCount(t *testing.T) {
	for _, tc := range []struct {
		in   string
		max  int
		want int
		err  string
	}{
		{"1", 1000, 1, ""},
		{"1-10:3", 1000, 4, ""},  // 1, 4, 7, 10
		{"5,1-3%2", 1000, 4, ""}, // 1, 2, 3, 5
		{"1-5,3", 1000, 6, ""},   // 3 twice
		{"1-1000000", 1_000_000, 1_000_000, ""},
		{"1-1000001", 1_000_000, 0, "array: col 1: more than 1000000 elements (the most an array may have)"},
		{"1-600,1-600", 1000, 0, "array: col 7: more than 1000 elements (the most an array may have)"},
		{"1-x", 1000, 0, "array: col 3: expected a digit, got 'x'"},
		{"1-5%0", 1000, 0, "array: col 5: 0 is out of range 1 to 2147483646"},
		{"", 1000, 0, "array: col 1: empty index (expected n, n-m or n-m:step)"},
	} {
		n, err := Count(tc.in, tc.max)
		if got := fmt.Sprint(err); n != tc.want || (tc.err == "") != (err == nil) || err != nil && got != tc.err {
			t.Errorf("Count(%q, %d) = %d, %v; want %d, %q", tc.in, tc.max, n, err, tc.want, tc.err)
		}
	}
}

// TestCountParse: for index lists of random items, Count gives
// len(Parse(s).Indices) where Parse takes s, and Parse's error where
// Parse refuses s for anything but an index listed twice (then the list
// counts at least 2).
func TestCountParse(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		parts := rapid.SliceOfN(rapid.OneOf(
			rapid.Map(rapid.IntRange(0, 40), func(n int) string { return fmt.Sprint(n) }),
			rapid.Custom(func(t *rapid.T) string {
				lo := rapid.IntRange(0, 40).Draw(t, "lo")
				return fmt.Sprintf("%d-%d", lo, lo+rapid.IntRange(-2, 30).Draw(t, "len"))
			}),
			rapid.Map(rapid.IntRange(1, 40), func(n int) string { return fmt.Sprintf("1-%d:%d", 10*n, n%7) }),
			rapid.SampledFrom([]string{"", "x", "3-", ":2", "1:2", "9999999999"}),
		), 1, 5).Draw(t, "parts")
		s := strings.Join(parts, ",")
		if rapid.Bool().Draw(t, "capped") {
			s += "%" + rapid.SampledFrom([]string{"0", "3", "x", ""}).Draw(t, "cap")
		}
		max := rapid.IntRange(1, 200).Draw(t, "max")
		spec, perr := Parse(s, max)
		n, cerr := Count(s, max)
		switch {
		case perr == nil:
			if cerr != nil || n != len(spec.Indices) {
				t.Fatalf("Count(%q, %d) = %d, %v; Parse has %d indices", s, max, n, cerr, len(spec.Indices))
			}
		case strings.Contains(perr.Error(), "listed twice"):
			// The list counts the index twice; the cap, checked after
			// the list by Count, may still be refused.
			list, _, _ := strings.Cut(s, "%")
			if m, err := Count(list, max); err != nil || m < 2 || cerr == nil && n != m {
				t.Fatalf("Count(%q, %d) = %d, %v; of the list %d, %v; Parse: %v", s, max, n, cerr, m, err, perr)
			}
		default:
			if cerr == nil || cerr.Error() != perr.Error() {
				t.Fatalf("Count(%q, %d) = %d, %v; Parse: %v", s, max, n, cerr, perr)
			}
		}
	})
}
