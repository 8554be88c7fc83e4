//go:build linux

package launch

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// scriptName is the job script's file name in the job's work directory.
const scriptName = "script"

// outputMode is the mode an output file is created with, before the
// agent's umask.
const outputMode = 0o644

// output is one output file to open.
type output struct {
	path  string
	trunc bool
}

// openOutputs opens the job's output files for writing, creating them
// when missing, with the permissions of the job's user: when the agent is
// root, on a thread of its own whose file-system uid and gid and whose
// supplementary groups are the user's (setfsuid(2), setfsgid(2) and
// setgroups(2) change the calling thread only), so the kernel checks every
// directory on the path, every symbolic link's target and the file itself
// as it would for the user, and a new file belongs to the user. That
// thread is never given back to the Go scheduler: it ends when its
// goroutine does (runtime.LockOSThread; were it the main thread, the
// runtime parks it for good instead), and the runtime does not clone new
// threads from a locked one. The caller closes the files.
func openOutputs(id identity, outs []output) ([]*os.File, error) {
	if !id.set {
		return openFiles(outs)
	}
	type opened struct {
		files []*os.File
		err   error
	}
	ch := make(chan opened, 1)
	go func() {
		runtime.LockOSThread()
		// No UnlockOSThread: the thread exits with this goroutine, taking
		// the user's credentials with it.
		if err := becomeFileUser(id); err != nil {
			ch <- opened{err: err}
			return
		}
		files, err := openFiles(outs)
		ch <- opened{files, err}
	}()
	r := <-ch
	return r.files, r.err
}

// becomeFileUser gives the calling thread the job user's supplementary
// groups and file-system ids, and checks that the kernel took them.
func becomeFileUser(id identity) error {
	if err := unix.Setgroups(id.groups); err != nil {
		return fmt.Errorf("setgroups %v: %w", id.groups, err)
	}
	// setfsgid and setfsuid return the previous id, never an error the
	// caller could rely on: call again with -1 (no change) to read back.
	if _, err := unix.SetfsgidRetGid(id.gid); err != nil {
		return fmt.Errorf("setfsgid %d: %w", id.gid, err)
	}
	if got, _ := unix.SetfsgidRetGid(-1); got != id.gid {
		return fmt.Errorf("setfsgid %d: file-system gid is %d", id.gid, got)
	}
	if _, err := unix.SetfsuidRetUid(id.uid); err != nil {
		return fmt.Errorf("setfsuid %d: %w", id.uid, err)
	}
	if got, _ := unix.SetfsuidRetUid(-1); got != id.uid {
		return fmt.Errorf("setfsuid %d: file-system uid is %d", id.uid, got)
	}
	return nil
}

// openFiles opens outs for writing in order; an output whose path equals
// an earlier one's shares its file. O_NONBLOCK keeps a FIFO without a
// reader from blocking the open (ENXIO instead); the descriptor is made
// blocking again before the job gets it.
func openFiles(outs []output) ([]*os.File, error) {
	files := make([]*os.File, 0, len(outs))
	fail := func(err error) ([]*os.File, error) {
		closeFiles(files)
		return nil, err
	}
	for i, o := range outs {
		if j := indexOfPath(outs[:i], o.path); j >= 0 {
			files = append(files, files[j])
			continue
		}
		flags := unix.O_WRONLY | unix.O_CREAT | unix.O_CLOEXEC | unix.O_NONBLOCK
		if o.trunc {
			flags |= unix.O_TRUNC
		} else {
			flags |= unix.O_APPEND
		}
		fd, err := unix.Open(o.path, flags, outputMode)
		if err != nil {
			return fail(&os.PathError{Op: "open", Path: o.path, Err: err})
		}
		if err := unix.SetNonblock(fd, false); err != nil {
			_ = unix.Close(fd)
			return fail(&os.PathError{Op: "fcntl", Path: o.path, Err: err})
		}
		files = append(files, os.NewFile(uintptr(fd), o.path))
	}
	return files, nil
}

func indexOfPath(outs []output, path string) int {
	for i, o := range outs {
		if o.path == path {
			return i
		}
	}
	return -1
}

// closeFiles closes each distinct file once.
func closeFiles(files []*os.File) {
	for i, f := range files {
		seen := false
		for _, g := range files[:i] {
			seen = seen || g == f
		}
		if !seen && f != nil {
			_ = f.Close()
		}
	}
}

// workDir is the work directory of attempt attempt of job job under base.
func workDir(base string, job int64, attempt int) string {
	return filepath.Join(base, strconv.FormatInt(job, 10)+"."+strconv.Itoa(attempt))
}

// writeScript creates the job's work directory (mode 0700) under base,
// creating base (mode 0711: others may pass through it to their own
// directories, not list it) when missing, and writes the script in it
// (mode 0600). Both are the agent's until the script is written, then
// given to the job's user when the agent is root, so the user's shell can
// read the script and nobody else can. A directory left from an earlier
// start of the same attempt is an error (fs.ErrExist). It returns the
// directory and the script's path; on error nothing is left behind.
func writeScript(base string, s *Spec, id identity) (dir, script string, err error) {
	if err := os.MkdirAll(base, 0o711); err != nil {
		return "", "", fmt.Errorf("work base: %w", err)
	}
	dir = workDir(base, s.Job, s.Attempt)
	if err := os.Mkdir(dir, 0o700); err != nil {
		return "", "", fmt.Errorf("work directory: %w", err)
	}
	defer func() {
		if err != nil {
			_ = os.RemoveAll(dir)
		}
	}()
	script = filepath.Join(dir, scriptName)
	f, err := os.OpenFile(script, os.O_WRONLY|os.O_CREATE|os.O_EXCL|unix.O_NOFOLLOW, 0o600)
	if err != nil {
		return "", "", fmt.Errorf("job script: %w", err)
	}
	_, werr := f.WriteString(s.Script)
	if werr == nil && id.set {
		werr = f.Chown(id.uid, id.gid)
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return "", "", fmt.Errorf("job script: %w", werr)
	}
	if id.set {
		if err := os.Chown(dir, id.uid, id.gid); err != nil {
			return "", "", fmt.Errorf("work directory: %w", err)
		}
	}
	return dir, script, nil
}

// groupAlive reports whether a process other than leader whose process
// group is pgid is still alive (not a zombie), by reading /proc.
func groupAlive(pgid, leader int) (bool, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return false, fmt.Errorf("read /proc: %w", err)
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == leader {
			continue
		}
		state, pgrp, err := procStat(pid)
		if err != nil {
			continue // gone since the listing, or not a process
		}
		if pgrp == pgid && state != 'Z' && state != 'X' {
			return true, nil
		}
	}
	return false, nil
}

// procStat returns a process's state and process group from
// /proc/<pid>/stat, whose second field (the command) may hold spaces and
// parentheses: the fields after it start after its last ')'.
func procStat(pid int) (state byte, pgrp int, err error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, 0, err
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, 0, fmt.Errorf("stat of %d: no command field", pid)
	}
	f := strings.Fields(string(b[i+1:])) // state ppid pgrp ...
	if len(f) < 3 || len(f[0]) != 1 {
		return 0, 0, fmt.Errorf("stat of %d: %d fields", pid, len(f))
	}
	pgrp, err = strconv.Atoi(f[2])
	if err != nil {
		return 0, 0, fmt.Errorf("stat of %d: process group: %w", pid, err)
	}
	return f[0][0], pgrp, nil
}
