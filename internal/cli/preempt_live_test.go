package cli

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/xce-sched/xce/cluster"
	"github.com/xce-sched/xce/internal/api"
	"github.com/xce-sched/xce/internal/daemon"
)

// servePreempt runs a server in this process with its agent inside, over
// one host of one slot and queues high (preempting low) and low, whose
// jobs preemption handles as action says.
func servePreempt(t *testing.T, action string) (dir string, run runner) {
	text := fmt.Sprintf("hosts:\n  - {name: h1, slots: 1, resources: {mem: 1000}}\nqueues:\n"+
		"  - {name: high, priority: 10, preemptive: [low]}\n  - {name: low, priority: 1, preempt_action: %s}\n", action)
	c, s, err := cluster.ParseConfig("preempt.yaml", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	return serveIn(t, func(ctx context.Context, data string, errOut *bytes.Buffer) int {
		err := daemon.Serve(ctx, daemon.Options{Cluster: c, Server: s, ConfigText: text, DataDir: data, Dev: true})
		if err != nil {
			errOut.WriteString(err.Error())
			return ExitFailure
		}
		return ExitOK
	})
}

// procState returns the state letter of process pid (/proc/PID/stat:
// R, S, T for stopped, ...), or "" when it is gone.
func procState(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return ""
	}
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2 : i+3]
	}
	return ""
}

// TestServePreemptSuspend, as a user would see it (docs/preemption.md):
// job 1 of queue low counts up in a file; job 2 of queue high, which
// preempts low, takes the one slot: job 1 shows SUSP with reason
// Preempted and its process is stopped (state T), so its file stops
// growing; when job 2 ends, job 1 resumes where it was (not restarted:
// the same pid) and finishes DONE. The log then verifies with the
// simulator.
func TestServePreemptSuspend(t *testing.T) {
	dir, run := servePreempt(t, "suspend")
	counter := `i=0; while [ $i -lt 40 ]; do i=$((i+1)); echo $i >> count; sleep 0.05; done`
	if code, _, errs := run("submit", "-q", "low", "--", "sh", "-c", counter); code != ExitOK {
		t.Fatalf("submit 1: %d %s", code, errs)
	}
	js := awaitJobs(t, run, "job 1 runs", 10*time.Second, func(js []api.JobInfo) bool { return js[0].State == "RUN" && js[0].PID > 0 })
	pid := js[0].PID
	if code, _, errs := run("submit", "-q", "high", "--", "sh", "-c", "sleep 1; echo high > high"); code != ExitOK {
		t.Fatalf("submit 2: %d %s", code, errs)
	}
	js = awaitJobs(t, run, "job 1 suspended", 10*time.Second, func(js []api.JobInfo) bool {
		return len(js) == 2 && js[0].State == "SUSP" && js[1].State == "RUN"
	})
	if js[0].Reason != "Preempted" {
		t.Errorf("job 1: reason %q, want Preempted", js[0].Reason)
	}
	// bjobs lists suspended jobs by default, with why.
	if _, out, _ := run("jobs"); !strings.Contains(out, "SUSP") || !strings.Contains(out, "1*h1 (Preempted)") {
		t.Errorf("xce jobs does not show job 1 suspended:\n%s", out)
	}
	deadline := time.Now().Add(5 * time.Second)
	for procState(pid) != "T" && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if st := procState(pid); st != "T" {
		t.Fatalf("job 1's process %d is in state %q, want T (stopped)", pid, st)
	}
	before, _ := os.ReadFile(filepath.Join(dir, "count"))
	time.Sleep(300 * time.Millisecond)
	if after, _ := os.ReadFile(filepath.Join(dir, "count")); !bytes.Equal(before, after) {
		t.Errorf("job 1 went on counting while suspended: %d then %d bytes", len(before), len(after))
	}
	js = awaitJobs(t, run, "both done", 20*time.Second, func(js []api.JobInfo) bool { return js[0].State == "DONE" && js[1].State == "DONE" })
	if js[0].PID != pid {
		t.Errorf("job 1 ran as pid %d, then %d: it was restarted, not resumed", pid, js[0].PID)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "count")); !strings.HasSuffix(string(b), "\n40\n") || strings.Count(string(b), "\n") != 40 {
		t.Errorf("job 1 counted %q, want 1 … 40 once", b)
	}
	if _, out, _ := run("history", "1"); !strings.Contains(out, "suspended by preemption (attempt 1)") || !strings.Contains(out, ": resumed") {
		t.Errorf("xce history 1 does not tell the preemption:\n%s", out)
	}
	if code, out, errs := run("sim", "verify", "--data", filepath.Join(dir, "data")); code != ExitOK {
		t.Errorf("sim verify: exit %d, %s %s", code, out, errs)
	}
}

// TestServePreemptRequeue: with preempt_action requeue, job 1 is killed
// when job 2 takes its slot, pends (Requeued) and, once job 2 ends, runs
// again from the start (a second attempt, another pid) to DONE.
func TestServePreemptRequeue(t *testing.T) {
	dir, run := servePreempt(t, "requeue")
	if code, _, errs := run("submit", "-q", "low", "--", "sh", "-c", "echo start >> starts; sleep 1.5"); code != ExitOK {
		t.Fatalf("submit 1: %d %s", code, errs)
	}
	js := awaitJobs(t, run, "job 1 runs", 10*time.Second, func(js []api.JobInfo) bool { return js[0].State == "RUN" && js[0].PID > 0 })
	pid := js[0].PID
	if code, _, errs := run("submit", "-q", "high", "--", "sleep", "0.5"); code != ExitOK {
		t.Fatalf("submit 2: %d %s", code, errs)
	}
	js = awaitJobs(t, run, "job 1 requeued", 10*time.Second, func(js []api.JobInfo) bool {
		return len(js) == 2 && js[0].State == "PEND" && js[1].State != "PEND"
	})
	if js[0].Reason != "Requeued" {
		t.Errorf("job 1: reason %q, want Requeued", js[0].Reason)
	}
	deadline := time.Now().Add(5 * time.Second)
	for procState(pid) != "" && procState(pid) != "Z" && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if st := procState(pid); st != "" && st != "Z" {
		t.Errorf("job 1's first run (pid %d) is still there, state %s", pid, st)
	}
	js = awaitJobs(t, run, "both done", 20*time.Second, func(js []api.JobInfo) bool { return js[0].State == "DONE" && js[1].State == "DONE" })
	if js[0].PID == pid {
		t.Errorf("job 1 ran again as the same pid %d", pid)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "starts")); string(b) != "start\nstart\n" {
		t.Errorf("job 1 started %q, want twice", b)
	}
	if code, out, errs := run("sim", "verify", "--data", filepath.Join(dir, "data")); code != ExitOK {
		t.Errorf("sim verify: exit %d, %s %s", code, out, errs)
	}
}
