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

// TestSimCluster: --cluster takes the hosts from a scenario (3 hosts × 2
// slots, not the trace header's 100 nodes); --hosts/--slots override the
// header. Worked by hand: the 5-processor job fits 6 slots, the
// 7-processor one is rejected.
func TestSimCluster(t *testing.T) {
	dir := t.TempDir()
	trace := filepath.Join(dir, "t.swf")
	scen := filepath.Join(dir, "c.yaml")
	lines := "; MaxNodes: 100\n; MaxProcs: 100\n" +
		"1 0 -1 100 5 -1 -1 5 100 -1 1 1 -1 -1 -1 -1 -1 -1\n" +
		"2 10 -1 50 7 -1 -1 7 60 -1 1 2 -1 -1 -1 -1 -1 -1\n"
	if err := os.WriteFile(trace, []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(scen, []byte("hosts:\n  - {name: a, slots: 2}\n  - {name: b, slots: 2}\n  - {name: c, slots: 2}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args                       []string
		hosts, slots, jobs, reject float64
	}{
		{[]string{"--cluster", scen}, 3, 6, 1, 1},
		{[]string{"--hosts", "2", "--slots", "4"}, 2, 8, 2, 0},
		{nil, 100, 100, 2, 0},
	} {
		var out, errb bytes.Buffer
		args := append([]string{"sim", "--json", "--workload", trace}, tc.args...)
		if code := Run(context.Background(), args, &out, &errb); code != ExitOK {
			t.Fatalf("%v: exit %d: %s", tc.args, code, errb.String())
		}
		var res map[string]any
		if err := json.Unmarshal(out.Bytes(), &res); err != nil {
			t.Fatal(err)
		}
		if res["hosts"] != tc.hosts || res["total_slots"] != tc.slots || res["jobs"] != tc.jobs || res["rejected"] != tc.reject {
			t.Errorf("%v: hosts %v slots %v jobs %v rejected %v; want %v %v %v %v", tc.args,
				res["hosts"], res["total_slots"], res["jobs"], res["rejected"], tc.hosts, tc.slots, tc.jobs, tc.reject)
		}
	}
}
