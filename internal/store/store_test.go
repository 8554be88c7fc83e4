package store

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/xce-sched/xce/internal/event"
)

// everyType returns one event of each type, without indexes.
func everyType() []event.Event {
	return []event.Event{
		{At: 5, Type: event.JobSubmitted, Submit: &event.Submit{Job: 1, User: "alice", UID: 1000, GID: 1000, Queue: "normal", TasksMin: 2, TasksMax: 4,
			ResReq: "span[ptile=2]", Estimate: 600, Command: []string{"sh", "-c", "echo hi"}, Cwd: "/home/alice", Env: []string{"A=b"}, Stdout: "out.%J", Rerunnable: true}},
		{At: 6, Type: event.CycleDecided, Cycle: &event.Cycle{Number: 1, Now: 0,
			Started:  []event.Placement{{Job: 1, Attempt: 1, Hosts: []event.HostAlloc{{Host: "h1", Slots: 2, Res: map[string]float64{"mem": 100}}}, Shared: map[string]float64{"lic": 1}}},
			Pending:  []event.Pending{{Job: 2, Reason: "LimitReached", Detail: "L"}},
			Reserved: []event.Reservation{{Job: 2, Start: 60, Hosts: []event.HostAlloc{{Host: "h1", Slots: 4}}}}}},
		{At: 7, Type: event.JobStarted, Started: &event.Started{Job: 1, Attempt: 1, Host: "h1", PID: 4242}},
		{At: 8, Type: event.JobFinished, Finished: &event.Finished{Job: 1, Attempt: 1, ExitCode: 0, Signal: "SIGKILL", Reason: "killed"}},
		{At: 9, Type: event.JobKilled, Killed: &event.Killed{Job: 1, By: "root"}},
		{At: 10, Type: event.HostRegistered, Host: &event.Host{Name: "h1"}},
		{At: 11, Type: event.HostLost, Host: &event.Host{Name: "h1", Reason: "no heartbeat for 30s"}},
		{At: 12, Type: event.HostClosed, Host: &event.Host{Name: "h1"}},
		{At: 13, Type: event.HostOpened, Host: &event.Host{Name: "h1"}},
		{At: 14, Type: event.ConfigReloaded, Config: &event.Config{Text: "hosts: []\n"}},
	}
}

// submit returns a JobSubmitted event for job.
func submit(job int64) event.Event {
	return event.Event{At: job, Type: event.JobSubmitted, Submit: &event.Submit{Job: job, User: "u", Queue: "normal", TasksMin: 1, TasksMax: 1, Cwd: "/", Command: []string{"true"}}}
}

func open(t testing.TB, path string) *Store {
	t.Helper()
	s, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// readAll returns every event from index from.
func readAll(t testing.TB, s *Store, from uint64) []event.Event {
	t.Helper()
	var got []event.Event
	if err := s.Read(from, func(e event.Event) error { got = append(got, e); return nil }); err != nil {
		t.Fatal(err)
	}
	return got
}

// indexed returns events with Index set from first.
func indexed(first uint64, events []event.Event) []event.Event {
	out := make([]event.Event, len(events))
	for i, e := range events {
		e.Index = first + uint64(i)
		out[i] = e
	}
	return out
}

// TestRoundTrip: every event type comes back from Read and Event as
// appended, with indexes 1 to 10, before and after a reopen; the
// caller's events are not modified.
func TestRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log.db")
	s := open(t, path)
	in := everyType()
	got, err := s.Append(context.Background(), in...)
	if err != nil {
		t.Fatal(err)
	}
	if want := []uint64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}; !reflect.DeepEqual(got, want) {
		t.Fatalf("indexes %v, want %v", got, want)
	}
	if !reflect.DeepEqual(in, everyType()) {
		t.Error("Append modified the caller's events")
	}
	want := indexed(1, everyType())
	for round := 0; round < 2; round++ {
		if l := s.Last(); l != 10 {
			t.Errorf("round %d: Last %d, want 10", round, l)
		}
		if all := readAll(t, s, 0); !reflect.DeepEqual(all, want) {
			t.Errorf("round %d: Read(0):\n got %+v\nwant %+v", round, all, want)
		}
		if tail := readAll(t, s, 9); !reflect.DeepEqual(tail, want[8:]) {
			t.Errorf("round %d: Read(9): got %d events, want events 9 and 10", round, len(tail))
		}
		if none := readAll(t, s, 11); len(none) != 0 {
			t.Errorf("round %d: Read(11): %d events, want none", round, len(none))
		}
		for _, w := range want {
			e, err := s.Event(w.Index)
			if err != nil || !reflect.DeepEqual(e, w) {
				t.Errorf("round %d: Event(%d) = %+v, %v; want %+v", round, w.Index, e, err, w)
			}
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		s = open(t, path)
	}
	s.Close()
}

