// Package daemon assembles `xce serve`: the store in the data directory,
// the state recovered from it, the core, the loop, the API on the data
// directory's Unix socket and, for a dev server, the agent inside the
// process; else the hub of the remote agents on a TCP listener.
package daemon

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/xce-sched/xce/cluster"
	"github.com/xce-sched/xce/cluster/slurmconf"
	"github.com/xce-sched/xce/framework/plugins"
	"github.com/xce-sched/xce/internal/agent"
	"github.com/xce-sched/xce/internal/api"
	"github.com/xce-sched/xce/internal/auth"
	"github.com/xce-sched/xce/internal/dashboard"
	"github.com/xce-sched/xce/internal/event"
	"github.com/xce-sched/xce/internal/live"
	"github.com/xce-sched/xce/internal/metrics"
	"github.com/xce-sched/xce/internal/server"
	"github.com/xce-sched/xce/internal/state"
	"github.com/xce-sched/xce/internal/store"
)

// SnapshotEvery is how many events the server folds between two snapshots
// of its state: a restart folds at most that many (docs/daemon.md).
const SnapshotEvery = 50_000

// Options configure Serve.
type Options struct {
	// Cluster and Server are the configuration (cluster.ParseConfig) and
	// ConfigText its text, recorded in the log when it is not the one in
	// force there. ConfigPath, when set, is the file `xce reconfig`
	// reads again.
	Cluster    *cluster.Cluster
	Server     *cluster.Server
	ConfigText string
	// Version is the binary's version, recorded with the server's start.
	Version    string
	ConfigPath string
	// DataDir holds the event log (events.db) and the socket (xce.sock);
	// created 0755 when missing.
	DataDir string
	// Dev runs an agent inside the process serving every host of the
	// configuration (a dev server's one host is this machine), and lets
	// root's jobs run.
	Dev bool
	// Listen is the TCP address where remote agents connect, users with
	// tokens and the dashboard's browsers ("" for none: then a
	// configured cluster runs no job). A dev server listens there for
	// users and browsers only (its agent is inside). An address that is
	// not loopback needs TLSCert and TLSKey (PEM files). The agent token
	// is DataDir/agent.token, made at the first start.
	Listen          string
	TLSCert, TLSKey string
	// TLSCA, when set, is a PEM file of the certificate authority that
	// signed the other members' TLS certificates: a follower checks the
	// leader's against it, the system's roots and its own TLSCert chain
	// when it forwards a write (docs/ha.md).
	TLSCA string
	// Raft, when set, makes the server a member of a replicated control
	// plane (docs/ha.md): its raft address, host:port. Peers are the raft
	// addresses of the cluster's first members (Raft among them): a member
	// without raft state bootstraps the cluster from them. RaftLog, when
	// set, receives raft's warnings and errors.
	Raft    string
	Peers   []string
	RaftLog io.Writer
	// RaftSnapshotThreshold, RaftTrailingLogs and RaftSnapshotInterval
	// tune raft's snapshots (replica.Config's SnapshotThreshold,
	// TrailingLogs and SnapshotInterval; zero: the defaults; docs/ha.md).
	RaftSnapshotThreshold uint64
	RaftTrailingLogs      uint64
	RaftSnapshotInterval  time.Duration
	// Logf, when set, logs the remote agents' registrations and losses
	// (and a member's leadership and the filling of its local copy of the
	// event log).
	Logf func(format string, args ...any)
	// Ready, when set, is called once the socket (and the TCP listener,
	// at addr, "" without one) accept requests.
	Ready func(socket, addr string)
	// Login, when set, is called for a dev server with a TCP listener,
	// after Ready, with the address of its dashboard and a link that logs
	// the server's own user in (a token for a day after "#token=").
	Login func(dashboard, link string)
}

