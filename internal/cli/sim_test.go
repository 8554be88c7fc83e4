package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSimCommand: the built-in model runs, is deterministic for a seed,
// writes its outputs, and bad flags or files exit with 2.
func TestSimCommand(t *testing.T) {
	run := func(args ...string) (int, string, string) {
		var out, errb bytes.Buffer
		code := Run(context.Background(), append([]string{"sim"}, args...), &out, &errb)
		return code, out.String(), errb.String()
	}
	dir := t.TempDir()
	code, out, errs := run("--jobs", "300", "--seed", "7", "--json", "--out", dir)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var res map[string]any
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("bad JSON: %v\n%s", err, out)
	}
	for _, k := range []string{"jobs", "makespan_s", "utilization", "wait_mean_s", "wait_p95_s", "response_mean_s", "bsld_mean", "rejected"} {
		if _, ok := res[k]; !ok {
			t.Errorf("JSON lacks %q", k)
		}
	}
	if res["jobs"].(float64)+res["rejected"].(float64) != 300 || res["hosts"].(float64) != 128 {
		t.Errorf("want 300 jobs on 128 hosts, got %v", out)
	}
	for _, f := range []string{"schedule.swf", "metrics.json", "utilization.png", "queue.png"} {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
			t.Errorf("--out: %s missing or empty: %v", f, err)
		}
	}
	if _, again, _ := run("--jobs", "300", "--seed", "7", "--json"); again != out {
		t.Errorf("the same seed gave different results")
	}

	bad := filepath.Join(dir, "bad.swf")
	if err := os.WriteFile(bad, []byte("; MaxNodes: 4\n1 0 -1 10 2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"--policy", "sjf"}, `--policy "sjf"`},
		{[]string{"--workload", filepath.Join(dir, "missing.swf")}, "missing.swf"},
		{[]string{"--workload", bad}, "bad.swf:2: expected 18 fields, got 5"},
		{[]string{"extra-arg"}, "unknown command"},
	} {
		if code, _, errs := run(tc.args...); code != ExitUsage || !strings.Contains(errs, tc.msg) {
			t.Errorf("sim %v: exit %d, stderr %q; want exit 2 containing %q", tc.args, code, errs, tc.msg)
		}
	}
	// --skip-bad skips the bad line: no job is left, so nothing completes.
	code, out, errs = run("--workload", bad, "--skip-bad", "--json")
	if code != ExitOK || !strings.Contains(out, `"skipped_lines": 1`) {
		t.Errorf("--skip-bad: exit %d, %s %s", code, out, errs)
	}
}