// TestDenseAcrossReopen: indexes continue after the last, across reopens.
func TestDenseAcrossReopen(t *testing.T) {
	// sessions[i] lists the sizes of the Append calls of session i, and
	// want the indexes each call gets, worked out by hand.
	cases := []struct {
		name     string
		sessions [][]int
		want     [][][]uint64
	}{
		{"one each", [][]int{{1}, {1}, {1}}, [][][]uint64{{{1}}, {{2}}, {{3}}}},
		{"mixed", [][]int{{1, 2}, {3}, {}, {1, 1}},
			[][][]uint64{{{1}, {2, 3}}, {{4, 5, 6}}, {}, {{7}, {8}}}},
		{"empty first", [][]int{{}, {2}}, [][][]uint64{{}, {{1, 2}}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "log.db")
			job := int64(0)
			for si, sizes := range c.sessions {
				s := open(t, path)
				for ci, n := range sizes {
					var evs []event.Event
					for range n {
						job++
						evs = append(evs, submit(job))
					}
					got, err := s.Append(context.Background(), evs...)
					if err != nil {
						t.Fatal(err)
					}
					if !reflect.DeepEqual(got, c.want[si][ci]) {
						t.Errorf("session %d call %d: %v, want %v", si, ci, got, c.want[si][ci])
					}
				}
				s.Close()
			}
			s := open(t, path)
			defer s.Close()
			all := readAll(t, s, 1)
			if uint64(len(all)) != s.Last() || int64(len(all)) != job {
				t.Fatalf("%d events, Last %d, appended %d", len(all), s.Last(), job)
			}
			for i, e := range all {
				if e.Index != uint64(i+1) || e.Submit.Job != int64(i+1) {
					t.Errorf("event %d: index %d job %d", i+1, e.Index, e.Submit.Job)
				}
			}
		})
	}
}

// rawUpdate changes a closed store's file with bbolt directly.
func rawUpdate(t *testing.T, path string, fn func(tx *bolt.Tx) error) {
	t.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Update(fn); err != nil {
		t.Fatal(err)
	}
}

