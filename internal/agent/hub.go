package agent

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/xce-sched/xce/internal/event"
	"github.com/xce-sched/xce/internal/state"
)

// Errors of the Hub's methods, wrapped; the API turns them into statuses.
var (
	// ErrUnknownHost: the name is not a host of the configuration (404).
	ErrUnknownHost = errors.New("not a host of the cluster's configuration")
	// ErrRegister: the session is not known (the server restarted, or the
	// host was lost): the agent must register again (410).
	ErrRegister = errors.New("not registered: register again")
	// ErrSuperseded: another agent registered for the host since (409).
	ErrSuperseded = errors.New("another agent registered for this host")
)

// MaxWait is the longest a poll is held when no order comes.
const MaxWait = 20 * time.Second

// HubOptions configure a Hub.
type HubOptions struct {
	// Hosts are the configuration's host names: only they may register.
	Hosts []string
	// Do applies events through the server loop (its Do), DoEach several
	// requests that stand alone (its DoEach; nil: one Do after the
	// other); View reads the state between batches (through the loop's
	// View).
	Do     Reporter
	DoEach func(ctx context.Context, makes []Make) ([][]event.Event, []error)
	View   func(fn func(st *state.State))
	// HeartbeatTimeout: an agent that has not polled for this long loses
	// its host. KillGrace goes in kill orders. AllowRoot in start orders.
	HeartbeatTimeout time.Duration
	KillGrace        time.Duration
	AllowRoot        bool
	// AllowRootNow, when set, is asked at each start order instead of
	// AllowRoot: the allow_root_jobs in force, which xce reconfig
	// changes (the server loop's Server).
	AllowRootNow func() bool
	// Fence, when set (a replicated control plane's leader), returns the
	// raft term of the leader and the raft index of the entry it appended
	// last; every order carries them (Order.Term, Order.Index). Nil: 0.
	Fence func() (term, index uint64)
	// Now is the clock (time.Now when nil). Logf, when set, logs hosts
	// registered and lost.
	Now  func() time.Time
	Logf func(format string, args ...any)
}

// Hub is the server's side of the remote agents: a server.Dispatch that
// queues start and kill orders for each host's agent (never blocking the
// loop), the registrations with their reconciliation, the polls and
// reports the API hands it, and the heartbeat monitor (Monitor).
//
// Orders live in the host's session: a start order until the agent
// reports the attempt started or finished, a kill order until it reports
// it finished. A poll returns the orders after the highest sequence number
// the agent has seen, so a dropped answer loses nothing. A new session
// (a registration) starts from what Reconcile makes of the state.
type Hub struct {
	o HubOptions

	mu    sync.Mutex // guards the hosts' sessions; never held while calling Do or View
	hosts map[string]*host
}

type host struct {
	op sync.Mutex // serializes this host's registrations and loss (held across Do)

	// Guarded by Hub.mu.
	session  string // "" when no agent is registered in this run of the server
	seq      uint64
	orders   []Order
	lastSeen time.Time
	watched  bool          // the monitor may lose it: registered, or up in the log
	wake     chan struct{} // closed when an order comes or the session ends
}

// NewHub returns a hub for the hosts of o.
func NewHub(o HubOptions) *Hub {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logf == nil {
		o.Logf = func(string, ...any) {}
	}
	h := &Hub{o: o, hosts: map[string]*host{}}
	for _, n := range o.Hosts {
		h.hosts[n] = &host{wake: make(chan struct{})}
	}
	return h
}

// allowRoot reports whether root's jobs may run now (HubOptions).
func (h *Hub) allowRoot() bool {
	if h.o.AllowRootNow != nil {
		return h.o.AllowRootNow()
	}
	return h.o.AllowRoot
}

// wakeLocked wakes the polls of e. h.mu is held.
func (e *host) wakeLocked() {
	close(e.wake)
	e.wake = make(chan struct{})
}

