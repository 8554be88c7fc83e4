//go:build linux

package launch

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestKillProcessGroup: Kill ends a grandchild that ignores SIGINT and
// SIGTERM, through the process group, within the grace period and a
// margin, and not before the grace period.
func TestKillProcessGroup(t *testing.T) {
	leakCheck(t)
	subreaper(t)
	dir := t.TempDir()
	s := testSpec(dir)
	s.Script = `sh -c 'trap "" INT TERM; echo $$ > gc.tmp; mv gc.tmp gc.pid; exec sleep 300' &
wait
`
	p := startT(t, s)
	gc := record(t, readPID(t, filepath.Join(dir, "gc.pid"), startTimeout))
	t.Cleanup(gc.kill)

	const grace = 3 * time.Second
	killed := time.Now()
	if err := p.Kill(grace); err != nil {
		t.Fatalf("Kill: %v", err)
	}
	time.Sleep(grace / 6)
	if !alive(gc.pid) {
		t.Fatalf("grandchild %d died before SIGKILL: it ignores SIGINT and SIGTERM", gc.pid)
	}
	r := waitT(t, p, grace+margin)
	if !r.Killed || r.Signal == "" || r.Err != nil {
		t.Errorf("result %+v: want killed by a signal", r)
	}
	if took := time.Since(killed); took < grace {
		t.Errorf("Wait returned %v after Kill, before the grace period %v ended", took, grace)
	}
	checkReaped(t, p.PID())
	gone(t, gc.pid, killed.Add(grace+margin))
}

// TestKillEndsEarly: a job that SIGINT ends is over at once, not after the
// grace period.
func TestKillEndsEarly(t *testing.T) {
	leakCheck(t)
	dir := t.TempDir()
	s := testSpec(dir)
	s.Command = []string{"sleep", "300"}
	p := startT(t, s)
	time.Sleep(100 * time.Millisecond) // let the shell exec sleep
	if err := p.Kill(time.Hour); err != nil {
		t.Fatalf("Kill: %v", err)
	}
	r := waitT(t, p, margin)
	if r.Signal != "SIGINT" || r.ExitCode != 130 || !r.Killed {
		t.Errorf("result %+v, want SIGINT, 130, killed", r)
	}
	checkReaped(t, p.PID())
}

// TestKillNow: Kill(0) sends SIGKILL at once.
func TestKillNow(t *testing.T) {
	leakCheck(t)
	dir := t.TempDir()
	s := testSpec(dir)
	s.Command = []string{"sh", "-c", `trap "" INT TERM; echo ready; while :; do sleep 1; done`}
	p := startT(t, s)
	waitOutput(t, filepath.Join(dir, "xce-42.out"), "ready\n")
	if err := p.Kill(0); err != nil {
		t.Fatalf("Kill: %v", err)
	}
	if r := waitT(t, p, margin); r.Signal != "SIGKILL" || !r.Killed {
		t.Errorf("result %+v, want SIGKILL", r)
	}
}

// TestKillAfterExit: Kill after the job ended does nothing.
func TestKillAfterExit(t *testing.T) {
	leakCheck(t)
	dir := t.TempDir()
	s := testSpec(dir)
	s.Command = []string{"true"}
	p := startT(t, s)
	r := waitT(t, p, jobTimeout)
	if err := p.Kill(time.Second); err != nil {
		t.Errorf("Kill after Wait: %v", err)
	}
	if r2 := p.Wait(); r2.Killed || r2 != r {
		t.Errorf("result changed by a late Kill: %+v", r2)
	}
}

// TestLeftoversKilled: what a job leaves running in its process group when
// it exits is killed at once.
func TestLeftoversKilled(t *testing.T) {
	leakCheck(t)
	subreaper(t)
	dir := t.TempDir()
	s := testSpec(dir)
	s.Script = `sleep 300 &
echo $! > bg.tmp; mv bg.tmp bg.pid
while [ ! -e go ]; do sleep 0.05; done
`
	p := startT(t, s)
	bg := record(t, readPID(t, filepath.Join(dir, "bg.pid"), startTimeout))
	t.Cleanup(bg.kill) // should the launcher leave it running
	if err := os.WriteFile(filepath.Join(dir, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	r := waitT(t, p, jobTimeout)
	if r.ExitCode != 0 || r.Killed || r.Err != nil {
		t.Errorf("result %+v", r)
	}
	gone(t, bg.pid, time.Now().Add(margin))
}

// waitOutput waits for path to hold want.
func waitOutput(t *testing.T, path, want string) {
	t.Helper()
	deadline := time.Now().Add(startTimeout)
	for readFileOrEmpty(path) != want {
		if time.Now().After(deadline) {
			t.Fatalf("%s: %q, want %q", path, readFileOrEmpty(path), want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
