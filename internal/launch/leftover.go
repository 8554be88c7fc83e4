//go:build linux

package launch

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// ProcStart returns when process pid started, in clock ticks since boot
// (field 22 of /proc/<pid>/stat). With the pid it names one process for
// good: a later process that reuses the pid has another start time. An
// agent records it with each job's pid (Process.PID) while the job runs,
// so that after a restart it can tell its own leftovers from strangers
// (KillLeftover).
func ProcStart(pid int) (uint64, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, fmt.Errorf("launch: start time of %d: %w", pid, err)
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, fmt.Errorf("launch: stat of %d: no command field", pid)
	}
	f := strings.Fields(string(b[i+1:])) // f[0] is field 3 (state)
	if len(f) < 20 {
		return 0, fmt.Errorf("launch: stat of %d: %d fields", pid, len(f)+2)
	}
	t, err := strconv.ParseUint(f[19], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("launch: stat of %d: start time: %w", pid, err)
	}
	return t, nil
}

// KillLeftover kills what is left of a job that an earlier run of the
// agent started as process pid (its process group's id), which started
// at start (ProcStart), and waits up to timeout for the group to be
// empty. An agent that restarts cannot Wait for such a job: it is no
// longer the job's parent.
//
// The group is sent SIGKILL when its leader is still that process (the
// same start time; alive, or a zombie nobody reaped yet), or when no
// process has pid any more but the group still has members: the kernel
// does not give a pid to a new process while it is still some group's
// id, so those members are the job's. When a process with another start
// time has pid, the pid was reused after the whole group had ended, and
// nothing is signalled. It returns whether a signal was sent; an error
// when /proc cannot be read or the group still has live members at the
// timeout. One race is left: the group ends, and the pid is reused by a
// new process that makes itself a group leader, between the check and
// the signal.
func KillLeftover(pid int, start uint64, timeout time.Duration) (bool, error) {
	if pid <= 1 {
		return false, fmt.Errorf("launch: leftover pid %d: %w", pid, ErrInvalid)
	}
	if t, err := ProcStart(pid); err == nil && t != start {
		return false, nil // a stranger has the pid: the job's group is gone
	}
	if err := unix.Kill(-pid, unix.SIGKILL); err != nil {
		if errors.Is(err, unix.ESRCH) {
			return false, nil
		}
		return false, fmt.Errorf("launch: kill -KILL -%d: %w", pid, err)
	}
	deadline := time.Now().Add(timeout)
	for {
		alive, err := groupAlive(pid, 0)
		if err != nil {
			return true, err
		}
		if !alive {
			return true, nil
		}
		if time.Now().After(deadline) {
			return true, fmt.Errorf("launch: process group %d still has live members after %v", pid, timeout)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
