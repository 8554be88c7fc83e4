//go:build linux

package launch

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// Every wait in these tests is bounded by one of these.
const (
	startTimeout = 10 * time.Second
	jobTimeout   = 20 * time.Second
	margin       = 5 * time.Second
)

// leakCheck fails t when, after t's other cleanups, more goroutines run
// than before it. Call it first, so its cleanup runs last.
func leakCheck(t *testing.T) {
	t.Helper()
	before := runtime.NumGoroutine()
	t.Cleanup(func() {
		deadline := time.Now().Add(margin)
		for runtime.NumGoroutine() > before {
			if time.Now().After(deadline) {
				buf := make([]byte, 1<<16)
				n := runtime.Stack(buf, true)
				t.Errorf("goroutine leak: %d before, %d after:\n%s", before, runtime.NumGoroutine(), buf[:n])
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	})
}

// testSpec is a job that runs as the test's own user in dir.
func testSpec(dir string) Spec {
	return Spec{
		Job:       42,
		Attempt:   1,
		Name:      "t",
		Queue:     "normal",
		Cwd:       dir,
		Env:       []string{"PATH=/usr/bin:/bin", "HOME=" + dir},
		Hosts:     []string{"h1"},
		UID:       uint32(os.Geteuid()),
		GID:       uint32(os.Getegid()),
		AllowRoot: true,
		WorkBase:  filepath.Join(dir, "work"),
	}
}

// startT starts s and makes sure, at cleanup, that the job (its process
// group, by its own pid) is killed and reaped.
func startT(t *testing.T, s Spec) *Process {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	p, err := Start(ctx, s)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() {
		select {
		case <-p.Done():
		default:
			_ = p.Kill(0)
			select {
			case <-p.Done():
			case <-time.After(margin):
				t.Errorf("job %d not reaped %v after SIGKILL", p.PID(), margin)
			}
		}
	})
	return p
}

// waitT waits at most d for p to end.
func waitT(t *testing.T, p *Process, d time.Duration) Result {
	t.Helper()
	select {
	case <-p.Done():
		return p.Wait()
	case <-time.After(d):
		t.Fatalf("job %d still running after %v", p.PID(), d)
		return Result{}
	}
}

// run starts s, waits for it and checks that the launcher had no error.
func run(t *testing.T, s Spec) Result {
	t.Helper()
	p := startT(t, s)
	r := waitT(t, p, jobTimeout)
	if r.Err != nil {
		t.Fatalf("result error: %v", r.Err)
	}
	checkReaped(t, p.PID())
	return r
}

// checkReaped fails t when pid still exists (a zombie is a process).
func checkReaped(t *testing.T, pid int) {
	t.Helper()
	if err := unix.Kill(pid, 0); !errors.Is(err, unix.ESRCH) {
		t.Errorf("pid %d after Wait: kill(pid, 0) = %v, want ESRCH", pid, err)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// readPID waits at most d for path to hold a pid (the file may be read
// while the shell is still writing it).
func readPID(t *testing.T, path string, d time.Duration) int {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		b, err := os.ReadFile(path)
		if err == nil {
			var pid int
			if pid, err = strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
				return pid
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s not written within %v: %v", path, d, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// alive reports whether pid is a live process (not a zombie).
func alive(pid int) bool {
	if unix.Kill(pid, 0) != nil {
		return false
	}
	state, _, err := procStat(pid)
	return err == nil && state != 'Z' && state != 'X'
}

// subreaper makes the test process the reaper of the orphans its jobs
// leave (prctl PR_SET_CHILD_SUBREAPER), so that the test can reap exactly
// the pids it records instead of leaving their zombies to init, which on
// some machines reaps late: kill(pid, 0) succeeds on a zombie.
func subreaper(t *testing.T) {
	t.Helper()
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		t.Fatalf("PR_SET_CHILD_SUBREAPER: %v", err)
	}
	t.Cleanup(func() { _ = unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0) })
}

// gone waits until deadline for pid to have died: reaped here when it is
// an orphan handed to this process, then kill(pid, 0) must fail with
// ESRCH.
func gone(t *testing.T, pid int, deadline time.Time) {
	t.Helper()
	for {
		var ws unix.WaitStatus
		_, _ = unix.Wait4(pid, &ws, unix.WNOHANG, nil)
		err := unix.Kill(pid, 0)
		if errors.Is(err, unix.ESRCH) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("pid %d still exists at the deadline: kill(pid, 0) = %v", pid, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// recorded is a pid a job forked, as the test read it, with its start
// time (field 22 of /proc/<pid>/stat), so that a cleanup never signals a
// later process that reused the pid.
type recorded struct {
	pid   int
	start string
}

func record(t *testing.T, pid int) recorded {
	t.Helper()
	st, err := startTime(pid)
	if err != nil {
		t.Fatalf("pid %d: %v", pid, err)
	}
	return recorded{pid, st}
}

func startTime(pid int) (string, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return "", err
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	if len(f) < 20 {
		return "", errors.New("short stat")
	}
	return f[19], nil // field 22; f[0] is field 3
}

// kill is a cleanup for a recorded pid: SIGKILL to exactly that process
// while it is alive, then reap it if it is this process's child (an
// orphan handed to a subreaper).
func (r recorded) kill() {
	if st, err := startTime(r.pid); err == nil && st == r.start && alive(r.pid) {
		_ = unix.Kill(r.pid, unix.SIGKILL)
	}
	deadline := time.Now().Add(margin)
	for time.Now().Before(deadline) {
		var ws unix.WaitStatus
		_, _ = unix.Wait4(r.pid, &ws, unix.WNOHANG, nil)
		if st, err := startTime(r.pid); err != nil || st != r.start || !alive(r.pid) {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func readFileOrEmpty(path string) string {
	b, _ := os.ReadFile(path)
	return string(b)
}