// Serve runs a server until ctx ends (then it returns nil, after killing
// a dev server's jobs) or it fails. With o.Raft set it runs a member of a
// replicated control plane instead (docs/ha.md).
func Serve(ctx context.Context, o Options) error {
	if o.Raft != "" {
		return serveHA(ctx, o)
	}
	if err := os.MkdirAll(o.DataDir, 0o755); err != nil {
		return err
	}
	tokens, err := auth.LoadKey(o.DataDir)
	if err != nil {
		return err
	}
	// The loop is made below; the metrics read it only once requests come.
	var loop *server.Loop
	view := func(fn func(k *live.Core)) { loop.View(fn) }
	var hub *agent.Hub
	var logStats func() store.Stats
	var dash *dashboard.Handler
	m := metrics.New(metrics.Source{View: view, Store: func() store.Stats { return logStats() },
		Streams: func() (int, uint64) {
			if dash == nil {
				return 0, 0
			}
			return dash.Streams()
		},
		Heartbeats: func() map[string]time.Time {
			if hub == nil {
				return nil
			}
			return hub.Heartbeats()
		}})
	log, err := store.Open(filepath.Join(o.DataDir, "events.db"), store.Options{OnCommit: m.Commit})
	if err != nil {
		return err
	}
	defer log.Close()
	logStats = log.Stats
	st, err := server.Recover(log)
	if err != nil {
		return err
	}
	lost := running(st) // before this run places anything
	core, err := live.New(o.Cluster, st, plugins.NewInTreeRegistry())
	if err != nil {
		return fmt.Errorf("the event log does not fit the configuration: %w", err)
	}
	core.Server = o.Server // until a reloaded configuration replaces it
	// The loop outlives ctx until a dev server's jobs have ended and their
	// ends are recorded.
	loopCtx, stopLoop := context.WithCancel(context.WithoutCancel(ctx))
	defer stopLoop()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	report := func(ctx context.Context, mk func(*state.State, int64) ([]event.Event, error)) ([]event.Event, error) {
		return loop.Do(ctx, mk)
	}
	var local *agent.Local
	var tcp net.Listener
	var tcpHandler http.Handler
	var agentToken string
	var dispatch server.Dispatch = noAgent{}
	switch {
	case o.Dev:
		local = agent.NewLocal(loopCtx, report, filepath.Join(o.DataDir, "work"), o.Server.KillGrace, true)
		dispatch = local
		// Before this run starts anything: what is left is an earlier
		// run's (it was SIGKILLed, and its jobs outlived it).
		if _, err := local.KillLeftovers(5 * time.Second); err != nil {
			return fmt.Errorf("the jobs an earlier run left: %w", err)
		}
	case o.Listen != "":
		if tcp, hub, agentToken, err = remoteAgents(o, report, &loop); err != nil {
			return err
		}
		defer tcp.Close()
		dispatch = hub
	}
	if o.Dev && o.Listen != "" {
		// Users and browsers only: the agent is inside.
		if tcp, err = api.ListenTCP(o.Listen, o.TLSCert, o.TLSKey); err != nil {
			return err
		}
		defer tcp.Close()
	}
	loop = server.NewLoop(core, log, dispatch, o.Server.CycleInterval, func() int64 { return time.Now().UnixNano() })
	loop.SnapshotEvery = SnapshotEvery
	handler := api.NewHandler(loop, log, o.Server.Admins)
	handler.Private = o.Server.PrivateJobs
	handler.Tokens = tokens
	if o.ConfigPath != "" {
		handler.Reconfig = func() (string, error) { return reloadConfig(o.ConfigPath, o.Server) }
	}
	dash = dashboard.New(dashboard.Options{View: view, Log: log, API: handler, Tokens: tokens, Logf: o.Logf})
	w := newWeb(handler, m, dash)
	loop.Observer = server.Observers{m, w.dash}
	if err := recordStart(ctx, loop, o.ConfigText, event.Server{Version: o.Version}); err != nil {
		return err
	}
	loopDone := make(chan error, 1)
	go func() { loopDone <- loop.Run(loopCtx) }()
	dashDone := make(chan struct{})
	go func() { w.dash.Run(ctx); close(dashDone) }()
	defer func() { cancel(); <-dashDone }() // before the log closes

	var runErr0 error
	socket := filepath.Join(o.DataDir, "xce.sock")
	l, err := api.ListenUnix(socket)
	if err != nil {
		stopLoop()
		<-loopDone
		return err
	}
	if tcp != nil {
		tcpHandler = w.tcp(hub, agentToken, tokens)
	}
	var tcpSrv *http.Server
	tcpDone := make(chan error, 1)
	monitorDone := make(chan struct{})
	if hub == nil {
		close(monitorDone)
	} else {
		go func() { hub.Monitor(ctx); close(monitorDone) }()
	}
	if tcp != nil {
		// An agent's poll ends with ctx (BaseContext), so Shutdown need
		// not wait for it.
		tcpSrv = &http.Server{Handler: tcpHandler, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute,
			BaseContext: func(net.Listener) context.Context { return ctx }}
		go func() { tcpDone <- tcpSrv.Serve(tcp) }()
	}
	srv := &http.Server{Handler: w.socket(), ConnContext: api.ConnContext, ReadHeaderTimeout: 10 * time.Second}
	serveDone := make(chan error, 1)
	go func() { serveDone <- srv.Serve(l) }()
	if local != nil {
		if err := devStart(ctx, loop, local, o.Cluster, lost); err != nil {
			cancel()
			runErr0 = err
		}
	}
	if o.Ready != nil {
		addr := ""
		if tcp != nil {
			addr = tcp.Addr().String()
		}
		o.Ready(socket, addr)
		if o.Login != nil && o.Dev && tcp != nil {
			if dash, link, err := loginLink(tokens, addr, o.TLSCert != ""); err == nil {
				o.Login(dash, link)
			}
		}
	}
	runErr := runErr0
	select {
	case <-ctx.Done():
	case runErr = <-loopDone:
		loopDone <- runErr
	case err := <-serveDone:
		if !errors.Is(err, http.ErrServerClosed) {
			runErr = err
		}
		serveDone <- err
	case err := <-tcpDone:
		runErr = err
	}
	cancel() // ends the agents' polls and the heartbeat monitor
	shut, done := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer done()
	_ = srv.Shutdown(shut)
	if tcpSrv != nil {
		_ = tcpSrv.Shutdown(shut)
	}
	<-monitorDone
	if local != nil {
		// A dev server's jobs are its children: they end with it, and
		// their ends are recorded while the loop still runs, starting
		// nothing more.
		loop.Quiesce()
		local.KillAll()
		local.Wait()
	}
	stopLoop()
	if err := <-loopDone; err != nil && runErr == nil {
		runErr = err
	}
	_ = os.Remove(socket)
	return runErr
}