// addLocked queues o unless an order of the same kind for the same
// attempt is queued already. h.mu is held.
func (e *host) addLocked(o Order) {
	if o.Kind == KindSuspend || o.Kind == KindResume {
		// Only the latest of an attempt's suspends and resumes counts: an
		// agent that saw the earlier ones carried them out, one that did
		// not needs only this one.
		e.orders = slices.DeleteFunc(e.orders, func(x Order) bool {
			return (x.Kind == KindSuspend || x.Kind == KindResume) && x.Job == o.Job && x.Attempt == o.Attempt
		})
	} else if slices.ContainsFunc(e.orders, func(x Order) bool { return x.Kind == o.Kind && x.Job == o.Job && x.Attempt == o.Attempt }) {
		return
	}
	e.seq++
	o.Seq = e.seq
	e.orders = append(e.orders, o)
	e.wakeLocked()
}

// Start implements server.Dispatch: it queues the start of p on its
// first host's agent. Without a registered agent it does nothing: the
// agent's registration starts what it has not got (Reconcile).
func (h *Hub) Start(p event.Placement, sub *event.Submit) {
	h.queue(p.Hosts[0].Host, StartOrder(p.Job, p.Attempt, sub, p.Hosts, h.allowRoot()))
}

// Kill implements server.Dispatch: it queues a kill of the attempt on the
// agent of its first host. Without a registered agent it does nothing:
// the registration kills it (the state knows it was killed).
func (h *Hub) Kill(job event.JobID, attempt int, first string) {
	h.queue(first, Order{Kind: KindKill, Job: job, Attempt: attempt, GraceMS: h.o.KillGrace.Milliseconds()})
}

// Suspend implements server.Dispatch: it queues a suspend of the attempt
// on the agent of its first host (registration suspends it otherwise).
func (h *Hub) Suspend(job event.JobID, attempt int, first string) {
	h.queue(first, Order{Kind: KindSuspend, Job: job, Attempt: attempt})
}

// Resume implements server.Dispatch: it queues a resume of the attempt.
func (h *Hub) Resume(job event.JobID, attempt int, first string) {
	h.queue(first, Order{Kind: KindResume, Job: job, Attempt: attempt})
}

// stamp returns o with the fence's term and index (Order.Term).
func (h *Hub) stamp(o Order) Order {
	if h.o.Fence != nil {
		o.Term, o.Index = h.o.Fence()
	}
	return o
}

func (h *Hub) queue(name string, o Order) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if e := h.hosts[name]; e != nil && e.session != "" {
		e.addLocked(h.stamp(o))
	}
}

// sessionLocked returns the host entry of name when session is its current
// session, marking it seen. h.mu is held.
func (h *Hub) sessionLocked(name, session string) (*host, error) {
	e := h.hosts[name]
	switch {
	case e == nil:
		return nil, fmt.Errorf("host %q: %w", name, ErrUnknownHost)
	case e.session == "":
		return nil, fmt.Errorf("host %q: %w", name, ErrRegister)
	case e.session != session:
		return nil, fmt.Errorf("host %q: %w", name, ErrSuperseded)
	}
	e.lastSeen = h.o.Now()
	return e, nil
}

// Heartbeats returns, for each host whose agent has a session in this
// run of the server, when the hub last heard from it: its registration,
// or the start of its latest poll or report (what the heartbeat monitor
// measures the timeout from). Hosts without a session are absent.
func (h *Hub) Heartbeats() map[string]time.Time {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make(map[string]time.Time, len(h.hosts))
	for name, e := range h.hosts {
		if e.session != "" {
			out[name] = e.lastSeen
		}
	}
	return out
}