// TestHeaderRefused: a file whose header has another format version, or
// a malformed one, is refused with an error naming the file and both
// versions.
func TestHeaderRefused(t *testing.T) {
	cases := []struct {
		name   string
		value  []byte
		target error
		says   []string
	}{
		{"version 2", u64(2), ErrVersion, []string{"format version 2", "reads version 1"}},
		{"version 0", u64(0), ErrVersion, []string{"format version 0", "reads version 1"}},
		{"4 bytes", []byte{0, 0, 0, 1}, ErrCorrupt, []string{"no format version (4 bytes)"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "log.db")
			open(t, path).Close()
			rawUpdate(t, path, func(tx *bolt.Tx) error {
				return tx.Bucket([]byte(bucketHeader)).Put([]byte(keyFormat), c.value)
			})
			s, err := Open(path, Options{})
			if err == nil {
				s.Close()
				t.Fatal("opened")
			}
			if !errors.Is(err, c.target) {
				t.Errorf("error %v, want %v", err, c.target)
			}
			for _, w := range append(c.says, path) {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}

// TestNotAStore: a file that is not a store is refused and left as it
// was; an empty file becomes a store.
func TestNotAStore(t *testing.T) {
	other := filepath.Join(t.TempDir(), "other.db")
	rawUpdate(t, other, func(tx *bolt.Tx) error {
		_, err := tx.CreateBucket([]byte("jobs"))
		return err
	})
	otherBytes, err := os.ReadFile(other)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		data []byte
		says string
	}{
		{"text", []byte("hosts: []\n"), "not a bbolt file"},
		{"zeros 64 KiB", make([]byte, 64<<10), "not a bbolt file"},
		{"text 16 KiB", bytes.Repeat([]byte("0123456789abcdef"), 1024), "not a bbolt file"},
		{"another bbolt file", otherBytes, `without the "xce.store" bucket`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "log.db")
			if err := os.WriteFile(path, c.data, 0o600); err != nil {
				t.Fatal(err)
			}
			s, err := Open(path, Options{})
			if err == nil {
				s.Close()
				t.Fatal("opened")
			}
			if !errors.Is(err, ErrNotStore) || !strings.Contains(err.Error(), c.says) || !strings.Contains(err.Error(), path) {
				t.Errorf("error %q, want ErrNotStore saying %q and the path", err, c.says)
			}
			after, err := os.ReadFile(path)
			if err != nil || !bytes.Equal(after, c.data) {
				t.Errorf("the file changed (%d bytes, was %d; %v)", len(after), len(c.data), err)
			}
		})
	}
	t.Run("empty file", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "log.db")
		if err := os.WriteFile(path, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		s := open(t, path)
		defer s.Close()
		if got, err := s.Append(context.Background(), submit(1)); err != nil || !reflect.DeepEqual(got, []uint64{1}) {
			t.Errorf("append: %v, %v", got, err)
		}
	})
}

// TestLocked: a second Open of a store in use fails with ErrLocked after
// its lock timeout instead of waiting; once the first is closed it opens.
func TestLocked(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log.db")
	first := open(t, path)
	type opened struct {
		s   *Store
		err error
	}
	ch := make(chan opened, 1)
	go func() {
		s, err := Open(path, Options{LockTimeout: 100 * time.Millisecond})
		ch <- opened{s, err}
	}()
	select {
	case o := <-ch:
		if o.err == nil {
			o.s.Close()
			t.Fatal("a second Open succeeded")
		}
		if !errors.Is(o.err, ErrLocked) || !strings.Contains(o.err.Error(), "in use by another process") || !strings.Contains(o.err.Error(), path) {
			t.Errorf("error %q, want ErrLocked naming the file", o.err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("a second Open still waits after 30 s")
	}
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	second, err := Open(path, Options{LockTimeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatalf("after Close: %v", err)
	}
	second.Close()
}

// TestClosed: after Close every call says ErrClosed; Close again returns
// what the first did.
func TestClosed(t *testing.T) {
	s := open(t, filepath.Join(t.TempDir(), "log.db"))
	if _, err := s.Append(context.Background(), submit(1)); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	_, errAppend := s.Append(context.Background(), submit(2))
	_, errEvent := s.Event(1)
	_, _, _, errSnap := s.Snapshot()
	for name, err := range map[string]error{
		"Append":       errAppend,
		"Read":         s.Read(1, func(event.Event) error { return nil }),
		"Event":        errEvent,
		"Snapshot":     errSnap,
		"SaveSnapshot": s.SaveSnapshot(1, nil),
		"Compact":      s.Compact(0),
	} {
		if !errors.Is(err, ErrClosed) {
			t.Errorf("%s after Close: %v, want ErrClosed", name, err)
		}
	}
	if s.Last() != 1 {
		t.Errorf("Last after Close %d, want 1", s.Last())
	}
}