// devStart ends the jobs an earlier run of a dev server ran (lost: they
// were its children, killed by KillLeftovers if it was SIGKILLed; a
// rerunnable one goes back to pending), and registers the dev agent's
// hosts.
func devStart(ctx context.Context, loop *server.Loop, local *agent.Local, c *cluster.Cluster, lost []attempt) error {
	for _, a := range lost {
		if _, err := loop.Do(ctx, func(*state.State, int64) ([]event.Event, error) {
			return []event.Event{{Type: event.JobFinished, Finished: &event.Finished{Job: a.id, Attempt: a.attempt,
				ExitCode: -1, Reason: "lost when the server restarted", Requeued: a.requeue}}}, nil
		}); err != nil {
			return err
		}
	}
	for _, h := range c.Hosts {
		if err := local.Register(h.Name); err != nil {
			return err
		}
	}
	return nil
}

// attempt names a job's attempt that a dev server's log says runs.
type attempt struct {
	id      event.JobID
	attempt int
	requeue bool
}

// running returns the attempts st says run: for a dev server that starts,
// those of an earlier run, which are gone with it (taken before this run
// places anything).
func running(st *state.State) []attempt {
	var out []attempt
	for _, j := range st.Jobs {
		if j.State == state.Run {
			out = append(out, attempt{j.Job, j.Attempt, j.Rerunnable})
		}
	}
	return out
}

