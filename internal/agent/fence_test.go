package agent

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/xce-sched/xce/internal/event"
)

// TestFence: an agent of several servers follows a follower's hint of the
// leader; it refuses a start from an older raft term than one it has
// seen, records a newer term from any order, and still knows it after a
// restart (Dir/term).
func TestFence(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "agent")
	open := func() *Remote {
		r, err := NewRemote(RemoteOptions{Server: "127.0.0.1:1,127.0.0.1:2", Name: "h1", Token: "x", Dir: dir})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	r := open()
	if len(r.bases) != 2 || r.bases[1] != "http://127.0.0.1:2" {
		t.Fatalf("servers %v", r.bases)
	}
	// A follower's answer names the leader: the agent goes there; one
	// that names none (or another) sends it to the next server.
	r.next(0, "127.0.0.1:2")
	if got := r.cur.Load(); got != 1 {
		t.Fatalf("after a hint of the second server: server %d", got)
	}
	r.next(1, "10.0.0.9:7700")
	if got := r.cur.Load(); got != 0 {
		t.Fatalf("after an unknown hint: server %d, want 0 (the next)", got)
	}
	r.next(1, "") // another request moved it already
	if got := r.cur.Load(); got != 0 {
		t.Fatalf("a stale move: server %d, want 0", got)
	}
	// A kill from term 7 (of a job the agent does not run) shows term 7.
	r.carryOut(context.Background(), []Order{{Seq: 1, Kind: KindKill, Job: 9, Attempt: 1, Term: 7, Index: 40}})
	if got := r.term.Load(); got != 7 {
		t.Fatalf("term %d after an order of term 7", got)
	}
	// A start from term 6 is refused: the journal never takes it.
	sub := &event.Submit{Job: 1, User: "u", TasksMin: 1, TasksMax: 1, Queue: "normal", Cwd: "/", Command: []string{"true"}}
	r.carryOut(context.Background(), []Order{{Seq: 2, Kind: KindStart, Job: 1, Attempt: 1, Submit: sub,
		Hosts: []event.HostAlloc{{Host: "h1", Slots: 1}}, Term: 6, Index: 41}})
	if running, _ := r.j.registration(); len(running) != 0 {
		t.Fatalf("a start of an older term was taken: %+v", running)
	}
	if r.after != 2 {
		t.Fatalf("after %d, want 2 (the refused order was seen)", r.after)
	}
	r.j.close()
	r.lock.Close()
	data, err := os.ReadFile(filepath.Join(dir, termFile))
	if err != nil || string(data) != "7\n" {
		t.Fatalf("term file %q, %v", data, err)
	}
	r = open()
	defer func() { r.j.close(); r.lock.Close() }()
	if got := r.term.Load(); got != 7 {
		t.Fatalf("term %d after a restart, want 7", got)
	}
}
