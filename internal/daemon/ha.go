package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/xce-sched/xce/framework/plugins"
	"github.com/xce-sched/xce/internal/agent"
	"github.com/xce-sched/xce/internal/api"
	"github.com/xce-sched/xce/internal/auth"
	"github.com/xce-sched/xce/internal/dashboard"
	"github.com/xce-sched/xce/internal/event"
	"github.com/xce-sched/xce/internal/live"
	"github.com/xce-sched/xce/internal/metrics"
	"github.com/xce-sched/xce/internal/replica"
	"github.com/xce-sched/xce/internal/server"
	"github.com/xce-sched/xce/internal/state"
	"github.com/xce-sched/xce/internal/store"
)

// member is one server of a replicated control plane: its raft node, and
// the handlers of its current term as the leader (none as a follower).
type member struct {
	o     Options
	node  *replica.Node
	local *store.Store // the local copy of the replicated event log
	copy  *copier      // local's
	api   string       // the TCP listener's address
	cur   atomic.Pointer[handlers]
	read  reader     // a follower's reads
	fwd   *forwarder // a follower's writes
}

type handlers struct{ socket, tcp http.Handler }

// serveHA runs one member of a replicated control plane (o.Raft set;
// docs/ha.md) until ctx ends (nil) or it fails. The member serves the API
// and the agents while it leads; a follower answers the API's reads from
// its replicated state (reader) and every other request with 503 and
// api.NotLeaderHeader.
func serveHA(ctx context.Context, o Options) error {
	if o.Dev {
		return errors.New("a dev server is not replicated: --raft needs --config and --listen")
	}
	if o.Listen == "" {
		return errors.New("--raft needs --listen: clients and agents reach the members over TCP")
	}
	if err := os.MkdirAll(o.DataDir, 0o755); err != nil {
		return err
	}
	local, err := store.Open(filepath.Join(o.DataDir, "events.db"), store.Options{})
	if err != nil {
		return err
	}
	defer local.Close()
	// A single server's data directory becomes the first member of a
	// cluster: its state seeds the raft state (replica.Config.Initial).
	var initial *state.State
	if _, err := os.Stat(filepath.Join(o.DataDir, "raft", "raft.db")); local.Last() > 0 && errors.Is(err, os.ErrNotExist) {
		if initial, err = server.Recover(local); err != nil {
			return err
		}
		if o.Logf != nil {
			o.Logf("the single server's event log (%d events) starts the cluster", initial.Index)
		}
	}
	cp := newCopier(local, o.Logf)
	node, err := replica.Open(replica.Config{Addr: o.Raft, Dir: filepath.Join(o.DataDir, "raft"), Peers: o.Peers,
		SnapshotThreshold: o.RaftSnapshotThreshold, TrailingLogs: o.RaftTrailingLogs, SnapshotInterval: o.RaftSnapshotInterval,
		Initial: initial, OnApply: cp.apply, OnRestore: cp.restored, LogOutput: o.RaftLog})
	if err != nil {
		return err
	}
	defer node.Close()
	tcp, err := api.ListenTCP(o.Listen, o.TLSCert, o.TLSKey)
	if err != nil {
		return err
	}
	defer tcp.Close()
	socket := filepath.Join(o.DataDir, "xce.sock")
	sock, err := api.ListenUnix(socket)
	if err != nil {
		return err
	}
	defer os.Remove(socket)
	m := &member{o: o, node: node, local: local, copy: cp, api: advertised(o.Listen, tcp.Addr())}
	m.read.m = m
	m.read.metrics = metrics.New(metrics.Source{View: m.read.coreView, Store: local.Stats})
	if m.fwd, err = newForwarder(forwardOptions{leader: m.leaderAPI, key: m.signingKey, notLeader: m.notLeader,
		caughtUp: m.read.require, certFile: o.TLSCert, caFile: o.TLSCA}); err != nil {
		return err
	}
	// The copy's gaps are filled from the other members' logs, in the
	// background.
	cp.fetch, cp.keys = (&peerLog{fwd: m.fwd, addrs: m.peerAPIs}).events, m.clusterKeys
	fillCtx, stopFill := context.WithCancel(ctx)
	fillDone := make(chan struct{})
	go func() { defer close(fillDone); cp.run(fillCtx) }()
	defer func() { stopFill(); <-fillDone }()
	sockSrv := &http.Server{Handler: m.handler(false), ConnContext: api.ConnContext, ReadHeaderTimeout: 10 * time.Second}
	tcpSrv := &http.Server{Handler: m.handler(true), ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute,
		BaseContext: func(net.Listener) context.Context { return ctx }}
	srvDone := make(chan error, 2)
	go func() { srvDone <- sockSrv.Serve(sock) }()
	go func() { srvDone <- tcpSrv.Serve(tcp) }()
	if o.Ready != nil {
		o.Ready(socket, m.api)
	}
	var runErr error
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
wait:
	for {
		select {
		case <-ctx.Done():
			break wait
		case err := <-srvDone:
			runErr = err
			break wait
		case <-tick.C:
		}
		if !node.IsLeader() {
			continue
		}
		if err := m.term(ctx); err != nil && ctx.Err() == nil && o.Logf != nil {
			o.Logf("no longer leading: %v", err)
		}
	}
	shut, done := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer done()
	_ = sockSrv.Shutdown(shut)
	_ = tcpSrv.Shutdown(shut)
	return runErr
}

