package store

import (
	"context"
	"errors"
	"math"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/xce-sched/xce/internal/event"
)

// putRaw stores value at index i of a closed store's log.
func putRaw(t *testing.T, path string, i uint64, value []byte) {
	t.Helper()
	rawUpdate(t, path, func(tx *bolt.Tx) error { return tx.Bucket([]byte(bucketLog)).Put(u64(i), value) })
}

// TestUnknownTypes: a newer binary's event that may be skipped reaches fn
// with its index and type; one that may not stops Read with an error
// wrapping event.ErrUnknown that names its index, after the events
// before it.
func TestUnknownTypes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log.db")
	s := open(t, path)
	if _, err := s.Append(context.Background(), submit(1)); err != nil {
		t.Fatal(err)
	}
	s.Close()
	putRaw(t, path, 2, frame([]byte(`{"index":2,"at":7,"type":"job.teleported","skip_ok":true,"teleport":{"to":"mars"}}`)))
	putRaw(t, path, 3, frame([]byte(`{"index":3,"at":8,"type":"job.killed","killed":{"job":1,"by":"root"}}`)))
	putRaw(t, path, 4, frame([]byte(`{"index":4,"at":9,"type":"job.cloned"}`)))
	putRaw(t, path, 5, frame([]byte(`{"index":5,"at":9,"type":"job.killed","killed":{"job":1,"by":"root"}}`)))
	s = open(t, path)
	defer s.Close()
	if s.Last() != 5 {
		t.Fatalf("Last %d, want 5", s.Last())
	}
	var got []event.Event
	err := s.Read(1, func(e event.Event) error { got = append(got, e); return nil })
	if !errors.Is(err, event.ErrUnknown) || !strings.Contains(err.Error(), "event 4") {
		t.Errorf("Read: %v, want ErrUnknown naming event 4", err)
	}
	want := []event.Event{
		indexed(1, []event.Event{submit(1)})[0],
		{Index: 2, At: 7, Type: "job.teleported", SkipOK: true},
		{Index: 3, At: 8, Type: event.JobKilled, Killed: &event.Killed{Job: 1, By: "root"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Read passed\n %+v\nwant %+v", got, want)
	}
	if e, err := s.Event(2); err != nil || !reflect.DeepEqual(e, want[1]) {
		t.Errorf("Event(2) = %+v, %v", e, err)
	}
	if _, err := s.Event(4); !errors.Is(err, event.ErrUnknown) {
		t.Errorf("Event(4): %v, want ErrUnknown", err)
	}
	// Appends continue after the last record, known or not.
	if got, err := s.Append(context.Background(), submit(2)); err != nil || !reflect.DeepEqual(got, []uint64{6}) {
		t.Errorf("append after unknown records: %v, %v", got, err)
	}
}

// TestCorrupt: records that do not read back as written stop Read at
// their index with ErrCorrupt, after the good ones before them.
func TestCorrupt(t *testing.T) {
	good := func(i uint64) []byte {
		e := submit(int64(i))
		e.Index = i
		rec, err := encodeRecord(&e)
		if err != nil {
			t.Fatal(err)
		}
		return rec
	}
	flipped := good(2)
	flipped[len(flipped)-3] ^= 0x20
	cases := []struct {
		name  string
		edit  func(tx *bolt.Tx) error
		says  string
		event uint64 // Event(event) says ErrCorrupt too
	}{
		{"flipped bit", func(tx *bolt.Tx) error { return tx.Bucket([]byte(bucketLog)).Put(u64(2), flipped) }, "event 2: corrupt store: checksum", 2},
		{"short record", func(tx *bolt.Tx) error { return tx.Bucket([]byte(bucketLog)).Put(u64(2), []byte{1, 2}) }, "event 2: corrupt store: record of 2 bytes", 2},
		{"wrong index", func(tx *bolt.Tx) error { return tx.Bucket([]byte(bucketLog)).Put(u64(2), good(7)) }, "event 2: corrupt store: record says index 7", 2},
		{"gap", func(tx *bolt.Tx) error { return tx.Bucket([]byte(bucketLog)).Delete(u64(2)) }, "event 2 is missing", 2},
		{"9-byte key", func(tx *bolt.Tx) error {
			return tx.Bucket([]byte(bucketLog)).Put([]byte{0, 0, 0, 0, 0, 0, 0, 1, 9}, good(1))
		}, "key of 9 bytes", 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "log.db")
			s := open(t, path)
			if _, err := s.Append(context.Background(), submit(1), submit(2), submit(3)); err != nil {
				t.Fatal(err)
			}
			s.Close()
			rawUpdate(t, path, c.edit)
			s = open(t, path)
			defer s.Close()
			var got []uint64
			err := s.Read(1, func(e event.Event) error { got = append(got, e.Index); return nil })
			if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), c.says) {
				t.Errorf("Read: %v, want ErrCorrupt saying %q", err, c.says)
			}
			if !reflect.DeepEqual(got, []uint64{1}) {
				t.Errorf("Read passed %v, want [1]", got)
			}
			if c.event > 0 {
				if _, err := s.Event(c.event); !errors.Is(err, ErrCorrupt) {
					t.Errorf("Event(%d): %v, want ErrCorrupt", c.event, err)
				}
			}
		})
	}
}

