package replica

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/xce-sched/xce/internal/event"
	"github.com/xce-sched/xce/internal/state"
)

// fast are timeouts for loopback tests.
var fast = Timeouts{Heartbeat: 200 * time.Millisecond, Election: 200 * time.Millisecond, LeaderLease: 100 * time.Millisecond, Commit: 5 * time.Millisecond}

// submits returns the submit events of jobs from to to, indexed from
// index.
func submits(index uint64, from, to event.JobID) []event.Event {
	var evs []event.Event
	for id := from; id <= to; id++ {
		evs = append(evs, event.Event{Index: index, At: id * 1e9, Type: event.JobSubmitted,
			Submit: &event.Submit{Job: id, User: fmt.Sprintf("u%d", id), TasksMin: 1, TasksMax: 1, Queue: "normal", Cwd: "/", Command: []string{"true"}}})
		index++
	}
	return evs
}

// waitFor polls cond every 20 ms for at most 15 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(15 * time.Second); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("gave up waiting for %s", what)
}

// leader waits for one of nodes to lead and returns it.
func leader(t *testing.T, nodes []*Node) *Node {
	t.Helper()
	var l *Node
	waitFor(t, "a leader", func() bool {
		for _, n := range nodes {
			if n != nil && n.IsLeader() {
				l = n
				return true
			}
		}
		return false
	})
	return l
}

// snap returns a node's replicated state as JSON, and its index.
func snap(t *testing.T, n *Node) ([]byte, uint64) {
	t.Helper()
	var data []byte
	var index uint64
	var err error
	n.FSM().View(func(st *state.State) { data, err = st.Marshal(); index = st.Index })
	if err != nil {
		t.Fatal(err)
	}
	return data, index
}

// startCluster opens three members on loopback, each with the config cfg
// gives for its own directory (dirs) and addr, and bootstraps them
// together. The members still open (nodes[i] not nil) are closed when the
// test ends.
func startCluster(t *testing.T, cfg func(dir, addr string) Config) (nodes []*Node, dirs []string) {
	t.Helper()
	nodes, dirs = make([]*Node, 3), make([]string, 3)
	for i := range dirs {
		dirs[i] = filepath.Join(t.TempDir(), fmt.Sprint(i))
	}
	// Registered after the directories' removal: cleanups run last first.
	t.Cleanup(func() {
		for _, n := range nodes {
			if n != nil {
				_ = n.Close()
			}
		}
	})
	var peers []string
	for i := range nodes {
		n, err := Open(cfg(dirs[i], "127.0.0.1:0"))
		if err != nil {
			t.Fatal(err)
		}
		nodes[i] = n
		peers = append(peers, n.Addr())
	}
	for _, n := range nodes {
		if err := n.Bootstrap(peers); err != nil {
			t.Fatal(err)
		}
	}
	return nodes, dirs
}

// TestCluster runs three members on loopback: writes through the leader
// reach every member's state; a follower refuses writes and names the
// leader; a batch built on a stale state is refused whole; the leader's
// loss elects another that takes writes; the lost member, restarted from
// its directory, catches up.
func TestCluster(t *testing.T) {
	ctx := context.Background()
	nodes, dirs := startCluster(t, func(dir, addr string) Config {
		return Config{Addr: addr, Dir: dir, Timeouts: fast, SnapshotThreshold: 4}
	})
	l := leader(t, nodes)
	idx, err := l.Append(ctx, submits(1, 1, 5)...)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(idx) != "[1 2 3 4 5]" {
		t.Fatalf("indexes %v, want [1 2 3 4 5]", idx)
	}
	for _, n := range nodes {
		if n == l {
			continue
		}
		_, err := n.Append(ctx, submits(6, 6, 6)...)
		if !errors.Is(err, ErrNotLeader) {
			t.Fatalf("a follower's append: %v, want ErrNotLeader", err)
		}
	}
	if _, err := l.Append(ctx, submits(5, 5, 6)...); !errors.Is(err, ErrStale) {
		t.Fatalf("a stale batch: %v, want ErrStale", err)
	}
	want, _ := snap(t, l)
	for i, n := range nodes {
		waitFor(t, fmt.Sprintf("member %d at index 5", i), func() bool { _, at := snap(t, n); return at == 5 })
		if got, _ := snap(t, n); !bytes.Equal(got, want) {
			t.Fatalf("member %d's state differs:\n%s\nwant\n%s", i, got, want)
		}
	}

	// The leader goes away.
	li := 0
	for i, n := range nodes {
		if n == l {
			li = i
		}
	}
	lostAddr := l.Addr()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	nodes[li] = nil
	l = leader(t, nodes)
	if idx, err = l.Append(ctx, submits(6, 6, 8)...); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(idx) != "[6 7 8]" {
		t.Fatalf("indexes %v, want [6 7 8]", idx)
	}
	n, err := Open(Config{Addr: lostAddr, Dir: dirs[li], Timeouts: fast, SnapshotThreshold: 4})
	if err != nil {
		t.Fatal(err)
	}
	nodes[li] = n
	want, _ = snap(t, l)
	for i, n := range nodes {
		waitFor(t, fmt.Sprintf("member %d at index 8", i), func() bool { _, at := snap(t, n); return at == 8 })
		got, _ := snap(t, n)
		if !bytes.Equal(got, want) {
			t.Fatalf("member %d's state differs:\n%s\nwant\n%s", i, got, want)
		}
	}
	var users []string
	nodes[li].FSM().View(func(st *state.State) {
		for _, j := range st.Jobs {
			users = append(users, j.User)
		}
	})
	if fmt.Sprint(users) != "[u1 u2 u3 u4 u5 u6 u7 u8]" {
		t.Fatalf("the restarted member's jobs: %v", users)
	}
}