// handler returns the handler of the socket (tcp false) or of the TCP
// listener: GET /v1/members (what the member says of itself), then the
// current term's while the member leads; on a follower, the reads from
// the replicated state (reader), the writes forwarded to the leader
// (forwarder), and 503 (api.NotLeaderHeader) for the agents' routes
// (agents find the leader themselves: their sessions belong to its hub);
// its own metrics (/metrics, from the replicated state); for the
// dashboard, a redirect to the leader's. While the local copy of the
// event log has a gap (copier), the reads of the copy (logRead) are
// forwarded to the leader by a follower, and answered 503
// (api.NotLeaderHeader: ask another member) by a leader.
func (m *member) handler(tcp bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/members" && r.Method == http.MethodGet {
			w.Header().Set("Content-Type", "application/json")
			self := m.node.Self()
			_ = json.NewEncoder(w).Encode(api.MembersReply{Members: []api.Member{{ID: self.ID, API: m.api, Raft: self.Raft,
				Role: self.Role, Term: self.Term, LastIndex: self.LastIndex}}})
			return
		}
		gap := logRead(r) && m.copy.gapped()
		if h := m.cur.Load(); h != nil {
			if gap {
				m.incomplete(w)
				return
			}
			if tcp {
				h.tcp.ServeHTTP(w, r)
			} else {
				h.socket.ServeHTTP(w, r)
			}
			return
		}
		read := r.Method == http.MethodGet || r.Method == http.MethodHead
		switch p := r.URL.Path; {
		case p == "/metrics" && read:
			m.read.serve(tcp, w, r)
		case !strings.HasPrefix(p, "/v1/") && read:
			m.fwd.redirect(w, r) // the dashboard: the leader's
		case !strings.HasPrefix(p, "/v1/") || strings.HasPrefix(p, "/v1/agent/"):
			m.notLeader(w, "")
		case gap && tcp:
			m.fwd.tcpRequest(w, r)
		case gap:
			m.fwd.send(w, r)
		case read:
			m.read.serve(tcp, w, r)
		case tcp:
			m.fwd.tcpRequest(w, r)
		default:
			m.fwd.send(w, r)
		}
	})
}

// logRead reports whether r is a read the API answers from the local copy
// of the event log: a job's history (GET /v1/jobs/{id}/history) or the
// log itself (GET /v1/events).
func logRead(r *http.Request) bool {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		return false
	}
	if r.URL.Path == "/v1/events" {
		return true
	}
	rest, ok := strings.CutPrefix(r.URL.Path, "/v1/jobs/")
	id, ok2 := strings.CutSuffix(rest, "/history")
	return ok && ok2 && id != "" && !strings.Contains(id, "/")
}

// incomplete answers a read of the local copy of the event log while the
// copy has a gap, on the leader: 503 with api.NotLeaderHeader (nothing
// was taken: the client asks another member, whose copy is complete).
func (m *member) incomplete(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set(api.NotLeaderHeader, "1")
	w.WriteHeader(http.StatusServiceUnavailable)
	_ = json.NewEncoder(w).Encode(api.Error{Msg: fmt.Sprintf("this server's copy of the event log ends at event %d and is being filled from the other members: job histories and the event log are read on another member; ask another", m.local.Last())})
}

// peerAPIs returns the API addresses of the other members this one may
// read the event log from (copier): the leader's first, then those of the
// members that led before (the replicated state records each leader's
// address), in order.
func (m *member) peerAPIs() []string {
	leader := m.leaderAPI()
	var others []string
	m.node.FSM().View(func(st *state.State) {
		for raft, a := range st.APIs {
			if raft != m.node.Addr() && a != m.api && a != leader && a != "" {
				others = append(others, a)
			}
		}
	})
	slices.Sort(others)
	others = slices.Compact(others)
	if leader == "" {
		return others
	}
	return append([]string{leader}, others...)
}

// clusterKeys returns the replicated state's shared secrets, nil before
// the first leader replicated them.
func (m *member) clusterKeys() *event.Keys {
	var keys *event.Keys
	m.node.FSM().View(func(st *state.State) {
		if st.Keys != nil {
			k := *st.Keys
			keys = &k
		}
	})
	return keys
}

