package agent

import (
	"bytes"
	"cmp"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/xce-sched/xce/internal/event"
	"github.com/xce-sched/xce/internal/launch"
)

// RemoteOptions configure a remote agent.
type RemoteOptions struct {
	// Server is the server's agent address: host:port (plain HTTP), or a
	// URL, http:// or https://; or a comma-separated list of them, the
	// members of a replicated control plane (docs/ha.md): the agent talks
	// to one at a time and moves on to the next when it cannot reach it or
	// it is not the leader.
	Server string
	// Name is the host this agent serves, as the configuration names it;
	// Token the agent token (the server's DATA/agent.token).
	Name, Token string
	// Dir is the agent's own directory: its journal (jobs/), the job
	// scripts' work directories (work/) and its lock. Created 0711 when
	// missing; it must belong to the agent's user and be writable by it
	// alone.
	Dir string
	// TLS configures https:// (nil: the system's roots).
	TLS *tls.Config
	// Logf logs what the agent does (nothing when nil).
	Logf func(format string, args ...any)
}

// Remote is an agent on its own host (`xce agent`): it registers with
// the server, polls for orders (each poll is a heartbeat), runs each
// start order's attempt through package launch, kills on kill orders, and
// reports starts and ends. Its journal (in Dir) makes it carry out a
// start order once, whatever the server repeats, and tells a restarted
// agent what its earlier run left. When it stops it kills its jobs and
// reports them lost (the server requeues the rerunnable ones): its jobs
// are its children, and an agent that exits cannot wait for them any
// more.
type Remote struct {
	o     RemoteOptions
	bases []string     // the servers, one or a replicated control plane's members
	cur   atomic.Int32 // the index in bases of the one the agent talks to
	// term is the highest raft term seen in an order or a registration
	// (kept in Dir/term across restarts); 0 for a single server.
	term atomic.Uint64
	http *http.Client
	j    *journal
	lock *os.File
	wg   sync.WaitGroup // one per job

	// after is used by Run's goroutine only.
	after uint64
	// registeredC wakes the reporter when the agent has registered
	// (buffer 1).
	registeredC chan struct{}

	mu        sync.Mutex // guards session and heartbeat, shared with the reporter
	session   string     // "" when not registered
	heartbeat time.Duration
}

// sessionID returns the agent's session, "" when it is not registered.
func (r *Remote) sessionID() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.session
}

// dropSession forgets session, unless the agent registered again since.
func (r *Remote) dropSession(session string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.session == session {
		r.session = ""
	}
}

func (r *Remote) heartbeatTimeout() time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.heartbeat
}

// ErrRefused is what Run gives up with (wrapped): the server refused the
// agent's token, its host name or a request, or another agent took its
// host.
var ErrRefused = errors.New("the server refused the agent")

// NewRemote prepares an agent: it takes Dir (and its lock: one agent per
// directory), and ends what an earlier run of the agent left there (see
// journal.recover).
func NewRemote(o RemoteOptions) (*Remote, error) {
	if !validName(o.Name) {
		return nil, fmt.Errorf("agent: %q is not a host name", o.Name)
	}
	var bases []string
	for _, base := range strings.Split(o.Server, ",") {
		base = strings.TrimSpace(base)
		if !strings.Contains(base, "://") {
			base = "http://" + base
		}
		u, err := url.Parse(base)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("agent: server %q: want host:port or an http:// or https:// URL, or a comma-separated list of them", o.Server)
		}
		bases = append(bases, strings.TrimSuffix(u.String(), "/"))
	}
	if o.Logf == nil {
		o.Logf = func(string, ...any) {}
	}
	dir, err := filepath.Abs(o.Dir)
	if err != nil {
		return nil, err
	}
	o.Dir = dir
	lock, err := takeDir(dir)
	if err != nil {
		return nil, err
	}
	j, err := openJournal(filepath.Join(dir, "jobs"))
	if err == nil {
		var n int
		if n, err = j.recover(filepath.Join(dir, "work"), o.Logf); n > 0 {
			o.Logf("ended %d jobs an earlier run of this agent left", n)
		}
	}
	if err != nil {
		lock.Close()
		return nil, err
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = o.TLS
	r := &Remote{o: o, bases: bases, http: &http.Client{Transport: tr}, j: j, lock: lock,
		heartbeat: 30 * time.Second, registeredC: make(chan struct{}, 1)}
	if data, err := os.ReadFile(filepath.Join(dir, termFile)); err == nil {
		t, err := strconv.ParseUint(strings.TrimSpace(string(data)), 10, 64)
		if err != nil {
			lock.Close()
			j.close()
			return nil, fmt.Errorf("agent: %s: %w", filepath.Join(dir, termFile), err)
		}
		r.term.Store(t)
	}
	return r, nil
}

