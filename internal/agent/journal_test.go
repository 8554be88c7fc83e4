package agent

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/xce-sched/xce/internal/launch"
)

// TestJournal: an attempt is taken once; a kill of an attempt the
// journal does not hold records it ended, killed, and it is then never
// started; an end the server took is removed; a journal opened again (a
// restarted agent) holds what was not removed, and recover kills the
// process group of an attempt that ran (a real `sleep`, whose start time
// was recorded) and ends every unended attempt lost, "its agent
// restarted".
func TestJournal(t *testing.T) {
	dir := t.TempDir()
	jdir, work := filepath.Join(dir, "jobs"), filepath.Join(dir, "work")
	j, err := openJournal(jdir)
	if err != nil {
		t.Fatal(err)
	}
	k1, k2, k3 := key{1, 1}, key{2, 1}, key{3, 2}
	if !j.take(k1) || j.take(k1) {
		t.Fatal("take: want the first take only")
	}
	if err := j.kill(k2, time.Second); err != nil {
		t.Fatal(err)
	}
	if j.take(k2) {
		t.Error("an attempt killed before its start was taken")
	}
	killed := Report{Kind: KindFinished, Job: 2, Attempt: 1, ExitCode: -1, Reason: ReasonKilled}
	if got := j.pending(); !reflect.DeepEqual(got, []Report{killed}) {
		t.Errorf("pending %+v, want the kill's end", got)
	}
	j.reported(killed)
	if b, err := os.ReadFile(filepath.Join(jdir, logName)); err != nil || !strings.HasSuffix(string(b), `{"job":2,"attempt":1,"gone":true}`+"\n") {
		t.Errorf("the log after the reported end: %q (%v), want 2.1 gone last", b, err)
	}
	if j.take(k2) != true {
		t.Error("once its end is reported, the journal no longer holds the attempt")
	}
	j.reported(killed) // nothing to remove: harmless

	// Attempt 3.2 runs a real process, recorded with its start time.
	if !j.take(k3) {
		t.Fatal("take 3.2")
	}
	proc, err := launch.Start(context.Background(), launch.Spec{Job: 3, Attempt: 2, Command: []string{"sleep", "60"}, Cwd: dir,
		Env: []string{"PATH=" + os.Getenv("PATH")}, Hosts: []string{"h1"}, UID: uint32(os.Geteuid()), GID: uint32(os.Getegid()),
		AllowRoot: true, Stdout: filepath.Join(dir, "out")})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = proc.Kill(0); <-proc.Done() }()
	if err := j.started(k3, proc); err != nil {
		t.Fatal(err)
	}
	if got := j.pending(); len(got) != 1 || got[0] != (Report{Kind: KindStarted, Job: 3, Attempt: 2, PID: proc.PID()}) {
		t.Errorf("pending %+v, want 3.2's start", got)
	}
	running, finished := j.registration()
	if want := []Running{{1, 1, 0}, {2, 1, 0}, {3, 2, proc.PID()}}; !reflect.DeepEqual(running, want) || finished != nil {
		t.Errorf("registration %+v %+v, want running %+v", running, finished, want)
	}

	// The agent restarts: a new journal over the same directory.
	j2, err := openJournal(jdir)
	if err != nil {
		t.Fatal(err)
	}
	var logged []string
	n, err := j2.recover(work, func(f string, a ...any) { logged = append(logged, f) })
	if err != nil || n != 3 {
		t.Fatalf("recover: %d, %v; want 3 attempts ended", n, err)
	}
	select {
	case <-proc.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("recover did not kill 3.2's process within 10 s")
	}
	if r := proc.Wait(); r.Signal != "SIGKILL" || r.Killed {
		t.Errorf("3.2's end %+v, want SIGKILL (from recover)", r)
	}
	lost := func(job int64, attempt int) Report {
		return Report{Kind: KindFinished, Job: job, Attempt: attempt, ExitCode: -1, Lost: true, Reason: ReasonAgentRestarted}
	}
	// 3.2 started (its pid is recorded) but its start was never reported:
	// the start goes first, then its end.
	started := Report{Kind: KindStarted, Job: 3, Attempt: 2, PID: proc.PID()}
	if got, want := j2.pending(), []Report{lost(1, 1), lost(2, 1), started, lost(3, 2)}; !reflect.DeepEqual(got, want) {
		t.Errorf("pending after recover %+v, want %+v", got, want)
	}
	if j2.take(k1) || j2.take(k3) {
		t.Error("a restarted agent took an attempt its earlier run had taken")
	}
	if len(logged) != 1 {
		t.Errorf("logged %q, want one kill", logged)
	}
}

// TestClipReason: a reason is made valid UTF-8 and cut to MaxReason bytes
// at a rune boundary.
func TestClipReason(t *testing.T) {
	long := strings.Repeat("a", MaxReason-4) + "éé" + "x" // é is 2 bytes; the cut falls inside the first
	for in, want := range map[string]string{
		"killed":                         "killed",
		"bad \xff byte":                  "bad ? byte",
		strings.Repeat("x", MaxReason):   strings.Repeat("x", MaxReason),
		strings.Repeat("x", MaxReason+1): strings.Repeat("x", MaxReason-3) + "...",
		long:                             strings.Repeat("a", MaxReason-4) + "...",
	} {
		got := clipReason(in)
		if got != want || len(got) > MaxReason || !utf8.ValidString(got) {
			t.Errorf("clipReason(%.20q...) = %.20q... (%d bytes), want %.20q... (%d bytes)", in, got, len(got), want, len(want))
		}
	}
}

// TestJournalLog: the journal is one appended log. Reopened, it holds the
// last state of each attempt not gone; a last line cut short by a crash is
// dropped, a bad line elsewhere is an error; an earlier version's files,
// one per attempt, are folded in and removed; and the log is rewritten
// with one line per attempt held.
func TestJournalLog(t *testing.T) {
	dir := t.TempDir()
	write := func(text string) {
		if err := os.WriteFile(filepath.Join(dir, logName), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(`{"job":1,"attempt":1}` + "\n" + `{"job":1,"attempt":1,"pid":5}` + "\n" + `{"job":2,"attempt":1}` + "\n" +
		`{"job":2,"attempt":1,"gone":true}` + "\n" + `{"job":3,"attempt":2,"pi`)
	if err := os.WriteFile(filepath.Join(dir, "4.1"), []byte(`{"job":4,"attempt":1,"pid":9}`), 0o600); err != nil {
		t.Fatal(err)
	}
	j, err := openJournal(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer j.close()
	if len(j.entries) != 2 || j.entries[key{1, 1}].PID != 5 || j.entries[key{4, 1}].PID != 9 {
		t.Errorf("entries %+v, want 1.1 (pid 5) and 4.1 (pid 9)", j.entries)
	}
	if _, err := os.Stat(filepath.Join(dir, "4.1")); !os.IsNotExist(err) {
		t.Errorf("the earlier version's file: %v, want it removed", err)
	}
	b, _ := os.ReadFile(filepath.Join(dir, logName))
	if want := `{"job":1,"attempt":1,"pid":5}` + "\n" + `{"job":4,"attempt":1,"pid":9}` + "\n"; string(b) != want {
		t.Errorf("the rewritten log %q, want %q", b, want)
	}
	j.close()
	write(`{"job":1,"attempt":1}` + "\n" + `not json` + "\n" + `{"job":2,"attempt":1}` + "\n")
	if _, err := openJournal(dir); err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("a bad line in the middle: %v, want an error naming line 2", err)
	}
}
