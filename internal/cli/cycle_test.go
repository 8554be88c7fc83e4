package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"
)

// TestSimCycleMode: --cycle per-event runs a cycle after each submission,
// then after each job end, within a second. Worked by hand on one host of
// 2 slots under firstfit: job 1 (1 slot, 0–10), then at t = 10 job 2 (2
// slots, 20 s) and job 3 (1 slot, 5 s) arrive as job 1 ends.
//   - per-time: job 1's end is applied first; job 2 takes both slots at
//     10–30 and job 3 runs 30–35: waits 0, 0, 20, mean 20/3 s.
//   - per-event: job 2 arrives while job 1 still runs and pends; job 3
//     takes the free slot at 10–15; after job 1's end job 2 still lacks a
//     slot and runs 15–35: waits 0, 5, 0, mean 5/3 s.
//
// A mode other than the two exits with 2.
func TestSimCycleMode(t *testing.T) {
	swf := "; MaxNodes: 1\n; MaxProcs: 2\n" +
		"1 0 -1 10 1 -1 -1 1 10 -1 1 1 1 -1 1 -1 -1 -1\n" +
		"2 10 -1 20 2 -1 -1 2 20 -1 1 1 1 -1 1 -1 -1 -1\n" +
		"3 10 -1 5 1 -1 -1 1 5 -1 1 1 1 -1 1 -1 -1 -1\n"
	f := filepath.Join(t.TempDir(), "c.swf")
	if err := os.WriteFile(f, []byte(swf), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		mode string
		wait float64
	}{{"per-time", 20.0 / 3}, {"per-event", 5.0 / 3}} {
		var out, errb bytes.Buffer
		if code := Run(context.Background(), []string{"sim", "--workload", f, "--policy", "firstfit", "--cycle", tc.mode, "--json"}, &out, &errb); code != ExitOK {
			t.Fatalf("%s: exit %d: %s", tc.mode, code, errb.String())
		}
		var res struct {
			Wait     float64 `json:"wait_mean_s"`
			Makespan int64   `json:"makespan_s"`
		}
		if err := json.Unmarshal(out.Bytes(), &res); err != nil {
			t.Fatal(err)
		}
		if math.Abs(res.Wait-tc.wait) > 1e-9 || res.Makespan != 35 {
			t.Errorf("%s: wait mean %v, makespan %d; want %v, 35", tc.mode, res.Wait, res.Makespan, tc.wait)
		}
	}
	var out, errb bytes.Buffer
	if code := Run(context.Background(), []string{"sim", "--jobs", "10", "--cycle", "often"}, &out, &errb); code != ExitUsage {
		t.Errorf("--cycle often: exit %d, want %d", code, ExitUsage)
	}
}

// TestScheduleUntilHidesFutureJobs: with --until T, a job submitted after
// T is not shown (it has no state yet); the others are, in file order.
// One host of 1 slot: job 1 runs from 0; job 2 (submitted at 0) pends;
// job 3 arrives at 5.
func TestScheduleUntilHidesFutureJobs(t *testing.T) {
	f := filepath.Join(t.TempDir(), "s.yaml")
	scenario := "hosts: [{name: h, slots: 1}]\njobs:\n  - {id: 1, runtime: 100}\n  - {id: 2}\n  - {id: 3, submit: 5}\n"
	if err := os.WriteFile(f, []byte(scenario), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		until string
		ids   []int
	}{{"0", []int{1, 2}}, {"5", []int{1, 2, 3}}} {
		var out, errb bytes.Buffer
		if code := Run(context.Background(), []string{"schedule", "--json", "--until", tc.until, f}, &out, &errb); code != ExitOK {
			t.Fatalf("exit %d: %s", code, errb.String())
		}
		var res struct {
			Jobs []struct {
				ID int `json:"id"`
			} `json:"jobs"`
		}
		if err := json.Unmarshal(out.Bytes(), &res); err != nil {
			t.Fatalf("%v\n%s", err, out.String())
		}
		var ids []int
		for _, j := range res.Jobs {
			ids = append(ids, j.ID)
		}
		if fmt.Sprint(ids) != fmt.Sprint(tc.ids) {
			t.Errorf("--until %s: jobs %v, want %v", tc.until, ids, tc.ids)
		}
	}
}