// takeDir creates dir (0711: job users pass through it to the work
// directories), checks it is the agent user's alone, and locks it.
func takeDir(dir string) (*os.File, error) {
	if err := os.MkdirAll(dir, 0o711); err != nil {
		return nil, fmt.Errorf("agent directory: %w", err)
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return nil, fmt.Errorf("agent directory: %w", err)
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !fi.IsDir() || !ok || int(st.Uid) != os.Geteuid() || fi.Mode().Perm()&0o022 != 0 {
		return nil, fmt.Errorf("agent directory %s: want a directory of uid %d that others cannot write", dir, os.Geteuid())
	}
	f, err := os.OpenFile(filepath.Join(dir, "agent.lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("agent lock: %w", err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		return nil, fmt.Errorf("agent directory %s: another agent uses it (%w)", dir, err)
	}
	return f, nil
}

// Run serves the server until ctx ends or the server refuses the agent
// (an error wrapping ErrRefused). Then it kills its jobs (SIGINT and
// SIGTERM, SIGKILL after the server's kill grace), waits for them, and
// tries for a few seconds to report their ends (lost, ReasonAgentStopped)
// and to leave (its host is unavail at once); what it could not report
// stays in its journal for its next run. It releases Dir's lock.
func (r *Remote) Run(ctx context.Context) error {
	defer r.lock.Close()
	defer r.j.close()
	err := r.serve(ctx)
	if session := r.sessionID(); err == nil && session != "" {
		// Its host takes no new job while its jobs are killed and their
		// ends reported.
		drain, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		var out struct{}
		if e := r.call(drain, http.MethodPost, PathLeave, Leave{Name: r.o.Name, Session: session, Draining: true}, &out); e != nil {
			r.o.Logf("drain: %v", e)
		}
		cancel()
	}
	grace := r.j.stop()
	done := make(chan struct{})
	go func() { r.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(grace + 10*time.Second):
		r.o.Logf("jobs still running %v after they were killed", grace+10*time.Second)
	}
	if err == nil {
		flush, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		var b backoff
		for flush.Err() == nil && len(r.j.pending()) > 0 {
			if e := r.exchange(flush, false); e != nil && (errors.Is(e, ErrRefused) || !r.retry(flush, e, &b)) {
				break
			}
		}
		if session := r.sessionID(); session != "" && len(r.j.pending()) == 0 {
			var out struct{}
			if e := r.call(flush, http.MethodPost, PathLeave, Leave{Name: r.o.Name, Session: session}, &out); e != nil {
				r.o.Logf("leave: %v", e)
			}
		}
	}
	return err
}

// serve registers, then polls until ctx ends or the server refuses the
// agent, while its reporter sends the news of its jobs.
func (r *Remote) serve(ctx context.Context) error {
	rctx, stopReports := context.WithCancel(ctx)
	reporter := make(chan struct{})
	go func() { defer close(reporter); r.reportLoop(rctx) }()
	defer func() { stopReports(); <-reporter }()
	var b backoff
	for ctx.Err() == nil {
		err := r.exchange(ctx, true)
		if err == nil {
			b.reset()
			continue
		}
		if errors.Is(err, ErrRefused) {
			return err
		}
		if !r.retry(ctx, err, &b) {
			return nil
		}
	}
	return nil
}

// exchange registers when the agent has no session; then, with poll, it
// waits for orders and carries them out, else it sends what it has to
// report (the reporter does that while the agent polls).
func (r *Remote) exchange(ctx context.Context, poll bool) error {
	if r.sessionID() == "" {
		if err := r.register(ctx, poll); err != nil {
			return err
		}
	}
	if !poll {
		return r.sendReports(ctx, r.sessionID())
	}
	q := url.Values{"name": {r.o.Name}, "session": {r.sessionID()}, "after": {strconv.FormatUint(r.after, 10)},
		"wait_ms": {strconv.FormatInt(MaxWait.Milliseconds(), 10)}}
	var out OrdersReply
	if err := r.call(ctx, http.MethodGet, PathOrders+"?"+q.Encode(), nil, &out); err != nil {
		return err
	}
	r.carryOut(ctx, out.Orders)
	return nil
}

// reportLoop sends the news of the agent's jobs (starts and ends), all
// that is waiting in one request, whenever there is news and the agent is
// registered, until ctx ends. A failed request is sent again after a
// delay; a lost session waits for the next registration.
func (r *Remote) reportLoop(ctx context.Context) {
	var b backoff
	var again <-chan time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case <-r.j.changed:
		case <-r.registeredC:
		case <-again:
		}
		again = nil
		session := r.sessionID()
		if session == "" {
			continue // the registration sends the ends; registeredC wakes us after
		}
		err := r.sendReports(ctx, session)
		var se *statusError
		switch {
		case err == nil:
			b.reset()
		case ctx.Err() != nil:
			return
		case errors.As(err, &se) && se.status == http.StatusGone:
			r.dropSession(session) // the poll registers again
		default:
			r.o.Logf("report: %v", err)
			again = time.After(b.next(r.heartbeatTimeout() / 4))
		}
	}
}

