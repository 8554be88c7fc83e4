package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// This file holds the command line's checks of extreme input (issue 11 §5).

// runXce runs xce with args and returns the exit code, stdout and stderr.
func runXce(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := Run(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
}

// swfFile writes an SWF trace of a 4-node header and the given records
// (id, submit, run; 1 processor each, no requested time) into dir.
func swfFile(t *testing.T, dir, name string, recs ...[3]string) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("; MaxNodes: 4\n; MaxProcs: 4\n")
	for _, r := range recs {
		fmt.Fprintf(&b, "%s %s -1 %s 1 -1 -1 1 -1 -1 1 1 -1 -1 -1 -1 -1 -1\n", r[0], r[1], r[2])
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestSimExtremeTimes: the traces exit with 2 and an error naming
// the line and field, instead of running forever (submit 2^63−1),
// overflowing (submit and run 2^62, with --out a panic in the plots) or
// starting a job before its submission (run 2^63−1). A time of exactly
// 10^15 s is accepted.
func TestSimExtremeTimes(t *testing.T) {
	dir := t.TempDir()
	tooLate := " is out of range (a time is at most 10^15 s)"
	for _, tc := range []struct {
		name string
		recs [][3]string
		want string
	}{
		{"submit 2^63-1", [][3]string{{"1", "0", "10"}, {"2", "9223372036854775807", "10"}},
			`a.swf:4: field 2 (submit time): "9223372036854775807"` + tooLate},
		{"submit and run 2^62", [][3]string{{"1", "4611686018427387904", "4611686018427387904"}},
			`b.swf:3: field 2 (submit time): "4611686018427387904"` + tooLate},
		{"run 2^63-1", [][3]string{{"1", "0", "9223372036854775807"}, {"2", "5", "10"}},
			`c.swf:3: field 4 (run time): "9223372036854775807"` + tooLate},
		{"duplicate job number", [][3]string{{"1", "0", "10"}, {"2", "5", "10"}, {"1", "9", "10"}},
			`d.swf:5: field 1 (job number): duplicate job number 1 (first on line 3)`},
		{"horizon passed by 1 s", [][3]string{{"1", "0", "500000000000000"}, {"2", "1", "500000000000000"}},
			`f.swf:4: the latest submit time so far (1 s) plus the run times up to this line (1000000000000000 s) exceed 10^15 s, the most a simulation may reach`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := swfFile(t, dir, strings.Fields(tc.want)[0][:5], tc.recs...)
			code, out, errs := runXce("sim", "--json", "--workload", path, "--out", filepath.Join(dir, "out"))
			if code != ExitUsage || errs != "xce: "+filepath.Join(dir, tc.want)+"\n" || out != "" {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit 2 and %s", code, out, errs, tc.want)
			}
		})
	}

	// The bound itself: two jobs on 4 hosts, submitted at 0, each running
	// 5·10^14 s (latest submit plus run times: 10^15 s): no wait, makespan
	// 5·10^14 s, utilization (2 · 5·10^14) / (4 · 5·10^14) = 0.5.
	path := swfFile(t, dir, "e.swf", [3]string{"1", "0", "500000000000000"}, [3]string{"2", "0", "500000000000000"})
	code, out, errs := runXce("sim", "--json", "--workload", path, "--out", filepath.Join(dir, "out"))
	var res struct {
		Jobs        int     `json:"jobs"`
		Makespan    int64   `json:"makespan_s"`
		Utilization float64 `json:"utilization"`
		WaitMax     float64 `json:"wait_p95_s"`
	}
	if err := json.Unmarshal([]byte(out), &res); code != ExitOK || err != nil {
		t.Fatalf("at the bound: exit %d, %v: %s", code, err, errs)
	}
	if res.Jobs != 2 || res.Makespan != 500_000_000_000_000 || res.Utilization != 0.5 || res.WaitMax != 0 {
		t.Errorf("at the bound: %+v", res)
	}
}

// TestSimOutOfOrder: records submitted at 0, 10, 5 (lines 3–5) run, with a
// warning naming the first late record and the count in the JSON output.
func TestSimOutOfOrder(t *testing.T) {
	path := swfFile(t, t.TempDir(), "o.swf", [3]string{"1", "0", "10"}, [3]string{"2", "10", "10"}, [3]string{"3", "5", "10"})
	code, out, errs := runXce("sim", "--json", "--workload", path)
	want := "xce: warning: " + path + ":5: field 2 (submit time): 5 is earlier than the submit time 10 on line 4 " +
		"(1 record out of submit order; jobs are replayed in submit order)\n"
	if code != ExitOK || errs != want {
		t.Fatalf("exit %d, stderr %q; want 0 and %q", code, errs, want)
	}
	var res map[string]any
	if err := json.Unmarshal([]byte(out), &res); err != nil || res["out_of_order"] != 1.0 || res["jobs"] != 3.0 {
		t.Errorf("JSON %v (%v): want out_of_order 1, jobs 3", res, err)
	}
}

// TestSimCountFlags: --hosts, --slots and --jobs, when given, must lie in
// 1 … their bound; --hosts 0 used to mean 128 hosts, and --hosts 2^32
// --slots 2^32 overflowed into a panic of the model.
func TestSimCountFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--hosts", "0"}, "--hosts 0: want 1 to 10000000 (leave --hosts out for the default)"},
		{[]string{"--slots", "0"}, "--slots 0: want 1 to 1000000000 (leave --slots out for the default)"},
		{[]string{"--jobs", "0"}, "--jobs 0: want 1 to 10000000 (leave --jobs out for the default)"},
		{[]string{"--hosts", "-3"}, "--hosts -3: want 1 to 10000000 (leave --hosts out for the default)"},
		{[]string{"--hosts", "4294967296", "--slots", "4294967296"}, "--hosts 4294967296: want 1 to 10000000 (leave --hosts out for the default)"},
		{[]string{"--slots", "4294967296"}, "--slots 4294967296: want 1 to 1000000000 (leave --slots out for the default)"},
		{[]string{"--jobs", "2000000000"}, "--jobs 2000000000: want 1 to 10000000 (leave --jobs out for the default)"},
	} {
		if code, _, errs := runXce(append([]string{"sim"}, tc.args...)...); code != ExitUsage || errs != "xce: "+tc.want+"\n" {
			t.Errorf("sim %v: exit %d, stderr %q; want 2 and %q", tc.args, code, errs, tc.want)
		}
	}
}

// TestScheduleHelpPolicies: `xce schedule --help` names the four queue
// policies.
func TestScheduleHelpPolicies(t *testing.T) {
	code, out, _ := runXce("schedule", "--help")
	if code != ExitOK || !strings.Contains(out, "(fcfs, firstfit, easy or conservative)") {
		t.Errorf("exit %d; help lacks the four policies:\n%s", code, out)
	}
}
