package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	_ "image/png" // image.DecodeConfig reads the plots
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
)

// runXCE runs the xce command line args and returns its exit code,
// stdout and stderr.
func runXCE(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := Run(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
}

// checkPNG fails t unless path is a PNG image of some size.
func checkPNG(t *testing.T, path string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Error(err)
		return
	}
	defer f.Close()
	cfg, format, err := image.DecodeConfig(f)
	if err != nil || format != "png" || cfg.Width == 0 || cfg.Height == 0 {
		t.Errorf("%s: format %q, %d×%d, %v; want a PNG image", path, format, cfg.Width, cfg.Height, err)
	}
}

// TestSimCompare: `xce sim --compare` replays the workload once per
// policy, each run exactly as `xce sim --policy P` (its outputs are
// byte-identical to a separate run's), draws the two comparison figures,
// and prints the runs' metrics side by side, each column its policy's.
// On a cluster of identical hosts, and on a scenario's cluster (loaded
// afresh for each run).
func TestSimCompare(t *testing.T) {
	policies := []string{"fcfs", "easy", "conservative", "firstfit"}
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"hosts", []string{"--jobs", "300", "--hosts", "16"}},
		{"scenario", []string{"--jobs", "200", "--cluster", "../../examples/queues.yaml"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			base := append([]string{"sim"}, tc.args...)
			args := slices.Concat(base, []string{"--compare", strings.Join(policies, ","), "--json", "--out", filepath.Join(dir, "cmp")})
			code, out, errs := runXCE(args...)
			if code != ExitOK {
				t.Fatalf("%v: exit %d: %s", args, code, errs)
			}
			var res struct {
				Policies []string         `json:"policies"`
				Runs     []map[string]any `json:"runs"`
			}
			if err := json.Unmarshal([]byte(out), &res); err != nil {
				t.Fatalf("bad JSON: %v\n%s", err, out)
			}
			if !reflect.DeepEqual(res.Policies, policies) || len(res.Runs) != len(policies) {
				t.Fatalf("JSON: policies %v and %d runs; want %v", res.Policies, len(res.Runs), policies)
			}
			for _, f := range []string{"compare-utilization.png", "compare-queue.png"} {
				checkPNG(t, filepath.Join(dir, "cmp", f))
			}
			metrics := make([]map[string]any, len(policies))
			for i, p := range policies {
				single := filepath.Join(dir, "single", p)
				if code, _, errs := runXCE(slices.Concat(base, []string{"--policy", p, "--out", single})...); code != ExitOK {
					t.Fatalf("--policy %s: exit %d: %s", p, code, errs)
				}
				for _, f := range []string{"schedule.swf", "metrics.json", "utilization.png", "queue.png"} {
					got, err := os.ReadFile(filepath.Join(dir, "cmp", p, f))
					if err != nil {
						t.Fatal(err)
					}
					want, err := os.ReadFile(filepath.Join(single, f))
					if err != nil {
						t.Fatal(err)
					}
					if !bytes.Equal(got, want) {
						t.Errorf("%s/%s differs from a run with --policy %s alone", p, f, p)
					}
					if strings.HasSuffix(f, ".png") {
						checkPNG(t, filepath.Join(dir, "cmp", p, f))
					}
				}
				data, err := os.ReadFile(filepath.Join(single, "metrics.json"))
				if err != nil {
					t.Fatal(err)
				}
				if err := json.Unmarshal(data, &metrics[i]); err != nil {
					t.Fatal(err)
				}
				if metrics[i]["policy"] != p {
					t.Errorf("%s/metrics.json: policy %v", p, metrics[i]["policy"])
				}
				if !reflect.DeepEqual(res.Runs[i], metrics[i]) {
					t.Errorf("JSON run %d (%s): %v; want its metrics.json, %v", i, p, res.Runs[i], metrics[i])
				}
			}
			// The runs must differ, or a comparison that ran one policy
			// under every name would pass.
			if metrics[0]["wait_mean_s"] == metrics[1]["wait_mean_s"] {
				t.Fatalf("fcfs and easy wait alike on this workload (%v): it cannot tell them apart", metrics[0]["wait_mean_s"])
			}

			// Without --json nor --out: the table, one column per policy.
			code, out, errs = runXCE(slices.Concat(base, []string{"--compare", strings.Join(policies, ",")})...)
			if code != ExitOK {
				t.Fatalf("table: exit %d: %s", code, errs)
			}
			checkCompareTable(t, out, policies, metrics)
		})
	}
}