// Register registers the agent of req.Name (it must be valid: Validate)
// in a new session, replacing any earlier one, records the host as
// registered, applies what Reconcile makes of the agent's list, and
// returns the session and the orders to carry out at once.
func (h *Hub) Register(ctx context.Context, req *RegisterRequest) (RegisterReply, error) {
	h.mu.Lock()
	e := h.hosts[req.Name]
	h.mu.Unlock()
	if e == nil {
		return RegisterReply{}, fmt.Errorf("host %q: %w", req.Name, ErrUnknownHost)
	}
	e.op.Lock()
	defer e.op.Unlock()
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	session := hex.EncodeToString(b)
	h.mu.Lock()
	if e.session != "" {
		e.wakeLocked() // the old session's polls end
	}
	e.session, e.seq, e.orders, e.lastSeen, e.watched = session, 0, nil, h.o.Now(), true
	h.mu.Unlock()

	if _, err := h.o.Do(ctx, func(*state.State, int64) ([]event.Event, error) {
		return []event.Event{{Type: event.HostRegistered, Host: &event.Host{Name: req.Name}}}, nil
	}); err != nil {
		h.endSession(e, session)
		return RegisterReply{}, fmt.Errorf("register %s: %w", req.Name, err)
	}
	var plan Plan
	h.o.View(func(st *state.State) {
		plan = Reconcile(st, req.Name, req, h.o.KillGrace.Milliseconds(), h.allowRoot())
	})
	h.mu.Lock()
	for _, o := range plan.Orders {
		e.addLocked(h.stamp(o))
	}
	h.mu.Unlock()
	for _, ev := range plan.Events {
		if _, err := h.apply(ctx, req.Name, ev); err != nil {
			h.endSession(e, session)
			return RegisterReply{}, fmt.Errorf("register %s: %w", req.Name, err)
		}
		if ev.Type == event.JobFinished {
			h.done(e, ev.Finished.Job, ev.Finished.Attempt, true)
		}
	}
	h.o.Logf("host %s registered: %d running, %d ended, %d events, %d orders", req.Name, len(req.Running), len(req.Finished), len(plan.Events), len(plan.Orders))
	h.mu.Lock()
	defer h.mu.Unlock()
	if e.session != session {
		return RegisterReply{}, fmt.Errorf("host %q: %w", req.Name, ErrSuperseded)
	}
	return RegisterReply{Session: session, Orders: slices.Clone(e.orders), Term: h.stamp(Order{}).Term,
		HeartbeatMS: h.o.HeartbeatTimeout.Milliseconds(), KillGraceMS: h.o.KillGrace.Milliseconds()}, nil
}

// endSession drops session of e if it is still the current one.
func (h *Hub) endSession(e *host, session string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if e.session == session {
		e.session, e.orders = "", nil
		e.wakeLocked()
	}
}

// apply applies ev, an event about host's agent or its jobs, through the
// loop if the state then still takes it (a report, or a reconciliation,
// may come after the attempt ended another way); it returns whether it
// was applied. A finish is taken only for a job whose first host is host,
// and is requeued only when the job is rerunnable and was not killed.
//
// A finish that asks for a requeue requeues a rerunnable job that no user
// killed; with unstarted, also one whose attempt never started (the agent
// that left cleanly never ran it, so it cannot run twice).
func (h *Hub) apply(ctx context.Context, host string, ev event.Event, unstarted ...bool) (bool, error) {
	evs, err := h.o.Do(ctx, h.maker(host, ev, unstarted...))
	return len(evs) > 0, err
}

// maker returns the request that applies ev, as apply says.
func (h *Hub) maker(host string, ev event.Event, unstarted ...bool) Make {
	return func(st *state.State, _ int64) ([]event.Event, error) {
		e := ev
		if e.Type == event.JobFinished {
			f := *e.Finished
			j := st.Job(f.Job)
			if j == nil || len(j.Hosts) == 0 || j.Hosts[0].Host != host {
				return nil, nil
			}
			never := len(unstarted) > 0 && unstarted[0] && j.PID == 0
			f.Requeued = f.Requeued && (j.Rerunnable || never) && j.KilledBy == ""
			e.Finished = &f
		}
		probe := e
		probe.Index = st.Index + 1
		if st.Check(probe) != nil {
			return nil, nil
		}
		return []event.Event{e}, nil
	}
}

// done drops the orders for an attempt the agent reported: its start
// order, and with finished its kill order too.
func (h *Hub) done(e *host, job event.JobID, attempt int, finished bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	e.orders = slices.DeleteFunc(e.orders, func(o Order) bool {
		return o.Job == job && o.Attempt == attempt && (finished || o.Kind == KindStart)
	})
}

