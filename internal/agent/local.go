// Package agent runs the jobs the server places on a host and reports
// their starts and ends back as events. Local is the agent inside the
// server's own process (`xce serve --dev`, and the tests): it gets its
// orders straight from the loop and reports through it. Remote is the
// agent of one host in a process of its own (`xce agent`), and Hub the
// server's side of the remote agents, over the protocol of proto.go
// (docs/daemon.md, "Remote agents"; docs/api.md, "Agents").
package agent

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/xce-sched/xce/internal/event"
	"github.com/xce-sched/xce/internal/launch"
	"github.com/xce-sched/xce/internal/state"
)

// Make is a request to the server loop: it builds its events from the
// state (server.Loop.Do).
type Make = func(st *state.State, now int64) ([]event.Event, error)

// Reporter is how an agent reports: the server loop's Do.
type Reporter func(ctx context.Context, make Make) ([]event.Event, error)

// Local runs the jobs placed on the hosts it serves (every host, for a
// one-host dev cluster) in this process, through package launch. Its
// methods never block the loop that calls them: each job has its own
// goroutine, which reports the start (pid) and the end (exit code or
// signal) back through the reporter. Orders for a job attempt that is no
// longer current are dropped by the server's checks, so a repeated start
// or finish does nothing.
type Local struct {
	report    Reporter
	workBase  string
	grace     time.Duration
	allowRoot bool
	ctx       context.Context

	mu      sync.Mutex
	procs   map[key]*launch.Process
	killed  map[key]bool // kills that came before their process started
	stopped map[key]bool // suspends (true) and resumes (false) that came before it started
	wg      sync.WaitGroup
}

type key struct {
	job     event.JobID
	attempt int
}

// NewLocal returns an agent that reports through report, keeps job
// scripts under workBase, gives a killed job grace before SIGKILL, and
// runs root's jobs only with allowRoot. ctx bounds its reports.
func NewLocal(ctx context.Context, report Reporter, workBase string, grace time.Duration, allowRoot bool) *Local {
	return &Local{report: report, workBase: workBase, grace: grace, allowRoot: allowRoot, ctx: ctx, procs: map[key]*launch.Process{}, killed: map[key]bool{}, stopped: map[key]bool{}}
}

// Register reports that this agent serves host name.
func (a *Local) Register(name string) error {
	_, err := a.report(a.ctx, func(*state.State, int64) ([]event.Event, error) {
		return []event.Event{{Type: event.HostRegistered, Host: &event.Host{Name: name}}}, nil
	})
	return err
}

// Start runs attempt p.Attempt of job sub.Job in the background.
func (a *Local) Start(p event.Placement, sub *event.Submit) {
	spec := launch.FromEvents(sub, &p)
	spec.WorkBase, spec.AllowRoot = a.workBase, a.allowRoot
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		a.run(p, spec)
	}()
}

func (a *Local) run(p event.Placement, spec launch.Spec) {
	k := key{p.Job, p.Attempt}
	proc, err := launch.Start(a.ctx, spec)
	if err != nil {
		// It never ran: it ends EXIT, saying why.
		a.mu.Lock()
		delete(a.killed, k)
		a.mu.Unlock()
		a.finish(k, launch.Result{ExitCode: -1}, fmt.Sprintf("not started: %v", err))
		return
	}
	a.record(k, proc.PID())
	a.mu.Lock()
	a.procs[k] = proc
	if a.killed[k] {
		delete(a.killed, k)
		_ = proc.Kill(a.grace)
	} else if a.stopped[k] {
		_ = proc.Suspend()
	}
	delete(a.stopped, k)
	a.mu.Unlock()
	_, _ = a.report(a.ctx, func(*state.State, int64) ([]event.Event, error) {
		return []event.Event{{Type: event.JobStarted, Started: &event.Started{Job: p.Job, Attempt: p.Attempt, Host: p.Hosts[0].Host, PID: proc.PID()}}}, nil
	})
	res := proc.Wait()
	a.mu.Lock()
	delete(a.procs, k)
	a.mu.Unlock()
	a.forget(k)
	reason := ""
	if res.Killed {
		reason = "killed"
	}
	a.finish(k, res, reason)
}

