package replica

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/hashicorp/raft"

	"github.com/xce-sched/xce/internal/event"
	"github.com/xce-sched/xce/internal/state"
)

// sink is a raft.SnapshotSink in memory.
type sink struct {
	bytes.Buffer
	closed, cancelled bool
}

func (s *sink) ID() string    { return "test" }
func (s *sink) Close() error  { s.closed = true; return nil }
func (s *sink) Cancel() error { s.cancelled = true; return nil }

func mustEntry(t *testing.T, index uint64, evs []event.Event) *raft.Log {
	t.Helper()
	data, err := encodeEntry(evs)
	if err != nil {
		t.Fatal(err)
	}
	return &raft.Log{Index: index, Term: 1, Type: raft.LogCommand, Data: data}
}

// TestFSM folds entries, refuses a stale one whole, skips a newer
// binary's skippable event, and restores a snapshot to the same state.
func TestFSM(t *testing.T) {
	f := NewFSM(state.New())
	var told []uint64
	f.OnApply = func(evs []event.Event) {
		for _, e := range evs {
			told = append(told, e.Index)
		}
	}
	res := f.Apply(mustEntry(t, 3, submits(1, 1, 2))).(Applied)
	if res != (Applied{First: 1, Last: 2}) {
		t.Fatalf("first entry: %+v", res)
	}
	res = f.Apply(mustEntry(t, 4, submits(2, 2, 3))).(Applied)
	if !errors.Is(res.Err, ErrStale) || res.First != 0 {
		t.Fatalf("stale entry: %+v", res)
	}
	// A skippable event of a type this binary does not know, then a job.
	data := []byte(`{"events":[{"index":3,"at":5,"type":"future.thing","skip_ok":true},` +
		`{"index":4,"at":6,"type":"job.submitted","submit":{"job":3,"user":"u3","uid":0,"gid":0,"queue":"normal","tasks_min":1,"tasks_max":1,"cwd":"/"}}]}`)
	res = f.Apply(&raft.Log{Index: 5, Term: 1, Type: raft.LogCommand, Data: data}).(Applied)
	if res != (Applied{First: 3, Last: 4}) {
		t.Fatalf("entry with a skipped event: %+v", res)
	}
	// An unknown event that may not be skipped: refused, nothing applied.
	bad := []byte(`{"events":[{"index":5,"at":7,"type":"future.thing"}]}`)
	if res = f.Apply(&raft.Log{Index: 6, Term: 1, Type: raft.LogCommand, Data: bad}).(Applied); !errors.Is(res.Err, event.ErrUnknown) {
		t.Fatalf("unknown event: %+v", res)
	}
	if got := []uint64{1, 2, 3, 4}; !equal(told, got) {
		t.Fatalf("OnApply told %v, want %v", told, got)
	}
	var st0 []byte
	f.View(func(st *state.State) {
		if st.Index != 4 || len(st.Jobs) != 3 || st.Jobs[2].User != "u3" {
			t.Fatalf("state at %d with %d jobs", st.Index, len(st.Jobs))
		}
		st0, _ = st.Marshal()
	})
	sn, err := f.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	var s sink
	if err := sn.Persist(&s); err != nil || !s.closed {
		t.Fatalf("persist: %v, closed %v", err, s.closed)
	}
	g := NewFSM(state.New())
	var restored []uint64
	g.OnRestore = func(index uint64) { restored = append(restored, index) }
	if err := g.Restore(io.NopCloser(bytes.NewReader(s.Bytes()))); err != nil {
		t.Fatal(err)
	}
	if !equal(restored, []uint64{4}) {
		t.Fatalf("OnRestore told %v, want [4]", restored)
	}
	g.View(func(st *state.State) {
		got, _ := st.Marshal()
		if !bytes.Equal(got, st0) {
			t.Fatalf("restored %s\nwant %s", got, st0)
		}
	})
	c, _, err := g.Clone()
	if err != nil || c.Index != 4 || len(c.Jobs) != 3 {
		t.Fatalf("clone: %v", err)
	}
	if err := g.Restore(io.NopCloser(bytes.NewReader([]byte("{")))); err == nil {
		t.Fatal("a broken snapshot restored")
	}
	if len(restored) != 1 {
		t.Fatalf("OnRestore told of a broken snapshot: %v", restored)
	}
}

func equal(a, b []uint64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
