// Package server is the live scheduler's server: one goroutine (the Loop)
// owns the core (the folded state and the runtime.Scheduler) and the only
// writer of the event log; API handlers and agents send it requests.
//
// Durable before visible (docs/daemon.md): the loop takes the requests that
// are waiting, checks and applies each in order, appends their events to
// the log in one call (one fsync for the whole batch: group commit), and
// only then answers the callers, lets readers see the new state and tells
// agents to start or kill anything. A cycle's decisions are one event,
// appended before any agent hears of them. If an append fails the loop
// stops with the error: the state in memory is then ahead of the log, and a
// restart rebuilds it from the log.
package server

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/xce-sched/xce/cluster"
	"github.com/xce-sched/xce/internal/event"
	"github.com/xce-sched/xce/internal/live"
	"github.com/xce-sched/xce/internal/state"
)

// Log is where the loop appends events: the store (internal/store). Append
// returns once the events are durable, with the indexes they got.
type Log interface {
	Append(ctx context.Context, events ...event.Event) ([]uint64, error)
}

// Snapshotter is a log that keeps snapshots of the state (the store).
type Snapshotter interface {
	SaveSnapshot(index uint64, data []byte) error
}

// Dispatch is told what the agents must do once it is durable: start the
// placements of a cycle (with each job's request), kill jobs.
type Dispatch interface {
	Start(p event.Placement, sub *event.Submit)
	Kill(job event.JobID, attempt int, host string)
	// Suspend stops attempt attempt of job where it runs (SIGSTOP;
	// preemption), Resume continues it (SIGCONT); host is its first.
	Suspend(job event.JobID, attempt int, host string)
	Resume(job event.JobID, attempt int, host string)
}

// Observer is told what the loop did, for metrics and live views (the
// dashboard's Server-Sent Events). Its methods are called by the loop's
// goroutine after the loop's lock is released, in the order things
// happened; they must return quickly and never block (hand the work to
// another goroutine through a bounded buffer, dropping when it is full),
// and must not call the loop.
type Observer interface {
	// Applied: events were appended durably and applied to the state, in
	// order (a batch of requests, or one cycle's decisions).
	Applied(events []event.Event)
	// Cycled: a scheduling cycle ran; d is how long the scheduler took
	// to decide (Core.Cycle, without the append), started how many jobs
	// it started (0 also when it decided nothing new).
	Cycled(d time.Duration, started int)
}

// Observers is an Observer that tells each of its members in turn.
type Observers []Observer

// Applied implements Observer.
func (obs Observers) Applied(events []event.Event) {
	for _, o := range obs {
		o.Applied(events)
	}
}

// Cycled implements Observer.
func (obs Observers) Cycled(d time.Duration, started int) {
	for _, o := range obs {
		o.Cycled(d, started)
	}
}

// ErrStopped is returned to requests the loop did not take because it
// stopped (shut down, or its log failed).
var ErrStopped = errors.New("the server is stopping")

// Loop serializes every change of one live cluster.
type Loop struct {
	core     *live.Core
	log      Log
	dispatch Dispatch
	interval time.Duration // the least time between cycles
	now      func() int64  // Unix nanoseconds

	// Observer, when set before Run (and Before), is told of every
	// durable batch and every cycle.
	Observer Observer

	// SnapshotEvery: once this many events were folded since the last
	// snapshot, the loop saves one (when the log is a Snapshotter; 0:
	// never), so that a restart folds at most that many events.
	SnapshotEvery uint64
	snapAt        uint64 // the index of the last snapshot saved

	quiet atomic.Bool // Quiesce: no more cycles
	// server is the core's Server as of the last durable batch (Server).
	server atomic.Pointer[cluster.Server]
	done   chan struct{} // closed when Run has returned

	reqs chan *request
	// mu guards core: the loop holds it to write from the first change
	// of a batch until the batch is durable; readers (View) share it.
	mu sync.RWMutex
}

// request is one change asked of the loop: make builds its events from
// the state as it is when the loop takes it (a submit's job ID, for
// instance), or fails (the request is refused, nothing stored).
type request struct {
	make  func(st *state.State, now int64) ([]event.Event, error)
	reply chan reply
}

type reply struct {
	events []event.Event // as applied, with their indexes
	err    error
}

// NewLoop returns a loop over core, appending to log, telling dispatch
// what to do, with at least interval between two cycles and now as its
// clock (Unix nanoseconds).
func NewLoop(core *live.Core, log Log, dispatch Dispatch, interval time.Duration, now func() int64) *Loop {
	l := &Loop{core: core, log: log, dispatch: dispatch, interval: interval, now: now, reqs: make(chan *request, 1024), done: make(chan struct{})}
	l.server.Store(core.Server)
	return l
}

// Server returns the server section of the configuration in force
// (live.Core.Server) as of the last durable batch: a reloaded
// configuration's (xce reconfig) once its event is durable, before the
// request that reloaded it is answered. Nil when the core has none (or l
// is nil). It takes no lock: any goroutine may call it, a request's make
// included.
func (l *Loop) Server() *cluster.Server {
	if l == nil {
		return nil
	}
	return l.server.Load()
}