// Poll returns the orders of the session after sequence number after,
// waiting up to wait (at most MaxWait and a third of the heartbeat
// timeout) for one to come. Each poll is a heartbeat.
func (h *Hub) Poll(ctx context.Context, name, session string, after uint64, wait time.Duration) ([]Order, error) {
	wait = min(wait, MaxWait, h.o.HeartbeatTimeout/3)
	timer := time.NewTimer(wait)
	defer timer.Stop()
	for {
		h.mu.Lock()
		e, err := h.sessionLocked(name, session)
		if err != nil {
			h.mu.Unlock()
			return nil, err
		}
		var out []Order
		for _, o := range e.orders {
			if o.Seq > after {
				out = append(out, o)
			}
		}
		wake := e.wake
		h.mu.Unlock()
		if len(out) > 0 {
			return out, nil
		}
		select {
		case <-wake:
		case <-timer.C:
			return nil, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// Report applies an agent's reports (valid: Validate) of starts and
// ends, in order, each on its own if its attempt is current on the
// agent's host; it returns, for each, whether the state changed. The
// reports go to the loop together (HubOptions.DoEach), so they usually
// share one sync. A report is a heartbeat too.
func (h *Hub) Report(ctx context.Context, req *ReportRequest) ([]bool, error) {
	h.mu.Lock()
	e, err := h.sessionLocked(req.Name, req.Session)
	h.mu.Unlock()
	if err != nil {
		return nil, err
	}
	makes := make([]Make, len(req.Reports))
	for i, r := range req.Reports {
		ev := event.Event{Type: event.JobStarted, Started: &event.Started{Job: r.Job, Attempt: r.Attempt, Host: req.Name, PID: r.PID}}
		if r.Kind == KindFinished {
			fin := &event.Finished{Job: r.Job, Attempt: r.Attempt, ExitCode: r.ExitCode, Signal: r.Signal, Reason: r.Reason, Requeued: r.Lost}
			if r.Lost && fin.Reason == "" {
				fin.Reason = ReasonLostByAgent
			}
			ev = event.Event{Type: event.JobFinished, Finished: fin}
		}
		// An attempt the agent never started and lost (it was stopping)
		// goes back to pending whatever the job: it cannot have run.
		makes[i] = h.maker(req.Name, ev, r.Kind == KindFinished && r.Lost && r.Unstarted)
	}
	applied := make([]bool, len(makes))
	var errs []error
	if h.o.DoEach != nil {
		var evs [][]event.Event
		evs, errs = h.o.DoEach(ctx, makes)
		for i := range evs {
			applied[i] = len(evs[i]) > 0
		}
	} else {
		errs = make([]error, len(makes))
		for i, mk := range makes {
			var evs []event.Event
			evs, errs[i] = h.o.Do(ctx, mk)
			applied[i] = len(evs) > 0
		}
	}
	for i, r := range req.Reports {
		if errs[i] != nil {
			// Not taken (the server stops): the agent sends it again,
			// with those after it.
			return nil, errs[i]
		}
		h.done(e, r.Job, r.Attempt, r.Kind == KindFinished)
	}
	return applied, nil
}

// Leave ends the session of an agent that stops (after it reported the
// ends of its jobs): its host is unavail at once, not after the heartbeat
// timeout, and a job whose command still runs there by the state (its
// start order was not carried out) ends or is requeued as for a lost
// host, with ReasonAgentStopped.
//
// With draining, the agent is only about to stop: its host is made
// unavail (a host.lost event) so that no job is placed there while it
// kills its jobs and reports their ends, but the session stays for those
// reports, and nothing else is ended.
func (h *Hub) Leave(ctx context.Context, name, session string, draining bool) error {
	h.mu.Lock()
	_, err := h.sessionLocked(name, session)
	h.mu.Unlock()
	if err != nil {
		return err
	}
	if draining {
		_, err := h.o.Do(ctx, func(*state.State, int64) ([]event.Event, error) {
			return []event.Event{{Type: event.HostLost, Host: &event.Host{Name: name, Reason: ReasonAgentStopping}}}, nil
		})
		return err
	}
	h.mu.Lock()
	e, err := h.sessionLocked(name, session)
	h.mu.Unlock()
	if err != nil {
		return err
	}
	e.op.Lock()
	defer e.op.Unlock()
	h.mu.Lock()
	if e.session != session {
		h.mu.Unlock()
		return fmt.Errorf("host %q: %w", name, ErrSuperseded)
	}
	e.watched, e.session, e.orders = false, "", nil
	e.wakeLocked()
	h.mu.Unlock()
	return h.down(ctx, name, ReasonAgentStopped, ReasonAgentStopped, true)
}

// Monitor loses the hosts whose agents stopped polling, until ctx ends.
// A host the log says is up is watched from the monitor's start, so an
// agent that does not come back after the server restarted loses its
// host too; a host the log says is down but still runs jobs has them
// ended at the start (an earlier run stopped while losing it).
func (h *Hub) Monitor(ctx context.Context) {
	up := map[string]bool{}
	h.o.View(func(st *state.State) {
		for _, s := range st.Hosts {
			up[s.Name] = s.Up
		}
	})
	now := h.o.Now()
	h.mu.Lock()
	for name, e := range h.hosts {
		if up[name] && e.session == "" {
			e.watched, e.lastSeen = true, now
		}
	}
	h.mu.Unlock()
	for name, e := range h.hosts {
		// Under the host's op lock, as a registration is: a host whose
		// agent registered meanwhile is up, and keeps its jobs.
		e.op.Lock()
		down := false
		h.o.View(func(st *state.State) { s := st.Host(name); down = s == nil || !s.Up })
		if down {
			if err := h.endJobs(ctx, name, ReasonHostLost, false); err != nil {
				h.o.Logf("host %s: %v", name, err)
			}
		}
		e.op.Unlock()
	}
	tick := min(max(h.o.HeartbeatTimeout/4, 5*time.Millisecond), time.Second)
	t := time.NewTicker(tick)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		var late []string
		now := h.o.Now()
		h.mu.Lock()
		for name, e := range h.hosts {
			if e.watched && now.Sub(e.lastSeen) > h.o.HeartbeatTimeout {
				late = append(late, name)
			}
		}
		h.mu.Unlock()
		for _, name := range late {
			h.lose(ctx, name)
		}
	}
}

// lose makes host name unavail if its agent is still late, and ends or
// requeues the jobs whose command ran there.
func (h *Hub) lose(ctx context.Context, name string) {
	e := h.hosts[name]
	e.op.Lock()
	defer e.op.Unlock()
	h.mu.Lock()
	since := h.o.Now().Sub(e.lastSeen)
	if !e.watched || since <= h.o.HeartbeatTimeout {
		h.mu.Unlock()
		return // it registered meanwhile
	}
	e.watched, e.session, e.orders = false, "", nil
	e.wakeLocked()
	h.mu.Unlock()
	if err := h.down(ctx, name, fmt.Sprintf("no heartbeat for %v", since.Round(time.Millisecond)), ReasonHostLost, false); err != nil {
		h.o.Logf("host %s: %v", name, err)
	}
}

// down records host name as lost for reason, then ends its jobs for
// jobReason (endJobs).
func (h *Hub) down(ctx context.Context, name, reason, jobReason string, clean bool) error {
	if _, err := h.o.Do(ctx, func(st *state.State, _ int64) ([]event.Event, error) {
		if s := st.Host(name); s == nil || !s.Up {
			return nil, nil
		}
		return []event.Event{{Type: event.HostLost, Host: &event.Host{Name: name, Reason: reason}}}, nil
	}); err != nil {
		return err
	}
	h.o.Logf("host %s lost: %s", name, reason)
	return h.endJobs(ctx, name, jobReason, clean)
}

// endJobs ends every job whose command runs on host name (its first
// host): EXIT for reason, or back to pending when rerunnable and not
// killed — or, when its agent left cleanly (clean), when the attempt never
// started. The other hosts of a parallel job only hold its slots: losing
// one does not end it.
func (h *Hub) endJobs(ctx context.Context, name, reason string, clean bool) error {
	var ends []event.Event
	h.o.View(func(st *state.State) {
		for _, j := range st.Jobs {
			if j.State == state.Run && len(j.Hosts) > 0 && j.Hosts[0].Host == name {
				ends = append(ends, event.Event{Type: event.JobFinished, Finished: &event.Finished{Job: j.Job, Attempt: j.Attempt,
					ExitCode: -1, Reason: reason, Requeued: true}})
			}
		}
	})
	for _, ev := range ends {
		if _, err := h.apply(ctx, name, ev, clean); err != nil {
			return fmt.Errorf("job %d: %w", ev.Finished.Job, err)
		}
	}
	return nil
}