// checkCompareTable checks that each row of a comparison table holds the
// runs' metrics (from their metrics.json), formatted as the single run's
// table formats them, in the policies' order.
func checkCompareTable(t *testing.T, table string, policies []string, metrics []map[string]any) {
	t.Helper()
	rows := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(table), "\n") {
		cells := regexp.MustCompile(`\s{2,}`).Split(strings.TrimSpace(line), -1)
		rows[cells[0]] = cells[1:]
	}
	num := func(m map[string]any, k string) float64 { v, _ := m[k].(float64); return v }
	want := map[string]func(m map[string]any) string{
		"policy":                   func(m map[string]any) string { return m["policy"].(string) },
		"jobs completed":           func(m map[string]any) string { return fmt.Sprint(num(m, "jobs")) },
		"rejected (can never run)": func(m map[string]any) string { return fmt.Sprint(num(m, "rejected")) },
		"makespan":                 func(m map[string]any) string { return fmt.Sprintf("%.0f s", num(m, "makespan_s")) },
		"utilization":              func(m map[string]any) string { return fmt.Sprintf("%.4f", num(m, "utilization")) },
		"wait mean / median / p95": func(m map[string]any) string {
			return fmt.Sprintf("%.1f / %.1f / %.1f s", num(m, "wait_mean_s"), num(m, "wait_median_s"), num(m, "wait_p95_s"))
		},
		"response time mean":             func(m map[string]any) string { return fmt.Sprintf("%.1f s", num(m, "response_mean_s")) },
		"bounded slowdown mean (τ=10 s)": func(m map[string]any) string { return fmt.Sprintf("%.2f", num(m, "bsld_mean")) },
		"cycles":                         func(m map[string]any) string { return fmt.Sprint(num(m, "cycles")) },
	}
	reasons := map[string]bool{}
	for _, m := range metrics {
		for k := range m["pending_by_reason_s"].(map[string]any) {
			reasons[k] = true
		}
	}
	if len(reasons) == 0 {
		t.Errorf("no pending time in any run: the pending rows go unchecked")
	}
	for k := range reasons {
		want["pending time: "+k] = func(m map[string]any) string {
			v, _ := m["pending_by_reason_s"].(map[string]any)[k].(float64)
			return fmt.Sprintf("%.0f job-s", v)
		}
	}
	labels := make([]string, 0, len(want))
	for k := range want {
		labels = append(labels, k)
	}
	sort.Strings(labels)
	for _, k := range labels {
		cells, ok := rows[k]
		if !ok {
			t.Errorf("the table lacks the row %q:\n%s", k, table)
			continue
		}
		if len(cells) != len(policies) {
			t.Errorf("row %q: %d cells %q, want one per policy", k, len(cells), cells)
			continue
		}
		for i, m := range metrics {
			if w := want[k](m); cells[i] != w {
				t.Errorf("row %q, column %d (%s): %q, want %q", k, i+1, policies[i], cells[i], w)
			}
		}
	}
	if rows["workload"] == nil || rows["cluster"] == nil {
		t.Errorf("the table does not say what ran:\n%s", table)
	}
}