// TestAppendRefused: an event that cannot be written fails its own call
// only, and consumes no index.
func TestAppendRefused(t *testing.T) {
	s := open(t, filepath.Join(t.TempDir(), "log.db"))
	defer s.Close()
	nan := event.Event{Type: event.CycleDecided, Cycle: &event.Cycle{Started: []event.Placement{{Job: 1, Shared: map[string]float64{"lic": math.NaN()}}}}}
	cases := []struct {
		name   string
		events []event.Event
		says   string
	}{
		{"no payload", []event.Event{submit(1), {Type: event.JobKilled}}, "event 2 of 2"},
		{"two payloads", []event.Event{{Type: event.JobKilled, Killed: &event.Killed{Job: 1}, Host: &event.Host{Name: "h"}}}, "want exactly its own payload"},
		{"unknown type", []event.Event{{Type: "job.cloned", SkipOK: true}}, "unknown event type"},
		{"NaN", []event.Event{submit(1), nan}, "event 2 of 2: json: unsupported value: NaN"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := s.Append(context.Background(), c.events...)
			if err == nil || got != nil || !strings.Contains(err.Error(), c.says) {
				t.Errorf("Append: %v, %v; want an error saying %q", got, err, c.says)
			}
			if s.Last() != 0 || s.Err() != nil {
				t.Errorf("Last %d, Err %v after a refused append", s.Last(), s.Err())
			}
		})
	}
	if got, err := s.Append(context.Background(), submit(1)); err != nil || !reflect.DeepEqual(got, []uint64{1}) {
		t.Errorf("next append: %v, %v; want [1]", got, err)
	}
	if got := readAll(t, s, 1); len(got) != 1 {
		t.Errorf("%d events stored, want 1", len(got))
	}
	if got, err := s.Append(context.Background()); got != nil || err != nil {
		t.Errorf("empty append: %v, %v", got, err)
	}
}

