package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/xce-sched/xce/internal/api"
)

// TestServeDevDepend submits jobs with dependencies (-w) to `xce serve
// --dev` as a user would (docs/dependencies.md):
//   - job 1 "first" sleeps and exits 3;
//   - job 2, -w "exit(1, 3)", runs once job 1 has exited with 3;
//   - job 3, -w "done(1)", can then never run: it pends with
//     DependencyNeverSatisfied naming done(1), until killed;
//   - job 4, -w "started(first) && ended(first)", runs after job 1;
//   - a dependency on a job that does not exist, and one that does not
//     parse (with its column), are refused.
//
// The log then verifies with the simulator (parity).
func TestServeDevDepend(t *testing.T) {
	dir, run := serveDev(t)
	for i, args := range [][]string{
		{"submit", "-J", "first", "--", "sh", "-c", "sleep 0.3; exit 3"},
		{"submit", "-w", "exit(1, 3)", "--", "sh", "-c", "echo ran > dep2"},
		{"submit", "-w", "done(1)", "--", "true"},
		{"submit", "-w", "started(first) && ended(first)", "--", "true"},
	} {
		want := "Job <" + string(rune('1'+i)) + "> is submitted to queue <normal>.\n"
		if code, out, errs := run(args...); code != ExitOK || out != want {
			t.Fatalf("%v: exit %d, %q %q", args, code, out, errs)
		}
	}
	// The dev server's queue takes no exclusive job (LSF: EXCLUSIVE=Y).
	if code, _, errs := run("submit", "-x", "--", "true"); code != ExitUsage || !strings.Contains(errs, "does not take exclusive jobs") {
		t.Errorf("-x on the dev server: exit %d, %q", code, errs)
	}
	if code, _, errs := run("submit", "-w", "done(99)", "--", "true"); code != ExitUsage || !strings.Contains(errs, "job 99 does not exist") {
		t.Errorf("a dependency on no job: exit %d, %q", code, errs)
	}
	if code, _, errs := run("submit", "-w", "done(1) &&", "--", "true"); code != ExitUsage || !strings.Contains(errs, "col 11: -w: expected a condition") {
		t.Errorf("a dependency that does not parse: exit %d, %q", code, errs)
	}
	js := awaitJobs(t, run, "jobs settle", 20*time.Second, func(js []api.JobInfo) bool {
		return len(js) == 4 && js[1].State == "DONE" && js[3].State == "DONE" && js[2].Reason == "DependencyNeverSatisfied"
	})
	if js[0].State != "EXIT" || js[0].ExitCode != 3 || js[2].State != "PEND" || js[2].Detail != "done(1)" {
		t.Errorf("jobs %+v: want job 1 EXIT 3, job 3 PEND on done(1)", js)
	}
	if out, err := os.ReadFile(filepath.Join(dir, "dep2")); err != nil || string(out) != "ran\n" {
		t.Errorf("job 2's output %q (%v)", out, err)
	}
	if _, out, _ := run("jobs", "3"); !strings.Contains(out, "DependencyNeverSatisfied: done(1)") {
		t.Errorf("jobs 3:\n%s", out)
	}
	if code, _, errs := run("kill", "3"); code != ExitOK {
		t.Errorf("kill 3: exit %d %q", code, errs)
	}
	if code, out, errs := run("sim", "verify", "--data", filepath.Join(dir, "data")); code != ExitOK {
		t.Errorf("sim verify: exit %d, %s %s", code, out, errs)
	}
}
