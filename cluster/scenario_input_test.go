package cluster

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/goccy/go-yaml/lexer"
)

// This file tests the bounds on scenario input (issue 11 §5): size,
// characters, block mapping length, the runtime total and error length.
// The small cases are in errorCases (scenario_test.go).

// parseErr parses data as name and returns the *ScenarioError.
func parseErr(t *testing.T, name string, data []byte) *ScenarioError {
	t.Helper()
	_, err := Parse(name, data)
	var se *ScenarioError
	if !errors.As(err, &se) {
		t.Fatalf("got %v, want a *ScenarioError", err)
	}
	return se
}

// TestScenarioZeroBytes: 1 MB of zero bytes used to print 4 MB of error
// text; now one short line at 1:1.
func TestScenarioZeroBytes(t *testing.T) {
	se := parseErr(t, "z.yaml", make([]byte, 1<<20))
	want := "z.yaml:1:1: character U+0000 is not allowed in YAML (control characters other than tab and line breaks)"
	if se.Error() != want {
		t.Errorf("got  %.200q\nwant %q", se.Error(), want)
	}
}

// TestScenarioTooLarge: a scenario of exactly MaxScenarioSize bytes loads
// (h1 padded with a comment); one byte more is an error, from Parse and
// from Load.
func TestScenarioTooLarge(t *testing.T) {
	if MaxScenarioSize != 16777216 {
		t.Fatalf("MaxScenarioSize %d, documented as 16 MiB", MaxScenarioSize)
	}
	fits := []byte(h1 + "#" + strings.Repeat("x", 16777216-len(h1)-1))
	if c, err := Parse("fits.yaml", fits); err != nil || len(c.Hosts) != 1 {
		t.Fatalf("%d bytes: %v", len(fits), err)
	}
	big := append(fits, 'x')
	want := "big.yaml: the file is larger than 16777216 bytes (16 MiB), the most a scenario may hold"
	if se := parseErr(t, "big.yaml", big); se.Error() != want || se.Line != 0 || se.Path != "" {
		t.Errorf("Parse: got %q, want %q", se.Error(), want)
	}
	path := filepath.Join(t.TempDir(), "big.yaml")
	if err := os.WriteFile(path, big, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(path); err == nil || err.Error() != path+": the file is larger than 16777216 bytes (16 MiB), the most a scenario may hold" {
		t.Errorf("Load: got %v", err)
	}
}

// TestScenarioLongMapping: go-yaml parses a block mapping in time
// quadratic in its keys (100,000 keys took half a minute) and recurses once
// per key (some 2.5 million keys crashed the process with a stack
// overflow). The squares of the key counts may add up to 10^9: one mapping
// of 31,622 keys (999,950,884) passes, 31,623 (1,000,014,129) do not. The
// top-level mapping below holds hosts (line 1) and keys k1 … kN on lines
// 3 … N+2, so N+1 keys; with N = 31,622 the key k31622 on line 31,624 is
// one too many. (The tokens are checked alone for the passing case: parsing
// 31,622 keys takes go-yaml about 3 s.)
func TestScenarioLongMapping(t *testing.T) {
	doc := func(n int) string {
		var b strings.Builder
		b.WriteString(h1)
		for i := 1; i <= n; i++ {
			fmt.Fprintf(&b, "k%d: 1\n", i)
		}
		return b.String()
	}
	if tk, msg := tooDeep(lexer.Tokenize(doc(31_621))); tk != nil {
		t.Errorf("31,622 keys: %d:%d %s", tk.Position.Line, tk.Position.Column, msg)
	}
	se := parseErr(t, "m.yaml", []byte(doc(31_622)))
	want := "m.yaml:31624:1: YAML block mappings too long: the squares of their key counts add up to more than 1000000000 at this key (key 31623 of its mapping); write long mappings in flow style, {a: 1, b: 2}"
	if se.Error() != want {
		t.Errorf("got  %s\nwant %s", se.Error(), want)
	}
	// Ten mappings of 10,000 keys each (10^9 in all) pass; the first key
	// of an eleventh mapping, on the line after them, is one too many.
	var b strings.Builder
	for m := range 11 {
		for i := range 10_000 {
			if i == 0 {
				fmt.Fprintf(&b, "- k%d: 1\n", m)
			} else {
				fmt.Fprintf(&b, "  k%d: 1\n", i)
			}
		}
	}
	tk, msg := tooDeep(lexer.Tokenize(b.String()))
	if tk == nil || tk.Position.Line != 100_001 || tk.Position.Column != 3 || !strings.Contains(msg, "at this key (key 1 of its mapping)") {
		t.Errorf("11 × 10,000 keys: %v %s; want line 100001, column 3", tk, msg)
	}
}

// TestScenarioHorizon: the latest submit or start time plus the runtimes
// may reach 10^15 s. 1,000 jobs of runtime 10^12 s submitted at 0 (lines
// 4 … 1003) reach it exactly and load; a 1,001st (jobs[1000], line 1004,
// its '{' at column 5) passes it.
func TestScenarioHorizon(t *testing.T) {
	doc := func(n int) []byte {
		var b strings.Builder
		b.WriteString(h1 + "jobs:\n")
		for i := range n {
			fmt.Fprintf(&b, "  - {runtime: 1000000000000, id: %d}\n", i)
		}
		return []byte(b.String())
	}
	if c, err := Parse("r.yaml", doc(1000)); err != nil || len(c.Jobs) != 1000 {
		t.Fatalf("1000 jobs: %v", err)
	}
	se := parseErr(t, "r.yaml", doc(1001))
	want := "r.yaml:1004:5: jobs[1000]: the latest submit or start time so far (0 s) plus the runtimes of jobs[0] to jobs[1000] (1001000000000000 s) exceed 10^15 s, the most a simulation of the scenario may reach"
	if se.Error() != want {
		t.Errorf("got  %s\nwant %s", se.Error(), want)
	}
}

// TestScenarioMessageCut: a message quoting another library's (here
// resreq's, which quotes the whole section name) is cut to 400 bytes:
// `resreq: col 1: unknown section "` (32 bytes), 365 z, "...".
func TestScenarioMessageCut(t *testing.T) {
	in := h1 + "jobs:\n  - {id: 1, resreq: \"" + strings.Repeat("z", 1000) + "[x]\"}\n"
	se := parseErr(t, "c.yaml", []byte(in))
	want := `resreq: col 1: unknown section "` + strings.Repeat("z", 365) + "..."
	if se.Msg != want || se.Line != 4 || se.Col != 21 || se.Path != "jobs[0].resreq" {
		t.Errorf("got %d:%d %s %q (%d bytes)\nwant 4:21 jobs[0].resreq %q", se.Line, se.Col, se.Path, se.Msg, len(se.Msg), want)
	}
}