// finish reports the end of an attempt; the server drops it when the
// attempt is no longer current.
func (a *Local) finish(k key, res launch.Result, reason string) {
	_, _ = a.report(a.ctx, func(*state.State, int64) ([]event.Event, error) {
		return []event.Event{{Type: event.JobFinished, Finished: &event.Finished{Job: k.job, Attempt: k.attempt,
			ExitCode: res.ExitCode, Signal: res.Signal, Reason: reason}}}, nil
	})
}

// Kill ends attempt attempt of job: SIGINT and SIGTERM to its process
// group, SIGKILL after the grace period (package launch).
func (a *Local) Kill(job event.JobID, attempt int, _ string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	k := key{job, attempt}
	if proc := a.procs[k]; proc != nil {
		_ = proc.Kill(a.grace)
	} else {
		a.killed[k] = true // its process is starting: killed once it has
	}
}

// Suspend stops attempt attempt of job (SIGSTOP to its process group);
// one whose process is starting is stopped once it has.
func (a *Local) Suspend(job event.JobID, attempt int, _ string) { a.signal(key{job, attempt}, true) }

// Resume continues attempt attempt of job (SIGCONT).
func (a *Local) Resume(job event.JobID, attempt int, _ string) { a.signal(key{job, attempt}, false) }

func (a *Local) signal(k key, stop bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	proc := a.procs[k]
	switch {
	case proc == nil:
		a.stopped[k] = stop
	case stop:
		_ = proc.Suspend()
	default:
		_ = proc.Resume()
	}
}

// The running file of a job records its leader's pid and start time
// (launch.ProcStart) while it runs, in workBase/running: should the
// server die without ending its jobs (SIGKILL), the next one kills what is
// left of them (KillLeftovers) instead of letting them run on unseen.

func (a *Local) runningFile(k key) string {
	return filepath.Join(a.workBase, "running", fmt.Sprintf("%d.%d", k.job, k.attempt))
}

// record writes the running file of attempt k, run by pid.
func (a *Local) record(k key, pid int) {
	start, err := launch.ProcStart(pid)
	if err != nil {
		return // it ended already
	}
	_ = os.MkdirAll(filepath.Dir(a.runningFile(k)), 0o700)
	_ = os.WriteFile(a.runningFile(k), []byte(fmt.Sprintf("%d %d\n", pid, start)), 0o600)
}

// forget removes the running file of attempt k.
func (a *Local) forget(k key) { _ = os.Remove(a.runningFile(k)) }

// KillLeftovers kills the process groups of the jobs an earlier run of
// this agent left running (its running files), waiting up to timeout for
// each, and removes the files. It returns how many groups it signalled.
func (a *Local) KillLeftovers(timeout time.Duration) (int, error) {
	dir := filepath.Join(a.workBase, "running")
	files, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	n := 0
	var errs []error
	for _, f := range files {
		path := filepath.Join(dir, f.Name())
		data, err := os.ReadFile(path)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		var pid int
		var start uint64
		if _, err := fmt.Sscanf(string(data), "%d %d", &pid, &start); err == nil {
			killed, err := launch.KillLeftover(pid, start, timeout)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			if killed {
				n++
			}
		}
		_ = os.Remove(path)
	}
	return n, errors.Join(errs...)
}

// Wait waits for every job this agent started to end and be reported
// (the caller kills them first, or lets them end).
func (a *Local) Wait() { a.wg.Wait() }

// KillAll kills every job this agent runs (the server is stopping).
func (a *Local) KillAll() {
	a.mu.Lock()
	procs := make([]*launch.Process, 0, len(a.procs))
	for _, p := range a.procs {
		procs = append(procs, p)
	}
	a.mu.Unlock()
	for _, p := range procs {
		_ = p.Kill(0)
	}
}
