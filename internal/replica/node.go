package replica

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	raftboltdb "github.com/hashicorp/raft-boltdb/v2"

	"github.com/xce-sched/xce/internal/event"
	"github.com/xce-sched/xce/internal/state"
)

// ErrNotLeader is returned (wrapped, naming the leader's raft address
// when one is known) by writes to a member that is not the leader.
var ErrNotLeader = errors.New("not the raft leader")

// Timeouts are raft's timing settings. The zero value of a field means
// its default (DefaultTimeouts).
type Timeouts struct {
	// Heartbeat: a follower that hears nothing from the leader this long
	// starts an election (after a random extra of up to as much again).
	Heartbeat time.Duration
	// Election: a candidate that wins no election this long tries again.
	Election time.Duration
	// LeaderLease: a leader that reaches no quorum this long steps down.
	LeaderLease time.Duration
	// Commit: the longest a leader waits before sending new entries.
	Commit time.Duration
}

// DefaultTimeouts are tuned for servers on one site's network (a failed
// leader is replaced in about 1-2 s; docs/ha.md), tighter than raft's
// WAN-safe defaults of 1 s / 1 s / 500 ms / 50 ms.
var DefaultTimeouts = Timeouts{
	Heartbeat:   500 * time.Millisecond,
	Election:    500 * time.Millisecond,
	LeaderLease: 250 * time.Millisecond,
	Commit:      10 * time.Millisecond,
}

// Config configures a Node.
type Config struct {
	// Addr is the raft address, host:port, that the node listens on and
	// that the other members reach it at; it is also the node's raft ID.
	// Port 0 takes a free port (tests): the node's Addr says which.
	Addr string
	// Dir holds the raft store (raft.db) and the snapshots (snapshots/);
	// created 0700 when missing.
	Dir string
	// Peers, when not empty, are the raft addresses of the cluster's
	// first members, Addr among them: a node without raft state
	// bootstraps the cluster from them (every first member may do so,
	// with the same list). A node that has raft state ignores Peers.
	Peers []string
	// Timeouts: zero fields take DefaultTimeouts'.
	Timeouts Timeouts
	// SnapshotThreshold: entries since the last snapshot before raft takes
	// another (0: raft's default, 8192).
	SnapshotThreshold uint64
	// TrailingLogs: entries raft keeps in its log after a snapshot, for
	// followers a little behind (0: SnapshotThreshold when that is set,
	// else raft's default, 10240). A member further behind than that
	// receives a snapshot instead.
	TrailingLogs uint64
	// SnapshotInterval: how often raft checks whether to take a snapshot,
	// with a random extra of up to as much again (0: raft's default,
	// 120 s; at least 5 ms).
	SnapshotInterval time.Duration
	// Initial, when set, is a single server's state (its recovered event
	// log) that this node, without raft state yet, makes the start of a new
	// cluster of which it is the only voter: the state goes into a raft
	// snapshot at index 1, term 1 (members that join later receive it as
	// that snapshot). Peers must then be empty or name this node alone.
	Initial *state.State
	// OnApply, when set, is the FSM's OnApply: told of every entry's
	// events once applied (from raft's FSM goroutine; it must return
	// quickly).
	OnApply func(events []event.Event)
	// OnRestore, when set, is the FSM's OnRestore: told of the index of
	// the last event of every snapshot the state is restored from.
	OnRestore func(index uint64)
	// LogOutput receives raft's own log (warnings and errors); nil
	// discards it.
	LogOutput io.Writer
}

// Node is one member of a replicated control plane.
type Node struct {
	raft  *raft.Raft
	fsm   *FSM
	trans *raft.NetworkTransport
	store *raftboltdb.BoltStore
	addr  string
	// appended is the raft index of the last entry Append committed.
	appended atomic.Uint64
}