// Do asks the loop for a change: make builds its events from the current
// state (an error refuses it and nothing is stored). Do returns the
// events once they are durable and applied, with their indexes; or the
// error that refused them; or ErrStopped when the loop has stopped (also
// for a request sent after it stopped); or ctx's error if ctx ends before
// the loop took the request (after that, the answer is awaited: the
// change may already be durable).
func (l *Loop) Do(ctx context.Context, make func(st *state.State, now int64) ([]event.Event, error)) ([]event.Event, error) {
	r := &request{make: make, reply: make1()}
	if err := l.send(ctx, r); err != nil {
		return nil, err
	}
	return l.await(r)
}

// DoEach asks the loop for several changes that stand alone, in order:
// makes[i] builds its events from the state as the changes before it left
// it, and is applied or refused on its own, as by Do. The requests are
// sent one after the other without waiting, so the loop usually takes
// them in one batch, with one sync (an agent's reports of starts and ends:
// a start and the end of the same attempt may come together). It returns,
// for each make, the events applied and the error, as Do would; once ctx
// ends, the requests not yet sent get ctx's error and the others are
// awaited.
func (l *Loop) DoEach(ctx context.Context, makes []func(st *state.State, now int64) ([]event.Event, error)) ([][]event.Event, []error) {
	events, errs := make([][]event.Event, len(makes)), make([]error, len(makes))
	reqs := make([]*request, len(makes))
	for i, mk := range makes {
		reqs[i] = &request{make: mk, reply: make1()}
		if errs[i] = l.send(ctx, reqs[i]); errs[i] != nil {
			reqs[i] = nil
		}
	}
	for i, r := range reqs {
		if r != nil {
			events[i], errs[i] = l.await(r)
		}
	}
	return events, errs
}

// Before applies one request as Do would, durably, without the loop
// running: for what must be in the log before anything else a run does
// (the configuration in force, the server's start), since once Run runs
// requests and cycles may come first. It must not be called once Run was.
func (l *Loop) Before(ctx context.Context, make func(st *state.State, now int64) ([]event.Event, error)) ([]event.Event, error) {
	r := &request{make: make, reply: make1()}
	applied, err := l.serve(ctx, []*request{r})
	if err != nil {
		return nil, err
	}
	l.applied(applied)
	rep := <-r.reply
	return rep.events, rep.err
}

// send hands r to the loop.
func (l *Loop) send(ctx context.Context, r *request) error {
	select {
	case l.reqs <- r:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-l.done:
		return ErrStopped
	}
}

// await returns the loop's answer to r, which it was sent.
func (l *Loop) await(r *request) ([]event.Event, error) {
	select {
	case rep := <-r.reply:
		return rep.events, rep.err
	case <-l.done:
		// The loop stopped: it answered the request, or never took it.
		select {
		case rep := <-r.reply:
			return rep.events, rep.err
		default:
			return nil, ErrStopped
		}
	}
}

func make1() chan reply { return make(chan reply, 1) }

// View runs fn on the state and core as they are between batches: fn
// sees only durable changes, and must not keep or modify what it reads.
func (l *Loop) View(fn func(k *live.Core)) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	fn(l.core)
}

// Run serves requests and runs cycles until ctx ends (it returns nil) or
// the log fails (it returns the error). Requests still waiting get
// ErrStopped.
func (l *Loop) Run(ctx context.Context) error {
	defer close(l.done)
	defer l.drain()
	var last int64   // the last cycle's time
	dirty := true    // something changed since the last cycle
	const idle = 1e9 // a cycle at least this often (ns): reservations come due, estimates pass
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case r := <-l.reqs:
			batch := []*request{r}
			for len(batch) < cap(l.reqs) {
				select {
				case r := <-l.reqs:
					batch = append(batch, r)
					continue
				default:
				}
				break
			}
			applied, err := l.serve(ctx, batch)
			if err != nil {
				return err
			}
			l.applied(applied)
			dirty = dirty || len(applied) > 0
		case <-timer.C:
		}
		now := l.now()
		wait := time.Duration(last + int64(l.interval) - now)
		if !dirty {
			wait = time.Duration(last + idle - now)
		}
		if wait > 0 {
			timer.Reset(wait)
			continue
		}
		if l.quiet.Load() || l.waiting() == 0 {
			// Nothing to place: no cycle (the next submit may then be
			// placed at once).
			dirty = false
			timer.Reset(time.Duration(idle))
			continue
		}
		if err := l.cycle(ctx, now); err != nil {
			return err
		}
		last, dirty = now, false
		timer.Reset(time.Duration(idle))
	}
}

// applied tells the observer, if any, of events made durable.
func (l *Loop) applied(events []event.Event) {
	if l.Observer != nil && len(events) > 0 {
		l.Observer.Applied(events)
	}
}