// sendReports sends what the journal has to report, in requests of at
// most MaxReports, with session, and records what the server took. A
// request the server refuses as malformed is dropped (sending it again
// would not help: the server ends those jobs as lost when the agent next
// registers without them).
func (r *Remote) sendReports(ctx context.Context, session string) error {
	pending := r.j.pending()
	for len(pending) > 0 {
		n := min(len(pending), MaxReports)
		batch := pending[:n]
		pending = pending[n:]
		var out ReportReply
		var se *statusError
		err := r.call(ctx, http.MethodPost, PathReport, ReportRequest{Name: r.o.Name, Session: session, Reports: batch}, &out)
		if errors.As(err, &se) && se.status == http.StatusBadRequest {
			r.o.Logf("the server refused %d reports (jobs %d to %d): %v", n, batch[0].Job, batch[n-1].Job, err)
		} else if err != nil {
			return err
		}
		for _, rep := range batch {
			r.j.reported(rep)
		}
	}
	return nil
}

// register registers the agent with what it runs and the ends it has not
// reported, and carries out the orders of the answer (with run; else the
// agent is stopping).
func (r *Remote) register(ctx context.Context, run bool) error {
	running, finished := r.j.registration()
	req := RegisterRequest{Name: r.o.Name, Running: running, Finished: finished}
	var out RegisterReply
	if err := r.call(ctx, http.MethodPost, PathRegister, req, &out); err != nil {
		return err
	}
	r.j.registered(running, finished)
	r.see(out.Term)
	r.mu.Lock()
	r.session, r.after = out.Session, 0
	if out.HeartbeatMS > 0 {
		r.heartbeat = time.Duration(out.HeartbeatMS) * time.Millisecond
	}
	r.mu.Unlock()
	select {
	case r.registeredC <- struct{}{}:
	default:
	}
	if out.KillGraceMS > 0 {
		r.j.setGrace(time.Duration(out.KillGraceMS) * time.Millisecond)
	}
	r.o.Logf("registered as %s: %d jobs running, %d ends reported, %d orders", r.o.Name, len(running), len(finished), len(out.Orders))
	if run {
		r.carryOut(ctx, out.Orders)
	}
	return nil
}

// carryOut carries out orders: kills first, so that an attempt started
// and killed in the same answer never runs; then starts.
func (r *Remote) carryOut(ctx context.Context, orders []Order) {
	slices.SortStableFunc(orders, func(a, b Order) int {
		return cmp.Compare(boolInt(a.Kind != KindKill), boolInt(b.Kind != KindKill))
	})
	for _, o := range orders {
		r.after = max(r.after, o.Seq)
		k := key{o.Job, o.Attempt}
		if o.Kind == KindStart && o.Term < r.term.Load() {
			r.o.Logf("job %d attempt %d: refused a start from raft term %d (index %d): term %d was seen", o.Job, o.Attempt, o.Term, o.Index, r.term.Load())
			continue
		}
		r.see(o.Term)
		switch {
		case o.Kind == KindKill:
			if err := r.j.kill(k, time.Duration(o.GraceMS)*time.Millisecond); err != nil {
				r.o.Logf("job %d attempt %d: kill: %v", o.Job, o.Attempt, err)
			}
		case o.Kind == KindSuspend || o.Kind == KindResume:
			if err := r.j.signal(k, o.Kind == KindSuspend); err != nil {
				r.o.Logf("job %d attempt %d: %s: %v", o.Job, o.Attempt, o.Kind, err)
			}
		case o.Kind != KindStart || o.Submit == nil || o.Submit.Job != o.Job || len(o.Hosts) == 0 || o.Hosts[0].Host != r.o.Name:
			r.o.Logf("job %d attempt %d: ignored a malformed %q order", o.Job, o.Attempt, o.Kind)
		case r.j.take(k):
			r.wg.Add(1)
			go func() {
				defer r.wg.Done()
				r.run(ctx, k, o)
			}()
		}
	}
}