// Open starts a node: it opens its raft store and snapshots in cfg.Dir,
// listens on cfg.Addr, and bootstraps the cluster from cfg.Peers when it
// has no raft state. It does not wait for a leader (Leader, WaitLeader).
func Open(cfg Config) (*Node, error) {
	if err := os.MkdirAll(cfg.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("raft: %w", err)
	}
	out := cfg.LogOutput
	if out == nil {
		out = io.Discard
	}
	logger := hclog.New(&hclog.LoggerOptions{Name: "raft", Output: out, Level: hclog.Warn})
	store, err := raftboltdb.NewBoltStore(filepath.Join(cfg.Dir, "raft.db"))
	if err != nil {
		return nil, fmt.Errorf("raft store: %w", err)
	}
	n := &Node{store: store}
	fail := func(err error) (*Node, error) {
		if n.trans != nil {
			_ = n.trans.Close()
		}
		_ = store.Close()
		return nil, err
	}
	snaps, err := raft.NewFileSnapshotStoreWithLogger(filepath.Join(cfg.Dir, "snapshots"), 2, logger)
	if err != nil {
		return fail(fmt.Errorf("raft snapshots: %w", err))
	}
	if n.trans, err = raft.NewTCPTransportWithLogger(cfg.Addr, nil, 3, 10*time.Second, logger); err != nil {
		return fail(fmt.Errorf("raft transport on %s: %w", cfg.Addr, err))
	}
	n.addr = string(n.trans.LocalAddr())
	rc := raftConfig(n.addr, cfg, logger)
	existing, err := raft.HasExistingState(store, store, snaps)
	if err != nil {
		return fail(fmt.Errorf("raft state: %w", err))
	}
	n.fsm = NewFSM(state.New())
	n.fsm.OnApply = cfg.OnApply
	n.fsm.OnRestore = cfg.OnRestore
	if !existing && cfg.Initial != nil {
		if len(cfg.Peers) > 1 || len(cfg.Peers) == 1 && cfg.Peers[0] != n.addr {
			return fail(fmt.Errorf("raft: a single server's state starts a cluster of one: --peers must name this server alone (%s), not %v; join the others after (docs/ha.md)", n.addr, cfg.Peers))
		}
		if err := seed(cfg.Initial, n.addr, store, snaps, n.trans); err != nil {
			return fail(err)
		}
		cfg.Peers = nil
	}
	if n.raft, err = raft.NewRaft(rc, n.fsm, store, store, snaps, n.trans); err != nil {
		return fail(fmt.Errorf("raft: %w", err))
	}
	if !existing && len(cfg.Peers) > 0 {
		if err := n.Bootstrap(cfg.Peers); err != nil {
			_ = n.Close()
			return nil, err
		}
	}
	return n, nil
}

// seed writes the raft state of a new one-voter cluster whose FSM starts
// from st: a snapshot of st at index 1, term 1, whose configuration is
// this node alone, and the current term 1.
func seed(st *state.State, addr string, stable raft.StableStore, snaps raft.SnapshotStore, trans raft.Transport) error {
	data, err := st.Marshal()
	if err != nil {
		return fmt.Errorf("raft seed: %w", err)
	}
	conf := raft.Configuration{Servers: []raft.Server{{Suffrage: raft.Voter, ID: raft.ServerID(addr), Address: raft.ServerAddress(addr)}}}
	sink, err := snaps.Create(raft.SnapshotVersionMax, 1, 1, conf, 1, trans)
	if err != nil {
		return fmt.Errorf("raft seed: %w", err)
	}
	if _, err := sink.Write(data); err != nil {
		_ = sink.Cancel()
		return fmt.Errorf("raft seed: %w", err)
	}
	if err := sink.Close(); err != nil {
		return fmt.Errorf("raft seed: %w", err)
	}
	if err := stable.SetUint64([]byte("CurrentTerm"), 1); err != nil {
		return fmt.Errorf("raft seed: %w", err)
	}
	return nil
}

// Join adds the node at raft address addr as a voter (its ID is its
// address); on the leader only (ErrNotLeader otherwise).
func (n *Node) Join(ctx context.Context, addr string) error {
	if err := wait(ctx, n.raft.AddVoter(raft.ServerID(addr), raft.ServerAddress(addr), 0, timeout(ctx))); err != nil {
		if errors.Is(err, raft.ErrNotLeader) {
			return fmt.Errorf("raft join %s: %w (leader %q)", addr, ErrNotLeader, n.Leader())
		}
		return fmt.Errorf("raft join %s: %w", addr, err)
	}
	return nil
}

// Remove removes the member at raft address addr; on the leader only.
func (n *Node) Remove(ctx context.Context, addr string) error {
	if err := wait(ctx, n.raft.RemoveServer(raft.ServerID(addr), 0, timeout(ctx))); err != nil {
		if errors.Is(err, raft.ErrNotLeader) {
			return fmt.Errorf("raft remove %s: %w (leader %q)", addr, ErrNotLeader, n.Leader())
		}
		return fmt.Errorf("raft remove %s: %w", addr, err)
	}
	return nil
}

// Bootstrap makes a new cluster whose voters are the raft addresses
// peers, the node's own among them. Every first member may call it with
// the same list; it fails (raft.ErrCantBootstrap) on a node that has raft
// state already.
func (n *Node) Bootstrap(peers []string) error {
	if !slices.Contains(peers, n.addr) {
		return fmt.Errorf("raft bootstrap: the peers %v do not name this server's raft address %s", peers, n.addr)
	}
	var servers []raft.Server
	for _, p := range peers {
		servers = append(servers, raft.Server{Suffrage: raft.Voter, ID: raft.ServerID(p), Address: raft.ServerAddress(p)})
	}
	if err := n.raft.BootstrapCluster(raft.Configuration{Servers: servers}).Error(); err != nil {
		return fmt.Errorf("raft bootstrap: %w", err)
	}
	return nil
}

