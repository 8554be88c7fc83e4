package replica

import (
	"bytes"
	"errors"
	"io"
	"path/filepath"
	"testing"
	"time"

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
	if err := g.Restore(io.NopCloser(bytes.NewReader(s.Bytes()))); err != nil {
		t.Fatal(err)
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

// TestBoltStore stores, reads back and deletes raft entries, and keeps
// stable values, across a reopen.
func TestBoltStore(t *testing.T) {
	path := filepath.Join(t.TempDir(), "raft.db")
	b, err := OpenBoltStore(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Get([]byte("x")); err == nil || err.Error() != "not found" {
		t.Fatalf("missing key: %v", err)
	}
	at := time.Unix(0, 1_700_000_000_123_456_789)
	logs := []*raft.Log{
		{Index: 1, Term: 1, Type: raft.LogConfiguration, Data: []byte("conf")},
		{Index: 2, Term: 1, Type: raft.LogNoop},
		{Index: 3, Term: 2, Type: raft.LogCommand, Data: []byte("abc"), Extensions: []byte("x"), AppendedAt: at},
	}
	if err := b.StoreLogs(logs); err != nil {
		t.Fatal(err)
	}
	if err := b.SetUint64([]byte("CurrentTerm"), 2); err != nil {
		t.Fatal(err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if b, err = OpenBoltStore(path); err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	var l raft.Log
	if err := b.GetLog(3, &l); err != nil {
		t.Fatal(err)
	}
	if l.Index != 3 || l.Term != 2 || l.Type != raft.LogCommand || string(l.Data) != "abc" || string(l.Extensions) != "x" || !l.AppendedAt.Equal(at) {
		t.Fatalf("entry 3 read back as %+v", l)
	}
	if term, err := b.GetUint64([]byte("CurrentTerm")); err != nil || term != 2 {
		t.Fatalf("term %d, %v", term, err)
	}
	if err := b.DeleteRange(1, 2); err != nil {
		t.Fatal(err)
	}
	first, _ := b.FirstIndex()
	last, _ := b.LastIndex()
	if first != 3 || last != 3 {
		t.Fatalf("first %d last %d, want 3 3", first, last)
	}
	if err := b.GetLog(1, &l); !errors.Is(err, raft.ErrLogNotFound) {
		t.Fatalf("deleted entry: %v", err)
	}
}
