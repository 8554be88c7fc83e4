// Package proctest holds what the tests that start real processes share
// (internal/cli, internal/e2e, internal/e2e/agents): a process recorded
// with its start time, so that a test ends exactly the process it saw and
// never another that reused its pid, and a buffer several goroutines
// write. It is for tests only.
package proctest

import (
	"bytes"
	"errors"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/xce-sched/xce/internal/launch"
)

// Proc is a process recorded with its start time (launch.ProcStart, clock
// ticks since boot).
type Proc struct {
	PID   int
	Start uint64
}

// Record returns pid's process as it is now; the error says it is gone.
func Record(pid int) (Proc, error) {
	start, err := launch.ProcStart(pid)
	if err != nil {
		return Proc{}, err
	}
	return Proc{pid, start}, nil
}

// Gone reaps the process if it is the caller's zombie (an orphaned job
// comes to a test that is a subreaper), then reports whether the recorded
// process is gone: no process has its pid, another process has it now,
// or it is a zombie of another parent.
func (p Proc) Gone() bool {
	var ws unix.WaitStatus
	_, _ = unix.Wait4(p.PID, &ws, unix.WNOHANG, nil)
	if err := unix.Kill(p.PID, 0); errors.Is(err, unix.ESRCH) {
		return true
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(p.PID) + "/stat")
	if err != nil {
		return true
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	st, err := launch.ProcStart(p.PID)
	return err != nil || st != p.Start || len(f) == 0 || f[0] == "Z" || f[0] == "X"
}

// Kill sends SIGKILL to the recorded process if it is still there, and
// waits at most d for it to be gone (reaping it if it is the caller's).
func (p Proc) Kill(d time.Duration) {
	if !p.Gone() {
		_ = unix.Kill(p.PID, unix.SIGKILL)
	}
	deadline := time.Now().Add(d)
	for !p.Gone() && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
}

// Buffer is a bytes.Buffer that several goroutines may write and read.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p.
func (s *Buffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// String returns what was written so far.
func (s *Buffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