// leaderAPI returns the address of the leader's TCP listener, from its
// last start (event.ServerStarted) in the replicated state; "" when no
// leader is known, or when this member is the raft leader but does not
// serve as one yet (it would forward to itself).
func (m *member) leaderAPI() string {
	leader := m.node.Leader()
	if leader == "" || leader == m.node.Addr() {
		return ""
	}
	var addr string
	m.node.FSM().View(func(st *state.State) { addr = st.APIs[leader] })
	return addr
}

// signingKey returns the replicated token-signing key, "" before the
// first leader replicated it.
func (m *member) signingKey() string {
	var key string
	m.node.FSM().View(func(st *state.State) {
		if st.Keys != nil {
			key = st.Keys.SigningKey
		}
	})
	return key
}

// advertised returns the address at which the other members and the
// clients reach the TCP listener l listening on listen (--listen): the
// host listen names (a name, or an address that is not unspecified),
// with l's port; else l's address.
func advertised(listen string, l net.Addr) string {
	host, _, err := net.SplitHostPort(listen)
	_, port, err2 := net.SplitHostPort(l.String())
	if err != nil || err2 != nil || host == "" {
		return l.String()
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		return l.String()
	}
	return net.JoinHostPort(host, port)
}

// notLeader answers 503 with api.NotLeaderHeader and, when the
// replicated state knows it, the leader's API address in api.LeaderHeader
// and the message, followed by why when it is not "".
func (m *member) notLeader(w http.ResponseWriter, why string) {
	leader := m.node.Leader()
	var addr string
	m.node.FSM().View(func(st *state.State) { addr = st.APIs[leader] })
	msg := "this server is not the leader, and no leader is known yet; ask another"
	switch {
	case addr != "":
		w.Header().Set(api.LeaderHeader, addr)
		msg = fmt.Sprintf("this server is not the leader; the leader is %s (raft %s)", addr, leader)
	case leader != "":
		msg = fmt.Sprintf("this server is not the leader; the leader's raft address is %s", leader)
	}
	if why != "" {
		msg += "; " + why
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set(api.NotLeaderHeader, "1")
	w.WriteHeader(http.StatusServiceUnavailable)
	_ = json.NewEncoder(w).Encode(api.Error{Msg: msg})
}

// term serves as the leader: it waits until the FSM has applied what
// earlier leaders committed, builds the core from that state (the
// scheduler starts afresh, as at a server's start: event.ServerStarted),
// and runs the loop, the agents' hub and the API until the node stops
// leading (or ctx ends, or the loop fails).
func (m *member) term(ctx context.Context) error {
	o := m.o
	tctx, cancel := context.WithCancel(ctx)
	defer cancel()
	bctx, bdone := context.WithTimeout(tctx, 10*time.Second)
	err := m.node.Barrier(bctx)
	bdone()
	if err != nil {
		return fmt.Errorf("barrier: %w", err)
	}
	st, _, err := m.node.FSM().Clone()
	if err != nil {
		return err
	}
	core, err := live.New(o.Cluster, st, plugins.NewInTreeRegistry())
	if err != nil {
		return fmt.Errorf("the replicated log does not fit the configuration: %w", err)
	}
	core.Server = o.Server // until a reloaded configuration replaces it
	var loop *server.Loop
	term := m.node.Self().Term // a leader's term does not change while it leads
	names := make([]string, len(o.Cluster.Hosts))
	for i, h := range o.Cluster.Hosts {
		names[i] = h.Name
	}
	view := func(fn func(k *live.Core)) { loop.View(fn) }
	hub := agent.NewHub(agent.HubOptions{Hosts: names,
		Do: func(ctx context.Context, mk func(*state.State, int64) ([]event.Event, error)) ([]event.Event, error) {
			return loop.Do(ctx, mk)
		},
		DoEach: func(ctx context.Context, makes []agent.Make) ([][]event.Event, []error) {
			return loop.DoEach(ctx, makes)
		},
		View:             func(fn func(*state.State)) { loop.View(func(k *live.Core) { fn(k.State) }) },
		HeartbeatTimeout: o.Server.HeartbeatTimeout, KillGrace: o.Server.KillGrace, AllowRoot: o.Server.AllowRootJobs, AllowRootNow: allowRootNow(o, &loop), Logf: o.Logf,
		Fence: func() (uint64, uint64) { return term, m.node.Appended() }})
	loop = server.NewLoop(core, m.node, hub, o.Server.CycleInterval, func() int64 { return time.Now().UnixNano() })
	tokens, agentToken, err := m.keys(tctx, loop)
	if err != nil {
		return err
	}
	handler := api.NewHandler(loop, m.local, o.Server.Admins)
	handler.Private = o.Server.PrivateJobs
	handler.Tokens = tokens
	handler.Members = m.changeMember
	if o.ConfigPath != "" {
		handler.Reconfig = func() (string, error) { return reloadConfig(o.ConfigPath, o.Server) }
	}
	var dash *dashboard.Handler
	met := metrics.New(metrics.Source{View: view, Store: m.local.Stats, Heartbeats: hub.Heartbeats,
		Streams: func() (int, uint64) { return dash.Streams() }})
	dash = dashboard.New(dashboard.Options{View: view, Log: m.local, API: handler, Tokens: tokens, Logf: o.Logf})
	w := newWeb(handler, met, dash)
	loop.Observer = server.Observers{met, dash}
	if err := recordStart(tctx, loop, o.ConfigText, event.Server{Version: o.Version, Raft: m.node.Addr(), API: m.api}); err != nil {
		return err
	}
	at := st.Index // the loop owns st once it runs
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	loopDone := make(chan error, 1)
	wg.Add(3)
	go func() { defer wg.Done(); loopDone <- loop.Run(tctx) }()
	go func() { defer wg.Done(); hub.Monitor(tctx) }()
	go func() { defer wg.Done(); dash.Run(tctx) }()
	stateAt := func() uint64 {
		var i uint64
		loop.View(func(k *live.Core) { i = k.State.Index })
		return i
	}
	m.cur.Store(&handlers{socket: inTerm(tctx, w.socket()), tcp: inTerm(tctx, withApplied(stateAt, w.tcp(hub, agentToken, tokens)))})
	defer m.cur.Store(nil)
	if o.Logf != nil {
		o.Logf("leading (raft term %d), state at event %d", term, at)
	}
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case err := <-loopDone:
			loopDone <- err
			return fmt.Errorf("the loop stopped: %w", err)
		case <-tick.C:
			if !m.node.IsLeader() {
				return errors.New("deposed")
			}
		}
	}
}

