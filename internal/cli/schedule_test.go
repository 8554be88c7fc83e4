package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestScheduleGolden runs `xce schedule --json` on every file in examples/
// (goldens in testdata/schedule/) and in testdata/scenarios/ (goldens
// beside them), and compares the decisions with the golden files, whose
// expected decisions were worked out by hand (see the comments in each
// scenario). The comparison is on the parsed JSON, key order included for
// the ordered objects (hosts, host_reasons).
func TestScheduleGolden(t *testing.T) {
	for _, dir := range []struct{ scenarios, goldens string }{
		{"../../examples", "../../testdata/schedule"},
		{"../../testdata/scenarios", "../../testdata/scenarios"},
	} {
		files, err := filepath.Glob(filepath.Join(dir.scenarios, "*.yaml"))
		if err != nil || len(files) == 0 {
			t.Fatalf("no scenarios in %s: %v", dir.scenarios, err)
		}
		for _, f := range files {
			name := strings.TrimSuffix(filepath.Base(f), ".yaml")
			t.Run(name, func(t *testing.T) {
				args := append([]string{"schedule", "--json"}, scenarioArgs(t, f)...)
				var out, errb bytes.Buffer
				if code := Run(context.Background(), append(args, f), &out, &errb); code != ExitOK {
					t.Fatalf("exit %d: %s", code, errb.String())
				}
				want, err := os.ReadFile(filepath.Join(dir.goldens, name+".golden.json"))
				if err != nil {
					t.Fatal(err)
				}
				if g, w := orderedJSON(t, out.Bytes()), orderedJSON(t, want); !reflect.DeepEqual(g, w) {
					t.Errorf("decisions differ\ngot:  %s\nwant: %s", out.Bytes(), want)
				}
			})
		}
	}
}

// scenarioArgs returns the extra arguments a scenario asks for in a first
// line "# xce-args: ...".
func scenarioArgs(t *testing.T, file string) []string {
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	first, _, _ := strings.Cut(string(data), "\n")
	if rest, ok := strings.CutPrefix(first, "# xce-args:"); ok {
		return strings.Fields(rest)
	}
	return nil
}

// orderedJSON decodes JSON keeping object key order: objects become lists
// of [key, value] pairs.
func orderedJSON(t *testing.T, data []byte) any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := decodeOrdered(dec)
	if err != nil {
		t.Fatalf("bad JSON %q: %v", data, err)
	}
	return v
}

func decodeOrdered(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch tok {
	case json.Delim('{'):
		var obj [][2]any
		for dec.More() {
			k, err := dec.Token()
			if err != nil {
				return nil, err
			}
			v, err := decodeOrdered(dec)
			if err != nil {
				return nil, err
			}
			obj = append(obj, [2]any{k, v})
		}
		_, err := dec.Token()
		return obj, err
	case json.Delim('['):
		var arr []any
		for dec.More() {
			v, err := decodeOrdered(dec)
			if err != nil {
				return nil, err
			}
			arr = append(arr, v)
		}
		_, err := dec.Token()
		return arr, err
	}
	return tok, nil
}

func TestExitCodes(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(bad, []byte("hosts:\n  - {name: a, slots: 0}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		args []string
		code int
		out  string // substring of stdout (code 0) or stderr
	}{
		{[]string{"version"}, ExitOK, "xce 0.1.0-dev"},
		{[]string{"nosuch"}, ExitUsage, "unknown command"},
		{[]string{"schedule"}, ExitUsage, "accepts 1 arg"},
		{[]string{"schedule", "--bogus", "x"}, ExitUsage, "unknown flag"},
		{[]string{"schedule", "/nonexistent.yaml"}, ExitUsage, "/nonexistent.yaml"},
		{[]string{"schedule", bad}, ExitUsage, "bad.yaml:2:22: hosts[0].slots"},
		{[]string{"schedule", "../../examples/queues.yaml"}, ExitOK, "held back for an earlier job"},
	}
	for _, tc := range tests {
		var out, errb bytes.Buffer
		code := Run(context.Background(), tc.args, &out, &errb)
		text := out.String()
		if code != ExitOK {
			text = errb.String()
		}
		if code != tc.code || !strings.Contains(text, tc.out) {
			t.Errorf("xce %v: exit %d, output %q; want exit %d containing %q", tc.args, code, text, tc.code, tc.out)
		}
	}
}
