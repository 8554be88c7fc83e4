//go:build linux

package launch

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// DefaultGrace is LSF's default JOB_TERMINATE_INTERVAL (lsb.params): the
// time a killed job has between SIGTERM and SIGKILL when the caller has no
// other figure.
const DefaultGrace = 10 * time.Second

// shell runs job scripts, and the commands lookCommand cannot resolve
// (or whose direct exec fails) through `exec "$@"`, so the command is
// looked up in the job's own PATH, as the job's user.
const shell = "/bin/sh"

// pollGroup is how often a killed job's process group is checked for
// survivors once its leader has exited, until its grace period ends.
const pollGroup = 100 * time.Millisecond

// Result is how a job's attempt ended.
type Result struct {
	// ExitCode is the command's exit status; for a command ended by a
	// signal, 128 plus the signal's number (the shell's $?), and Signal
	// names the signal ("SIGTERM"; "SIG" and the number for one without a
	// name). Signal is empty for a command that exited.
	ExitCode int
	Signal   string
	// Start is when the process was started; End when its exit was seen
	// (before any survivors of its process group were killed).
	Start, End time.Time
	// Killed: Kill was called before the command exited.
	Killed bool
	// Err is a failure of the launcher after the start: the status could
	// not be read (ExitCode is then -1) or the work directory not removed.
	Err error
}

// Process is a started job: the leader of its own session and process
// group, which every process the job forks joins unless it leaves it.
// Its methods may be called from any goroutine.
type Process struct {
	pid            int
	proc           *os.Process
	start          time.Time
	dir            string // work directory to remove; "" for a command
	viaShell       bool   // the command or script runs under /bin/sh
	stdout, stderr string

	killReq chan struct{} // Kill moved the deadline (buffer 1)
	done    chan struct{} // closed when result is set
	result  Result

	mu       sync.Mutex
	exited   bool      // the leader's exit was seen
	reaped   bool      // no signal may be sent any more
	killed   bool      // Kill was called before exited
	deadline time.Time // SIGKILL time set by Kill; zero when none
}

// Start starts attempt spec.Attempt of job spec.Job and returns at once.
// ctx bounds the start only: once the process runs, the job is
// independent of ctx and ends by itself or by Kill. Errors wrap
// ErrInvalid, ErrRoot, ErrIdentity, ErrOutput, ctx.Err(), or the failure
// to set up or exec the job (a working directory that is missing or that
// the user cannot enter wraps fs.ErrNotExist or fs.ErrPermission); after
// an error no process runs and no work directory is left. The process's
// stdin is /dev/null.
func Start(ctx context.Context, spec Spec) (*Process, error) {
	p, err := start(ctx, &spec, os.Geteuid(), os.Getegid(), osUserDB)
	if err != nil {
		return nil, fmt.Errorf("launch: job %d attempt %d: %w", spec.Job, spec.Attempt, err)
	}
	return p, nil
}