// recordStart appends, before the loop runs, the configuration text in
// force when the log says another one is (or none yet), then this start
// (event.ServerStarted): the scheduler was just rebuilt from the state,
// and a replay of the log (xce sim verify) rebuilds its own there too.
//
// srv is the start's payload but its pid, which recordStart sets.
func recordStart(ctx context.Context, loop *server.Loop, text string, srv event.Server) error {
	_, err := loop.Before(ctx, func(st *state.State, _ int64) ([]event.Event, error) {
		if st.Config == text {
			return nil, nil
		}
		return []event.Event{{Type: event.ConfigReloaded, Config: &event.Config{Text: text}}}, nil
	})
	if err != nil {
		return fmt.Errorf("record the configuration: %w", err)
	}
	_, err = loop.Before(ctx, func(*state.State, int64) ([]event.Event, error) {
		srv.PID = os.Getpid()
		return []event.Event{{Type: event.ServerStarted, SkipOK: true, Server: &srv}}, nil
	})
	if err != nil {
		return fmt.Errorf("record the start: %w", err)
	}
	return nil
}

// readConfig reads and checks the configuration file at path; it returns
// its text.
func readConfig(path string) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	text, _, err := slurmconf.ConfigText(path, data) // a slurm.conf is imported again (docs/slurm.md)
	if err != nil {
		return "", err
	}
	if _, _, err := cluster.ParseConfig(path, text); err != nil {
		return "", err
	}
	return string(text), nil
}

// remoteAgents makes the agent token (DATA/agent.token), listens on
// o.Listen and returns the listener, the hub of the remote agents (which
// reports through report and reads the state through *loop once it is
// made) and the agent token.
func remoteAgents(o Options, report agent.Reporter, loop **server.Loop) (net.Listener, *agent.Hub, string, error) {
	tok, err := agent.LoadToken(filepath.Join(o.DataDir, "agent.token"))
	if err != nil {
		return nil, nil, "", err
	}
	l, err := api.ListenTCP(o.Listen, o.TLSCert, o.TLSKey)
	if err != nil {
		return nil, nil, "", err
	}
	names := make([]string, len(o.Cluster.Hosts))
	for i, h := range o.Cluster.Hosts {
		names[i] = h.Name
	}
	hub := agent.NewHub(agent.HubOptions{Hosts: names, Do: report,
		DoEach: func(ctx context.Context, makes []agent.Make) ([][]event.Event, []error) {
			return (*loop).DoEach(ctx, makes)
		},
		View:             func(fn func(*state.State)) { (*loop).View(func(k *live.Core) { fn(k.State) }) },
		HeartbeatTimeout: o.Server.HeartbeatTimeout, KillGrace: o.Server.KillGrace, AllowRoot: o.Server.AllowRootJobs, AllowRootNow: allowRootNow(o, loop), Logf: o.Logf})
	return l, hub, tok, nil
}

// noAgent stands for the agents of a server without a TCP listener:
// placements wait for them (their hosts are unavail, so none is made).
type noAgent struct{}

func (noAgent) Start(event.Placement, *event.Submit) {}
func (noAgent) Kill(event.JobID, int, string)        {}
func (noAgent) Suspend(event.JobID, int, string)     {}
func (noAgent) Resume(event.JobID, int, string)      {}

// DevCluster returns the configuration of a dev server: one host, this
// machine (its host name, its cores as slots, its memory in MB as mem),
// one queue `normal` under firstfit.
func DevCluster() (*cluster.Cluster, *cluster.Server, string, error) {
	name, err := os.Hostname()
	if err != nil || name == "" {
		name = "localhost"
	}
	text := fmt.Sprintf("hosts:\n  - {name: %q, slots: %d, resources: {mem: %d}}\nqueues:\n  - {name: normal, policy: firstfit}\n",
		name, runtime.NumCPU(), memMB())
	c, s, err := cluster.ParseConfig("dev configuration", []byte(text))
	return c, s, text, err
}

// memMB returns the machine's memory in MB (MemTotal of /proc/meminfo),
// or 1024 when it cannot be read.
func memMB() int64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 1024
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "MemTotal:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err == nil && kb > 0 {
				return kb / 1024
			}
		}
	}
	return 1024
}