// inTerm returns h with each request's context ended when the term's
// does too: an agent's poll held by a deposed leader returns at once, and
// the agent moves on to the next leader.
func inTerm(term context.Context, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithCancel(r.Context())
		defer cancel()
		stop := context.AfterFunc(term, cancel)
		defer stop()
		h.ServeHTTP(w, r.WithContext(ctx))
	})
}

// changeMember adds (join) or removes the member of raft address addr
// (api.Handler.Members): the leader alone may; api.ErrNotLeader else.
func (m *member) changeMember(ctx context.Context, addr string, join bool) error {
	var err error
	if join {
		err = m.node.Join(ctx, addr)
	} else {
		err = m.node.Remove(ctx, addr)
	}
	if errors.Is(err, replica.ErrNotLeader) {
		return fmt.Errorf("%w: %w", api.ErrNotLeader, err)
	}
	return err
}

// keys returns the shared secrets of the replicated state: the issuer of
// users' tokens and the agents' token. The first leader makes them from
// its data directory's token.key and agent.token (made when missing: a
// single server upgraded keeps its tokens valid) and replicates them
// (event.ClusterKeys). The leader writes the agents' token to its
// DATA/agent.token, where an administrator finds it for the agents.
func (m *member) keys(ctx context.Context, loop *server.Loop) (*auth.Issuer, string, error) {
	var have *event.Keys
	loop.View(func(k *live.Core) { have = k.State.Keys })
	tokenFile := filepath.Join(m.o.DataDir, "agent.token")
	if have == nil {
		iss, err := auth.LoadKey(m.o.DataDir)
		if err != nil {
			return nil, "", err
		}
		tok, err := agent.LoadToken(tokenFile)
		if err != nil {
			return nil, "", err
		}
		_, err = loop.Before(ctx, func(st *state.State, _ int64) ([]event.Event, error) {
			if st.Keys != nil {
				return nil, nil
			}
			return []event.Event{{Type: event.ClusterKeys, Keys: &event.Keys{SigningKey: iss.Hex(), AgentToken: tok}}}, nil
		})
		if err != nil {
			return nil, "", fmt.Errorf("replicate the keys: %w", err)
		}
		loop.View(func(k *live.Core) { have = k.State.Keys })
	}
	iss, err := auth.NewIssuer(have.SigningKey)
	if err != nil {
		return nil, "", fmt.Errorf("the replicated keys: %w", err)
	}
	if cur, err := os.ReadFile(tokenFile); err != nil || strings.TrimSpace(string(cur)) != have.AgentToken {
		if err := os.WriteFile(tokenFile+".new", []byte(have.AgentToken+"\n"), 0o600); err != nil {
			return nil, "", err
		}
		if err := os.Rename(tokenFile+".new", tokenFile); err != nil {
			return nil, "", err
		}
	}
	return iss, have.AgentToken, nil
}