func start(ctx context.Context, s *Spec, euid, egid int, db userDB) (*Process, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := s.validate(); err != nil {
		return nil, err
	}
	id, err := resolveIdentity(s, euid, egid, db)
	if err != nil {
		return nil, err
	}
	stdout, stderr := s.outputPaths()
	outs, err := openOutputs(id, []output{
		{stdout, s.StdoutOverwrite},
		{stderr, s.StderrOverwrite},
	})
	if err != nil {
		return nil, fmt.Errorf("%w: as uid %d: %w", ErrOutput, id.uid, err)
	}
	defer closeFiles(outs)
	stdin, err := os.Open(os.DevNull)
	if err != nil {
		return nil, err
	}
	defer stdin.Close()

	env := s.jobEnv()
	viaShell := append([]string{shell, "-c", `exec "$@"`, "sh"}, s.Command...)
	path, argv := shell, viaShell
	var dir string
	if s.Script == "" {
		if p, ok := lookCommand(s.Command[0], env, s.Cwd); ok {
			path, argv = p, s.Command
		}
	} else {
		var script string
		dir, script, err = writeScript(s.WorkBase, s, id)
		if err != nil {
			return nil, err
		}
		argv = []string{shell, script}
	}
	removeDir := func() {
		if dir != "" {
			_ = os.RemoveAll(dir)
		}
	}
	if err := ctx.Err(); err != nil {
		removeDir()
		return nil, err
	}
	attr := &os.ProcAttr{
		Dir:   s.Cwd,
		Env:   env,
		Files: []*os.File{stdin, outs[0], outs[1]},
		Sys:   &syscall.SysProcAttr{Setsid: true, Credential: id.credential()},
	}
	proc, err := os.StartProcess(path, argv, attr)
	if err != nil && path != shell {
		// The direct exec failed (a file the user may not run, a script
		// without #!, a directory the user may not enter): the shell
		// gives its own answer, as it would have from the start.
		path = shell
		proc, err = os.StartProcess(path, viaShell, attr)
	}
	if err != nil {
		removeDir()
		return nil, fmt.Errorf("start: %w", err)
	}
	p := &Process{
		pid:      proc.Pid,
		proc:     proc,
		start:    time.Now(),
		dir:      dir,
		viaShell: path == shell,
		stdout:   stdout,
		stderr:   stderr,
		killReq:  make(chan struct{}, 1),
		done:     make(chan struct{}),
	}
	exited := make(chan error, 1)
	go p.watch(exited)
	go p.supervise(exited)
	return p, nil
}

// PID returns the job's process id, which is also its process group and
// session id.
func (p *Process) PID() int { return p.pid }

// Output returns the job's stdout and stderr paths, expanded and
// absolute (the same path twice when they share a file).
func (p *Process) Output() (stdout, stderr string) { return p.stdout, p.stderr }

// Done is closed when the job has ended and been reaped; Wait then
// returns at once.
func (p *Process) Done() <-chan struct{} { return p.done }

// Wait waits for the job to end and returns how it ended. The job has
// ended when its process has exited and has been reaped, after what was
// left of its process group was sent SIGKILL (at once, or, for a killed
// job, when its grace period ends or no other process of the group
// remains). Wait may be called any number of times, from any goroutine;
// the job is reaped whether or not anyone waits.
func (p *Process) Wait() Result {
	<-p.done
	return p.result
}

// Kill ends the job as LSF's bkill does, signalling its whole process
// group (kill(-pid)): SIGINT, then SIGTERM at once, then SIGKILL when
// grace has passed (at once for grace <= 0). It returns without waiting;
// Wait tells when the job has ended. Calling Kill again sends SIGINT and
// SIGTERM again and brings the SIGKILL forward if its grace ends sooner.
// After the job has been reaped Kill does nothing and returns nil; the
// error is a failing kill(2).
func (p *Process) Kill(grace time.Duration) error {
	grace = max(grace, 0)
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.reaped {
		return nil
	}
	if !p.exited {
		p.killed = true
	}
	var errs []error
	// SIGCONT last: a job stopped by preemption handles the others too.
	for _, sig := range []unix.Signal{unix.SIGINT, unix.SIGTERM, unix.SIGCONT} {
		errs = append(errs, p.signalLocked(sig))
	}
	if grace == 0 {
		errs = append(errs, p.signalLocked(unix.SIGKILL))
	}
	if d := time.Now().Add(grace); p.deadline.IsZero() || d.Before(p.deadline) {
		p.deadline = d
		select {
		case p.killReq <- struct{}{}:
		default:
		}
	}
	return errors.Join(errs...)
}

// Suspend stops the job's whole process group (SIGSTOP), as LSF stops a
// preempted job; Resume continues it (SIGCONT). After the job has been
// reaped they do nothing and return nil; the error is a failing kill(2).
func (p *Process) Suspend() error { return p.signal(unix.SIGSTOP) }

// Resume continues a job Suspend stopped (SIGCONT to its process group).
func (p *Process) Resume() error { return p.signal(unix.SIGCONT) }

func (p *Process) signal(sig unix.Signal) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.reaped {
		return nil
	}
	return p.signalLocked(sig)
}