func nonEmpty(s ...string) []string {
	return slices.DeleteFunc(s, func(x string) bool { return x == "" })
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// run runs attempt k as order o says, and records its start and end.
func (r *Remote) run(ctx context.Context, k key, o Order) {
	spec := launch.FromEvents(o.Submit, &event.Placement{Job: o.Job, Attempt: o.Attempt, Hosts: o.Hosts})
	spec.WorkBase, spec.AllowRoot = filepath.Join(r.o.Dir, "work"), o.AllowRoot
	proc, err := launch.Start(ctx, spec)
	if err != nil {
		rep := Report{ExitCode: -1, Reason: "not started: " + err.Error(), Unstarted: true}
		if ctx.Err() != nil || r.j.isStopping() {
			rep.Reason, rep.Lost = ReasonAgentStopped, true
		}
		r.o.Logf("job %d attempt %d: %s", o.Job, o.Attempt, rep.Reason)
		if err := r.j.end(k, rep); err != nil {
			r.o.Logf("job %d attempt %d: %v", o.Job, o.Attempt, err)
		}
		return
	}
	r.o.Logf("job %d attempt %d: started, pid %d", o.Job, o.Attempt, proc.PID())
	if err := r.j.started(k, proc); err != nil {
		r.o.Logf("job %d attempt %d: %v", o.Job, o.Attempt, err)
	}
	res := proc.Wait()
	rep := Report{ExitCode: res.ExitCode, Signal: res.Signal}
	switch {
	case res.Killed && r.j.isStopping():
		rep.Reason, rep.Lost = ReasonAgentStopped, true
	case res.Killed:
		rep.Reason = ReasonKilled
	}
	r.o.Logf("job %d attempt %d: ended, exit code %d%s", o.Job, o.Attempt, res.ExitCode, strings.Join(append([]string{""}, nonEmpty(res.Signal, rep.Reason)...), ", "))
	if err := r.j.end(k, rep); err != nil {
		r.o.Logf("job %d attempt %d: %v", o.Job, o.Attempt, err)
	}
}

// retry handles a failed exchange: a lost session registers again at
// once; anything else (the server unreachable, stopping) waits for b's
// next delay. It returns false when ctx ended.
func (r *Remote) retry(ctx context.Context, err error, b *backoff) bool {
	var se *statusError
	if errors.As(err, &se) && se.status == http.StatusGone {
		r.dropSession(r.sessionID())
		return ctx.Err() == nil
	}
	if ctx.Err() != nil {
		return false
	}
	r.o.Logf("%v", err)
	select {
	case <-time.After(b.next(r.retryLimit())):
		return true
	case <-ctx.Done():
		return false
	}
}

// backoff is the delay between failed exchanges: 100 ms, doubling up to
// at most 2 s and a quarter of the heartbeat timeout, so that an agent
// comes back before the server loses its host.
type backoff struct{ d time.Duration }

func (b *backoff) reset() { b.d = 0 }

func (b *backoff) next(limit time.Duration) time.Duration {
	b.d = min(max(2*b.d, 100*time.Millisecond), 2*time.Second, max(limit, 10*time.Millisecond))
	return b.d
}

// statusError is a server's answer other than 200.
type statusError struct {
	status int
	msg    string
}

func (e *statusError) Error() string { return fmt.Sprintf("server: %d %s", e.status, e.msg) }

// call sends a request to the server and decodes its answer into out. A
// 401, 400, 404 or 409 answer wraps ErrRefused.
func (r *Remote) call(ctx context.Context, method, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(b)
	}
	timeout := 30*time.Second + MaxWait
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cur := r.cur.Load()
	req, err := http.NewRequestWithContext(ctx, method, r.bases[cur]+path, body)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+r.o.Token)
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := r.http.Do(req)
	if err != nil {
		r.next(cur, "")
		return fmt.Errorf("cannot reach the server: %w", err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return fmt.Errorf("server answer: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		var e struct {
			Error string `json:"error"`
		}
		if json.Unmarshal(data, &e) != nil || e.Error == "" {
			e.Error = strings.TrimSpace(string(data))
		}
		se := &statusError{status: resp.StatusCode, msg: e.Error}
		if resp.Header.Get(notLeaderHeader) != "" {
			r.next(cur, resp.Header.Get(leaderHeader)) // a follower: it took nothing
			return se
		}
		switch resp.StatusCode {
		case http.StatusUnauthorized, http.StatusBadRequest, http.StatusNotFound, http.StatusConflict:
			return fmt.Errorf("%w: %w", ErrRefused, se)
		}
		return se
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("server answer: %w", err)
	}
	return nil
}