// TestSnapshotCompact: snapshots replace each other; Compact deletes up
// to the snapshot; start-up is Snapshot then Read(index+1); each step's
// outcome is worked out by hand.
func TestSnapshotCompact(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log.db")
	s := open(t, path)
	defer func() { s.Close() }()
	ctx := context.Background()
	if _, _, ok, err := s.Snapshot(); ok || err != nil {
		t.Fatalf("new store has a snapshot: %v %v", ok, err)
	}
	for j := int64(1); j <= 6; j++ {
		if _, err := s.Append(ctx, submit(j)); err != nil {
			t.Fatal(err)
		}
	}
	steps := []struct {
		name string
		do   func() error
		err  string // "" for success
	}{
		{"snapshot 0", func() error { return s.SaveSnapshot(0, []byte("x")) }, "save snapshot at 0: no such event (last is 6)"},
		{"snapshot 7", func() error { return s.SaveSnapshot(7, []byte("x")) }, "save snapshot at 7: no such event (last is 6)"},
		{"compact without snapshot", func() error { return s.Compact(1) }, "compact up to 1: beyond the latest snapshot, at 0"},
		{"snapshot 4", func() error { return s.SaveSnapshot(4, []byte("four")) }, ""},
		{"snapshot 3", func() error { return s.SaveSnapshot(3, []byte("three")) }, "save snapshot at 3: older than the latest snapshot, at 4"},
		{"snapshot 4 again", func() error { return s.SaveSnapshot(4, []byte("FOUR")) }, ""},
		{"compact 5", func() error { return s.Compact(5) }, "compact up to 5: beyond the latest snapshot, at 4"},
		{"compact 2", func() error { return s.Compact(2) }, ""},
		{"compact 1", func() error { return s.Compact(1) }, ""},
		{"reopen", func() error { s.Close(); s = open(t, path); return nil }, ""},
		{"compact 4", func() error { return s.Compact(4) }, ""},
	}
	for _, st := range steps {
		err := st.do()
		if st.err == "" && err != nil || st.err != "" && (err == nil || !strings.Contains(err.Error(), st.err)) {
			t.Fatalf("%s: %v, want %q", st.name, err, st.err)
		}
	}
	if s.Err() != nil {
		t.Fatalf("refused requests failed the store: %v", s.Err())
	}
	index, data, ok, err := s.Snapshot()
	if err != nil || !ok || index != 4 || string(data) != "FOUR" {
		t.Fatalf("Snapshot = %d %q %v %v, want 4 FOUR", index, data, ok, err)
	}
	var jobs []int64
	if err := s.Read(index+1, func(e event.Event) error { jobs = append(jobs, e.Submit.Job); return nil }); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(jobs, []int64{5, 6}) {
		t.Errorf("tail after the snapshot: jobs %v, want [5 6]", jobs)
	}
	for _, i := range []uint64{0, 1, 4} {
		if err := s.Read(i, func(event.Event) error { return nil }); !errors.Is(err, ErrCompacted) || !strings.Contains(err.Error(), "the log starts at 5") {
			t.Errorf("Read(%d): %v, want ErrCompacted", i, err)
		}
	}
	for i, want := range map[uint64]error{0: ErrNotFound, 1: ErrCompacted, 4: ErrCompacted, 5: nil, 7: ErrNotFound} {
		if _, err := s.Event(i); !errors.Is(err, want) || (want == nil) != (err == nil) {
			t.Errorf("Event(%d): %v, want %v", i, err, want)
		}
	}
	// Compacting everything keeps Last, and the next index.
	if err := s.SaveSnapshot(6, []byte("six")); err != nil {
		t.Fatal(err)
	}
	if err := s.Compact(6); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s = open(t, path)
	if s.Last() != 6 {
		t.Errorf("Last after compacting all %d, want 6", s.Last())
	}
	if got, err := s.Append(ctx, submit(7)); err != nil || !reflect.DeepEqual(got, []uint64{7}) {
		t.Errorf("append after compacting all: %v, %v; want [7]", got, err)
	}
	if got := readAll(t, s, 7); len(got) != 1 || got[0].Submit.Job != 7 {
		t.Errorf("Read(7): %+v", got)
	}
}

// TestReadChunks: Read crosses its chunks without losing or repeating an
// event, stops at fn's error (returned as is), and may append from fn.
func TestReadChunks(t *testing.T) {
	s := open(t, filepath.Join(t.TempDir(), "log.db"))
	defer s.Close()
	n := 2*readChunk + 3
	evs := make([]event.Event, n)
	for i := range evs {
		evs[i] = submit(int64(i + 1))
	}
	if _, err := s.Append(context.Background(), evs...); err != nil {
		t.Fatal(err)
	}
	for _, from := range []uint64{1, readChunk, readChunk + 1, uint64(n)} {
		got := readAll(t, s, from)
		if len(got) != n-int(from)+1 {
			t.Fatalf("Read(%d): %d events, want %d", from, len(got), n-int(from)+1)
		}
		for k, e := range got {
			if e.Index != from+uint64(k) || e.Submit.Job != int64(from)+int64(k) {
				t.Fatalf("Read(%d): event %d has index %d job %d", from, k, e.Index, e.Submit.Job)
			}
		}
	}
	stop := errors.New("stop")
	seen := 0
	if err := s.Read(1, func(e event.Event) error {
		seen++
		if e.Index == readChunk+2 {
			return stop
		}
		return nil
	}); err != stop || seen != readChunk+2 {
		t.Errorf("Read stopped with %v after %d events, want stop after %d", err, seen, readChunk+2)
	}
	// fn appends: no deadlock, and Read stops at the Last it started with.
	var last uint64
	appended := false
	if err := s.Read(uint64(n), func(e event.Event) error {
		last = e.Index
		if !appended {
			appended = true
			_, err := s.Append(context.Background(), submit(int64(n+1)))
			return err
		}
		return nil
	}); err != nil || last != uint64(n) || s.Last() != uint64(n+1) {
		t.Errorf("Read with an append in fn: %v, read up to %d, want %d; Last %d, want %d", err, last, n, s.Last(), n+1)
	}
}