// signalLocked sends sig to the job's process group. p.mu is held and
// the leader is not reaped: while its zombie is kept, its pid cannot name
// another process group.
func (p *Process) signalLocked(sig unix.Signal) error {
	if err := unix.Kill(-p.pid, sig); err != nil {
		return fmt.Errorf("launch: kill -%s -%d: %w", unix.SignalName(sig), p.pid, err)
	}
	return nil
}

// watch waits for the leader to exit without reaping it (WNOWAIT), so its
// pid, which is the process group's id, stays taken until supervise has
// stopped signalling the group.
func (p *Process) watch(exited chan<- error) {
	var info unix.Siginfo
	for {
		err := unix.Waitid(unix.P_PID, p.pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		exited <- err
		return
	}
}

// supervise runs the job's end: it sends a pending kill's SIGKILL when
// its time comes, waits after the leader's exit for a pending kill's
// grace to end or the group to empty, kills what is left of the group,
// reaps the leader, removes the work directory and publishes the result.
func (p *Process) supervise(exited <-chan error) {
	var (
		armed    time.Time // the deadline the timer is set for
		timer    *time.Timer
		fire     <-chan time.Time
		poll     *time.Ticker
		pollC    <-chan time.Time
		killSent bool
		end      time.Time
		waitErr  error
		empty    bool // the leader gone, no other process of its group alive
	)
	defer func() {
		if timer != nil {
			timer.Stop()
		}
		if poll != nil {
			poll.Stop()
		}
	}()
	for {
		p.mu.Lock()
		deadline, gone := p.deadline, p.exited
		p.mu.Unlock()
		if !deadline.Equal(armed) && !killSent {
			if timer != nil {
				timer.Stop()
			}
			timer = time.NewTimer(time.Until(deadline))
			fire, armed = timer.C, deadline
		}
		if gone && (deadline.IsZero() || killSent || empty || waitErr != nil) {
			break
		}
		if gone && poll == nil {
			poll = time.NewTicker(pollGroup)
			pollC = poll.C
		}
		select {
		case waitErr = <-exited:
			end = time.Now()
			exited = nil
			p.mu.Lock()
			p.exited = true
			p.mu.Unlock()
		case <-p.killReq:
		case <-fire:
			p.mu.Lock()
			_ = p.signalLocked(unix.SIGKILL)
			p.mu.Unlock()
			killSent, fire = true, nil
		case <-pollC:
			alive, err := groupAlive(p.pid, p.pid)
			empty = err == nil && !alive
		}
	}
	p.mu.Lock()
	if waitErr == nil {
		_ = p.signalLocked(unix.SIGKILL) // what is left of the group
	}
	p.reaped = true
	killed := p.killed
	p.mu.Unlock()

	r := Result{ExitCode: -1, Start: p.start, End: end, Killed: killed}
	state, err := p.proc.Wait()
	switch {
	case err != nil:
		r.Err = errors.Join(waitErr, fmt.Errorf("launch: wait for %d: %w", p.pid, err))
	case waitErr != nil:
		r.Err = fmt.Errorf("launch: waitid %d: %w", p.pid, waitErr)
		fallthrough
	default:
		ws, _ := state.Sys().(syscall.WaitStatus)
		switch {
		case ws.Exited():
			r.ExitCode = ws.ExitStatus()
		case ws.Signaled():
			sig := ws.Signal()
			r.ExitCode = 128 + int(sig)
			r.Signal = signalName(sig)
		}
	}
	if r.End.IsZero() {
		r.End = time.Now()
	}
	if p.dir != "" {
		if err := os.RemoveAll(p.dir); err != nil {
			r.Err = errors.Join(r.Err, fmt.Errorf("launch: remove work directory: %w", err))
		}
	}
	p.result = r
	close(p.done)
}

// signalName names sig as "SIGTERM", or "SIG" and its number when it has
// no name (real-time signals).
func signalName(sig syscall.Signal) string {
	if name := unix.SignalName(sig); name != "" {
		return name
	}
	return fmt.Sprintf("SIG%d", int(sig))
}