// TestSimCompareFlags: a bad --compare list, or --compare with flags it
// does not go with, exits with 2 naming what is wrong, before anything
// runs or is written.
func TestSimCompareFlags(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"--compare", "fcfs,sjf"}, `policy "sjf" is unknown`},
		{[]string{"--compare", "easy,FCFS"}, `policy "FCFS" is unknown`},
		{[]string{"--compare", ""}, "the list is empty"},
		{[]string{"--compare", " , "}, "item 1 is empty"},
		{[]string{"--compare", "fcfs,,easy"}, "item 2 is empty"},
		{[]string{"--compare", "fcfs,easy,"}, "item 3 is empty"},
		{[]string{"--compare", "easy,fcfs,easy"}, `"easy" is listed twice`},
		{[]string{"--compare", "easy, fcfs,fcfs "}, `"fcfs" is listed twice`},
		{[]string{"--compare", "fcfs,easy", "--policy", "easy"}, "give it or --policy, not both"},
		{[]string{"--compare", "fcfs,easy", "--policy", ""}, "give it or --policy, not both"},
		{[]string{"--compare", "fcfs,easy", "--from-data", dir}, "does not go with --from-data"},
		{[]string{"--compare", "fcfs,easy", "--hosts", "0"}, "--hosts 0"},
		{[]string{"--compare", "fcfs,easy", "--cycles", "events"}, "go with --from-data"},
		{[]string{"--compare", "fcfs,easy", "--workload", filepath.Join(dir, "none.swf")}, "none.swf"},
	} {
		args := append([]string{"sim", "--jobs", "20", "--out", out}, tc.args...)
		if code, _, errs := runXCE(args...); code != ExitUsage || !strings.Contains(errs, tc.msg) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 naming %q", tc.args, code, errs, tc.msg)
		}
		if _, err := os.Stat(out); !os.IsNotExist(err) {
			t.Fatalf("%v: %s written (%v)", tc.args, out, err)
		}
	}
	// An output directory that cannot be made is an error before any
	// replay (a file stands where DIR/easy would go).
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(out, "easy"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errs := runXCE("sim", "--jobs", "20", "--out", out, "--compare", "fcfs,easy"); code != ExitUsage || !strings.Contains(errs, "--out") {
		t.Errorf("--out over a file: exit %d, stderr %q; want exit 2 naming --out", code, errs)
	}
	if _, err := os.Stat(filepath.Join(out, "fcfs", "metrics.json")); !os.IsNotExist(err) {
		t.Errorf("--out over a file: fcfs's run was written (%v)", err)
	}
	// Spaces around the names are trimmed.
	if code, _, errs := runXCE("sim", "--jobs", "20", "--compare", " fcfs , easy"); code != ExitOK {
		t.Errorf("--compare ' fcfs , easy': exit %d: %s", code, errs)
	}
}

// TestCompareCaption: a comparison's title names the trace, the cluster
// and the policies compared.
func TestCompareCaption(t *testing.T) {
	got := compareCaption("/traces/KTH-SP2.swf", 100, 100, []string{"fcfs", "easy", "conservative"})
	if want := "KTH-SP2.swf, 100 hosts (100 slots): fcfs vs easy vs conservative"; got != want {
		t.Errorf("caption %q, want %q", got, want)
	}
	if got := plotCaption("KTH.swf", "easy", 1, 1); got != "KTH.swf, easy, 1 host (1 slot)" {
		t.Errorf("single-run caption %q", got)
	}
}

// TestCompareTableColumns: the side-by-side table keeps the runs'
// columns aligned when the rows printed once (cleaning, out of order)
// are there: the second run's policy name and its makespan start at the
// same column.
func TestCompareTableColumns(t *testing.T) {
	a := simResult{Policy: "fcfs", Workload: "w.swf", Hosts: 4, TotalSlots: 4, Dropped: 173, Capped: 1, OutOfOrder: 2}
	a.MakespanS = 7949022
	b := a
	b.Policy = "easy"
	var buf strings.Builder
	if err := writeSimTable(&buf, a, b); err != nil {
		t.Fatal(err)
	}
	col := map[string]int{}
	for _, line := range strings.Split(buf.String(), "\n") {
		switch {
		case strings.HasPrefix(line, "policy"):
			col["policy"] = strings.Index(line, "easy")
		case strings.HasPrefix(line, "makespan"):
			col["makespan"] = strings.LastIndex(line, "7949022 s")
		case strings.HasPrefix(line, "cleaning"):
			if !strings.Contains(line, "173 dropped, 1 run time capped, 0 bad lines skipped") {
				t.Errorf("cleaning row %q", line)
			}
		}
	}
	if col["policy"] <= 0 || col["policy"] != col["makespan"] {
		t.Errorf("the second run's column starts at %d in the policy row and %d in the makespan row:\n%s", col["policy"], col["makespan"], buf.String())
	}
}
