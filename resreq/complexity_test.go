package resreq

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
)

// complexityShapes are the long lists of the language, n items each (n
// operands for a select expression), at sizes the limits allow.
var complexityShapes = []struct {
	name string
	gen  func(n int) string
}{
	{"rusage", func(n int) string { s, _ := items("rusage[", ":", "]", n, -1, named("r%d=1")); return s }},
	{"order", func(n int) string { s, _ := items("order[", ":", "]", n, -1, named("-k%d")); return s }},
	{"same", func(n int) string { s, _ := items("same[", ":", "]", n, -1, named("k%d")); return s }},
	{"&& chain", func(n int) string { s, _ := items("select[", " && ", "]", n/2, -1, named("mem>%d")); return s }},
	{"|| chain", func(n int) string { s, _ := items("select[", " || ", "]", n/2, -1, named("mem==%d")); return s }},
	{"sum", func(n int) string { return "select[" + strings.Repeat("mem+", n-2) + "mem > 1]" }},
	{"compound", func(n int) string {
		s, _ := items("", " + ", "", n, -1, func(i int) string { return fmt.Sprintf("%d*{select[mem>1] rusage[mem=%d]}", i+1, i) })
		return s
	}},
	{"alternatives", func(n int) string {
		s, _ := items("", " || ", "", n, -1, named("{select[mem>%d] same[type]}"))
		return s
	}},
}

// parseCompile parses s and compiles every select section; it returns the
// work both did (tokens scanned, names compared or probed, nodes visited).
func parseCompile(t *testing.T, s string) int {
	r, work, err := parse(s)
	if err != nil {
		t.Fatalf("parse(%.40q...): %v", s, err)
	}
	for _, alt := range r.Alternatives {
		for _, term := range alt.Terms {
			_, w, err := compileSelect(term.Select, testSchema())
			if err != nil {
				t.Fatalf("compile: %v", err)
			}
			work += w
		}
	}
	return work
}

// allocated returns the bytes f allocates (the least of 3 runs).
func allocated(f func()) uint64 {
	least := ^uint64(0)
	var before, after runtime.MemStats
	for range 3 {
		runtime.ReadMemStats(&before)
		f()
		runtime.ReadMemStats(&after)
		least = min(least, after.TotalAlloc-before.TotalAlloc)
	}
	return least
}

// TestParseCompileLinear: from n to 4n items (n = MaxItems/4, 4n = the
// limit), the work of Parse and CompileSelect and the bytes they allocate
// grow at most 5 times: n log n allows 4 * log(1024)/log(256) = 5. A
// duplicate check that scans the names before it does 16 times the work.
func TestParseCompileLinear(t *testing.T) {
	const n = MaxItems / 4
	for _, sh := range complexityShapes {
		small, big := sh.gen(n), sh.gen(4*n)
		ws, wb := parseCompile(t, small), parseCompile(t, big)
		if wb > 5*ws {
			t.Errorf("%s: work %d for %d items, %d for %d: more than 5 times", sh.name, ws, n, wb, 4*n)
		}
		as := allocated(func() { parseCompile(t, small) })
		ab := allocated(func() { parseCompile(t, big) })
		if ab > 5*as {
			t.Errorf("%s: %d bytes allocated for %d items, %d for %d: more than 5 times", sh.name, as, n, ab, 4*n)
		}
		// The work is not 0: a counter that does not count proves nothing.
		if ws < n {
			t.Errorf("%s: work %d for %d items", sh.name, ws, n)
		}
	}
}

// TestNameSet: nameSet finds exactly the repeated names, before and after
// it switches from a scan to a map, against a brute-force oracle.
func TestNameSet(t *testing.T) {
	names := []string{"a", "b", "a", "c", "d", "e", "f", "g", "h", "i", "b", "j", "k", "i", "l", "a", "m", "l"}
	work := 0
	s := nameSet{work: &work}
	for i, name := range names {
		dup := false
		for _, prev := range names[:i] {
			dup = dup || prev == name
		}
		if got := s.add(name); got == dup {
			t.Errorf("add(%q) #%d = %v, want %v", name, i, got, !dup)
		}
	}
	if s.big == nil {
		t.Errorf("%d distinct names and no map", len(names)-5)
	}
}