// raftConfig returns raft's configuration for a node at addr.
func raftConfig(addr string, cfg Config, logger hclog.Logger) *raft.Config {
	rc := raft.DefaultConfig()
	rc.LocalID = raft.ServerID(addr)
	rc.Logger = logger
	t, d := cfg.Timeouts, DefaultTimeouts
	rc.HeartbeatTimeout = orDefault(t.Heartbeat, d.Heartbeat)
	rc.ElectionTimeout = orDefault(t.Election, d.Election)
	rc.LeaderLeaseTimeout = orDefault(t.LeaderLease, d.LeaderLease)
	rc.CommitTimeout = orDefault(t.Commit, d.Commit)
	if cfg.SnapshotThreshold > 0 {
		rc.SnapshotThreshold = cfg.SnapshotThreshold
		rc.TrailingLogs = cfg.SnapshotThreshold
	}
	if cfg.TrailingLogs > 0 {
		rc.TrailingLogs = cfg.TrailingLogs
	}
	if cfg.SnapshotInterval > 0 {
		rc.SnapshotInterval = cfg.SnapshotInterval
	}
	return rc
}

func orDefault(v, def time.Duration) time.Duration {
	if v > 0 {
		return v
	}
	return def
}

// Addr returns the node's raft address (its ID).
func (n *Node) Addr() string { return n.addr }

// FSM returns the node's state machine.
func (n *Node) FSM() *FSM { return n.fsm }

// Raft returns the raft instance (membership changes, stats).
func (n *Node) Raft() *raft.Raft { return n.raft }

// IsLeader reports whether the node is the leader now.
func (n *Node) IsLeader() bool { return n.raft.State() == raft.Leader }

// Leader returns the leader's raft address, "" when none is known.
func (n *Node) Leader() string {
	addr, _ := n.raft.LeaderWithID()
	return string(addr)
}

// LeaderCh returns raft's leadership channel: true when this node
// becomes the leader, false when it stops being it.
func (n *Node) LeaderCh() <-chan bool { return n.raft.LeaderCh() }

// Barrier waits until every entry committed before it is applied to this
// node's FSM (a new leader calls it before it builds its loop's state).
// It fails when the node is not the leader or ctx ends first.
func (n *Node) Barrier(ctx context.Context) error {
	return wait(ctx, n.raft.Barrier(timeout(ctx)))
}

// Append replicates a batch of events as one raft entry and returns their
// indexes once a quorum has it durably and this node's FSM applied it
// (server.Log). The events' indexes must follow the replicated state's:
// a batch built on another state is refused whole (ErrStale). On a
// follower: ErrNotLeader, naming the leader.
func (n *Node) Append(ctx context.Context, events ...event.Event) ([]uint64, error) {
	if len(events) == 0 {
		return nil, nil
	}
	data, err := encodeEntry(events)
	if err != nil {
		return nil, fmt.Errorf("raft append: %w", err)
	}
	f := n.raft.Apply(data, timeout(ctx))
	if err := wait(ctx, f); err != nil {
		if errors.Is(err, raft.ErrNotLeader) || errors.Is(err, raft.ErrLeadershipLost) {
			return nil, fmt.Errorf("raft append: %w (leader %q): %w", ErrNotLeader, n.Leader(), err)
		}
		return nil, fmt.Errorf("raft append: %w", err)
	}
	n.appended.Store(f.Index())
	res, ok := f.Response().(Applied)
	if !ok {
		return nil, fmt.Errorf("raft append: the FSM answered %T", f.Response())
	}
	if res.Err != nil {
		return nil, fmt.Errorf("raft append: %w", res.Err)
	}
	idx := make([]uint64, 0, len(events))
	for i := res.First; i <= res.Last && i != 0; i++ {
		idx = append(idx, i)
	}
	return idx, nil
}

// Appended returns the raft index of the last entry Append committed
// through this node (0: none): right after the leader's loop appended a
// cycle, the cycle's entry (the loop is the only writer).
func (n *Node) Appended() uint64 { return n.appended.Load() }

// timeout is how long raft may take to accept a write: until ctx's
// deadline, or 10 s.
func timeout(ctx context.Context) time.Duration {
	if d, ok := ctx.Deadline(); ok {
		return max(time.Until(d), time.Millisecond)
	}
	return 10 * time.Second
}

// wait waits for f, or ctx to end (the write may still happen then).
func wait(ctx context.Context, f raft.Future) error {
	done := make(chan error, 1)
	go func() { done <- f.Error() }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Member is what a node says of itself (xce server members): its raft ID
// and address (the same), its role ("leader", "follower", "candidate",
// "shutdown"), the current term and the index of its last raft entry.
type Member struct {
	ID        string `json:"id"`
	Raft      string `json:"raft"`
	Role      string `json:"role"`
	Term      uint64 `json:"term"`
	LastIndex uint64 `json:"last_index"`
}

// Self returns what the node says of itself now.
func (n *Node) Self() Member {
	return Member{ID: n.addr, Raft: n.addr, Role: strings.ToLower(n.raft.State().String()),
		Term: n.raft.CurrentTerm(), LastIndex: n.raft.LastIndex()}
}

// Close shuts raft down and closes the transport and the store.
func (n *Node) Close() error {
	err := n.raft.Shutdown().Error()
	if cerr := n.trans.Close(); err == nil {
		err = cerr
	}
	if cerr := n.store.Close(); err == nil {
		err = cerr
	}
	return err
}