// TestSeedAndJoin makes a single server's state the start of a cluster of
// one, appends to it, and joins a second member, which receives the state
// (as the seed snapshot) and the entries after it.
func TestSeedAndJoin(t *testing.T) {
	ctx := context.Background()
	st := state.New()
	for _, e := range submits(1, 1, 3) {
		if err := st.Apply(e); err != nil {
			t.Fatal(err)
		}
	}
	a, err := Open(Config{Addr: "127.0.0.1:0", Dir: filepath.Join(t.TempDir(), "a"), Timeouts: fast, Initial: st, Peers: []string{"127.0.0.1:1"}})
	if err == nil {
		a.Close()
		t.Fatal("a seed with other peers was taken")
	}
	a, err = Open(Config{Addr: "127.0.0.1:0", Dir: filepath.Join(t.TempDir(), "a"), Timeouts: fast, Initial: st})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	leader(t, []*Node{a})
	if idx, err := a.Append(ctx, submits(4, 4, 4)...); err != nil || fmt.Sprint(idx) != "[4]" {
		t.Fatalf("append: %v %v", idx, err)
	}
	restored := make(chan uint64, 4)
	b, err := Open(Config{Addr: "127.0.0.1:0", Dir: filepath.Join(t.TempDir(), "b"), Timeouts: fast, OnRestore: func(i uint64) { restored <- i }})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if err := b.Join(ctx, a.Addr()); !errors.Is(err, ErrNotLeader) {
		t.Fatalf("a join through a non-leader: %v", err)
	}
	if err := a.Join(ctx, b.Addr()); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Append(ctx, submits(5, 5, 5)...); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the joined member at index 5", func() bool { _, at := snap(t, b); return at == 5 })
	want, _ := snap(t, a)
	if got, _ := snap(t, b); !bytes.Equal(got, want) {
		t.Fatalf("the joined member's state:\n%s\nwant\n%s", got, want)
	}
	var users []string
	b.FSM().View(func(st *state.State) {
		for _, j := range st.Jobs {
			users = append(users, j.User)
		}
	})
	if fmt.Sprint(users) != "[u1 u2 u3 u4 u5]" {
		t.Fatalf("the joined member's jobs: %v", users)
	}
	if len(restored) != 1 || <-restored != 3 {
		t.Fatal("the joined member was not told of the seed snapshot (event 3) once")
	}
	if err := a.Remove(ctx, b.Addr()); err != nil {
		t.Fatal(err)
	}
}

// TestCompactedCatchUp: with a small snapshot threshold, one trailing
// entry and a short snapshot interval, the leader compacts its log; a
// member stopped before is caught up with a snapshot (OnRestore tells the
// index of its last event), then with the entries after it.
func TestCompactedCatchUp(t *testing.T) {
	ctx := context.Background()
	restored := make(chan uint64, 16)
	cfg := func(dir, addr string) Config {
		return Config{Addr: addr, Dir: dir, Timeouts: fast, SnapshotThreshold: 2, TrailingLogs: 1, SnapshotInterval: 10 * time.Millisecond,
			OnRestore: func(index uint64) { restored <- index }}
	}
	nodes, dirs := startCluster(t, cfg)
	l := leader(t, nodes)
	if _, err := l.Append(ctx, submits(1, 1, 1)...); err != nil {
		t.Fatal(err)
	}
	f := 0
	for nodes[f] == l {
		f++
	}
	waitFor(t, "the follower at index 1", func() bool { _, at := snap(t, nodes[f]); return at == 1 })
	addr := nodes[f].Addr()
	if err := nodes[f].Close(); err != nil {
		t.Fatal(err)
	}
	nodes[f] = nil
	for len(restored) > 0 {
		<-restored
	}
	first := l.Raft().LastIndex()
	for id := event.JobID(2); id <= 6; id++ {
		if _, err := l.Append(ctx, submits(uint64(id), id, id)...); err != nil {
			t.Fatal(err)
		}
	}
	// The leader compacted the entries after the follower's.
	waitFor(t, "a snapshot beyond the follower's entries", func() bool {
		var at uint64
		_, err := fmt.Sscan(l.Raft().Stats()["last_snapshot_index"], &at)
		return err == nil && at > first+1
	})
	n, err := Open(cfg(dirs[f], addr))
	if err != nil {
		t.Fatal(err)
	}
	nodes[f] = n
	waitFor(t, "the restarted member at index 6", func() bool { _, at := snap(t, n); return at == 6 })
	var got []uint64
	for len(restored) > 0 {
		got = append(got, <-restored)
	}
	if len(got) == 0 || got[len(got)-1] < 2 {
		t.Fatalf("the restarted member was restored from snapshots at events %v, want one beyond event 1", got)
	}
	want, _ := snap(t, l)
	if s, _ := snap(t, n); !bytes.Equal(s, want) {
		t.Fatalf("the restarted member's state:\n%s\nwant\n%s", s, want)
	}
}