// serve builds, checks and applies the events of a batch of requests in
// order, appends them in one call, then answers; it returns the events
// applied. A request whose events are refused is answered with the error
// and takes no part.
func (l *Loop) serve(ctx context.Context, batch []*request) (applied []event.Event, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	k := l.core
	now := l.now()
	var all []event.Event
	replies := make([]reply, len(batch))
	for i, r := range batch {
		evs, err := r.make(k.State, now)
		if err == nil {
			err = k.Precheck(evs)
		}
		if err != nil {
			replies[i].err = err
			continue
		}
		for j := range evs {
			evs[j].Index, evs[j].At = k.State.Index+1, now
			if err := k.Apply(evs[j]); err != nil {
				if j == 0 {
					replies[i].err = err // refused: nothing of it applied
					break
				}
				// Precheck passed all of them: this is a bug, and what
				// was applied cannot be taken back.
				return nil, fmt.Errorf("request partly applied: %w", err)
			}
		}
		if replies[i].err == nil {
			replies[i].events = evs
			all = append(all, evs...)
		}
	}
	if len(all) > 0 {
		idx, err := l.log.Append(context.WithoutCancel(ctx), all...)
		if err != nil {
			for _, r := range batch {
				r.reply <- reply{err: ErrStopped}
			}
			return nil, fmt.Errorf("append to the event log: %w", err)
		}
		if len(idx) != len(all) || idx[0] != all[0].Index {
			return nil, fmt.Errorf("the event log gave indexes %v, the state expected %d on", idx, all[0].Index)
		}
	}
	l.server.Store(k.Server) // durable: a reloaded server section holds from now on
	for i, r := range batch {
		r.reply <- replies[i]
	}
	if err := l.snapshot(); err != nil {
		return nil, err
	}
	for _, e := range all {
		if e.Type == event.JobKilled {
			if j := k.State.Job(e.Killed.Job); j.State == state.Run || j.State == state.Susp {
				l.dispatch.Kill(j.Job, j.Attempt, j.Hosts[0].Host)
			}
		}
	}
	return all, nil
}

// cycle runs a scheduling cycle, makes its decisions durable, then tells
// the agents to start what it placed.
func (l *Loop) cycle(ctx context.Context, now int64) error {
	l.mu.Lock()
	k := l.core
	// A cycle is not cut short: its decisions are all appended, or none
	// (the loop stops between cycles).
	began := time.Now()
	e, record, err := k.Cycle(context.WithoutCancel(ctx), now)
	took := time.Since(began)
	if err == nil && record {
		var idx []uint64
		e.Index = k.State.Index + 1
		if idx, err = l.log.Append(context.WithoutCancel(ctx), e); err == nil {
			if idx[0] != e.Index {
				err = fmt.Errorf("the event log gave index %d, the state expected %d", idx[0], e.Index)
			} else {
				err = k.Commit(e)
			}
		}
	}
	if err == nil {
		err = l.snapshot()
	}
	l.mu.Unlock()
	if err != nil {
		return fmt.Errorf("cycle: %w", err)
	}
	if l.Observer != nil {
		started := 0
		if record {
			started = len(e.Cycle.Started)
		}
		l.Observer.Cycled(took, started)
	}
	if !record {
		return nil
	}
	l.applied([]event.Event{e})
	// Resumed first, then placed (they took back their room first), then
	// preempted, as the cycle decided them.
	for _, id := range e.Cycle.Resumed {
		if j := k.State.Job(id); j.State == state.Run {
			l.dispatch.Resume(id, j.Attempt, j.Hosts[0].Host)
		}
	}
	for _, p := range e.Cycle.Started {
		l.dispatch.Start(p, &k.State.Job(p.Job).Submit)
	}
	for _, p := range e.Cycle.Preempted {
		j := k.State.Job(p.Job)
		switch {
		case p.Action == event.PreemptSuspend && j.State == state.Susp:
			l.dispatch.Suspend(p.Job, p.Attempt, j.Hosts[0].Host)
		case p.Action == event.PreemptRequeue && j.Requeuing:
			l.dispatch.Kill(p.Job, p.Attempt, j.Hosts[0].Host)
		}
	}
	return nil
}

// snapshot saves the state when SnapshotEvery events were folded since
// the last snapshot. The caller holds the loop's lock (the state is as
// durable as its index says).
func (l *Loop) snapshot() error {
	st := l.core.State
	sn, ok := l.log.(Snapshotter)
	if !ok || l.SnapshotEvery == 0 || st.Index < l.snapAt+l.SnapshotEvery {
		return nil
	}
	data, err := st.Marshal()
	if err == nil {
		err = sn.SaveSnapshot(st.Index, data)
	}
	if err != nil {
		return fmt.Errorf("snapshot at %d: %w", st.Index, err)
	}
	l.snapAt = st.Index
	return nil
}

// Quiesce stops the loop's cycles for good: it goes on serving requests
// (an agent's reports of the jobs it kills while the server stops) but
// starts nothing more.
func (l *Loop) Quiesce() { l.quiet.Store(true) }

// waiting returns how many jobs wait for a cycle.
func (l *Loop) waiting() int {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.core.Sched.Waiting()
}

// drain answers the requests still waiting with ErrStopped.
func (l *Loop) drain() {
	for {
		select {
		case r := <-l.reqs:
			r.reply <- reply{err: ErrStopped}
		default:
			return
		}
	}
}
