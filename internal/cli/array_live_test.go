package cli

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/xce-sched/xce/internal/api"
)

// TestServeDevArray submits job arrays to `xce serve --dev` as a user
// would (docs/arrays.md):
//   - array 1, -J "sw[1-3]%1": three elements that each log their start
//     and end to one file; with the cap of 1 the log must read start/end
//     pairs one element at a time, in index order. Each element's -o
//     out.%J.%I gets LSB_JOBINDEX, XCE_ARRAY_INDEX and LSB_JOBID (the
//     array's ID, 1).
//   - -J "big[1-1001]" is refused: more than max_array_size (1000).
//   - array 6, -J "z[1-3]": `xce kill 6` kills its three unfinished
//     elements in one request;
//   - array 4, -J "k[1-4:3]": elements 4[1] and 4[4] (job IDs 4 and 5);
//     `xce kill 4[4]` kills one element, `xce kill 4` the rest; a second
//     `xce kill 4` fails: every element has ended.
//
// `xce jobs --json` shows each element with its array's "id" and its
// "array_index"; the table shows ID[INDEX].
func TestServeDevArray(t *testing.T) {
	dir, run := serveDev(t)
	script := `echo start $LSB_JOBINDEX >> log; echo $LSB_JOBINDEX $XCE_ARRAY_INDEX $LSB_JOBID; sleep 0.2; echo end $LSB_JOBINDEX >> log`
	if code, out, errs := run("submit", "-J", "sw[1-3]%1", "-o", "out.%J.%I", "--", "sh", "-c", script); code != ExitOK || out != "Job <1> is submitted to queue <normal>.\n" {
		t.Fatalf("submit array 1: exit %d, %q %q", code, out, errs)
	}
	if code, out, errs := run("submit", "-J", "k[1-4:3]", "--", "sleep", "60"); code != ExitOK || out != "Job <4> is submitted to queue <normal>.\n" {
		t.Fatalf("submit array 4: exit %d, %q %q", code, out, errs)
	}
	if code, out, errs := run("submit", "-J", "z[1-3]", "--", "sleep", "60"); code != ExitOK || out != "Job <6> is submitted to queue <normal>.\n" {
		t.Fatalf("submit array 6: exit %d, %q %q", code, out, errs)
	}
	if code, _, errs := run("submit", "-J", "bad[1-3,x]", "--", "true"); code != ExitUsage || !strings.Contains(errs, "col 9: -J: expected a digit, got 'x'") {
		t.Errorf("a bad index list: exit %d, %q", code, errs)
	}
	if code, _, errs := run("submit", "-J", "big[1-1001]", "--", "true"); code != ExitUsage || !strings.Contains(errs, "more than 1000 elements") {
		t.Errorf("an array over max_array_size (1000 by default): exit %d, %q", code, errs)
	}
	jobs := func(args ...string) []api.JobInfo { return devJobs(t, run, args...) }
	want := []struct{ ID, ArrayIndex, Job int64 }{{1, 1, 1}, {1, 2, 2}, {1, 3, 3}, {4, 1, 4}, {4, 4, 5}, {6, 1, 6}, {6, 2, 7}, {6, 3, 8}}
	js := jobs()
	if len(js) != len(want) {
		t.Fatalf("jobs: %+v, want %d", js, len(want))
	}
	for i, w := range want {
		if js[i].ID != w.ID || js[i].ArrayIndex != w.ArrayIndex || js[i].Job != w.Job {
			t.Errorf("jobs[%d] = %+v, want id %d array_index %d job %d", i, js[i], w.ID, w.ArrayIndex, w.Job)
		}
	}
	if code, out, errs := run("kill", "4[4]"); code != ExitOK || out != "Job <4[4]> is being terminated\n" {
		t.Errorf("kill 4[4]: exit %d, %q %q", code, out, errs)
	}
	if code, out, errs := run("kill", "4"); code != ExitOK || out != "Job <4> is being terminated\n" {
		t.Errorf("kill 4: exit %d, %q %q", code, out, errs)
	}
	// Three unfinished elements, killed in one request.
	if code, out, errs := run("kill", "6"); code != ExitOK || out != "Job <6> is being terminated\n" {
		t.Errorf("kill 6: exit %d, %q %q", code, out, errs)
	}
	js = awaitJobs(t, run, "every element ends", 20*time.Second, func(js []api.JobInfo) bool {
		return !slices.ContainsFunc(js, func(j api.JobInfo) bool { return j.State == "PEND" || j.State == "RUN" })
	})
	for i, st := range []string{"DONE", "DONE", "DONE", "EXIT", "EXIT", "EXIT", "EXIT", "EXIT"} {
		if js[i].State != st {
			t.Errorf("job %d[%d]: %s, want %s", js[i].ID, js[i].ArrayIndex, js[i].State, st)
		}
	}
	if code, _, _ := run("kill", "4"); code != ExitFailure {
		t.Errorf("killing an ended array: exit %d, want %d", code, ExitFailure)
	}
	if code, _, errs := run("jobs", "4[9]"); code != ExitFailure || !strings.Contains(errs, "job 4[9] does not exist") {
		t.Errorf("jobs 4[9]: exit %d, %q", code, errs)
	}
	if js := jobs("1[2]"); len(js) != 1 || js[0].Job != 2 {
		t.Errorf("jobs 1[2]: %+v", js)
	}
	if js := jobs("4"); len(js) != 2 || js[0].Job != 4 || js[1].Job != 5 {
		t.Errorf("jobs 4 (the array): %+v", js)
	}
	if _, out, _ := run("jobs", "-a"); !strings.Contains(out, "\n1[2] ") || !strings.Contains(out, "\n4[4] ") {
		t.Errorf("jobs -a table lacks 1[2] and 4[4]:\n%s", out)
	}
	if _, out, _ := run("history", "1[2]"); !strings.HasPrefix(out, "Job <1[2]>:\n") {
		t.Errorf("history 1[2]:\n%s", out)
	}
	if _, out, _ := run("why", "1[2]"); !strings.HasPrefix(out, "Job 1[2] is not pending: it ended (DONE).") {
		t.Errorf("why 1[2]:\n%s", out)
	}
	// The simulator replays the log with the same decisions (parity).
	if code, out, errs := run("sim", "verify", "--data", filepath.Join(dir, "data")); code != ExitOK {
		t.Errorf("sim verify: exit %d, %s %s", code, out, errs)
	}
	log, err := os.ReadFile(filepath.Join(dir, "log"))
	if err != nil || string(log) != "start 1\nend 1\nstart 2\nend 2\nstart 3\nend 3\n" {
		t.Errorf("with a cap of 1 the elements must run one at a time, in index order; the log reads %q (%v)", log, err)
	}
	for i := 1; i <= 3; i++ {
		name := filepath.Join(dir, "out.1."+string(rune('0'+i)))
		out, err := os.ReadFile(name)
		if w := strings.Repeat(string(rune('0'+i))+" ", 2) + "1\n"; err != nil || string(out) != w {
			t.Errorf("%s: %q (%v), want %q", name, out, err, w)
		}
	}
}
