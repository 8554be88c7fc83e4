package store

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/xce-sched/xce/internal/event"
)

// queued returns how many calls wait in the queue (withdrawn ones too,
// until the committer drops them).
func (s *Store) queued() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.queue)
}

// waitFor polls cond until it holds, for at most 30 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("still waiting after 30 s for %s", what)
		}
	}
}

// script is a committer hook: commit n (from 1) reports on entered and
// waits for blocks[n] to close when there is one, and fails with err
// when n is failAt.
type script struct {
	blocks  map[int]chan struct{}
	failAt  int
	err     error
	entered chan int
	n       int // the committer's only
}

func newScript(failAt int, blocked ...int) *script {
	sc := &script{blocks: map[int]chan struct{}{}, failAt: failAt, err: errors.New("injected write error"), entered: make(chan int, 16)}
	for _, n := range blocked {
		sc.blocks[n] = make(chan struct{})
	}
	return sc
}

func (sc *script) hook(int) error {
	sc.n++
	if ch, ok := sc.blocks[sc.n]; ok {
		sc.entered <- sc.n
		<-ch
	}
	if sc.n == sc.failAt {
		return sc.err
	}
	return nil
}

// receive returns the next value of ch, failing the test after 30 s.
func receive[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(30 * time.Second):
		t.Fatalf("still waiting after 30 s for %s", what)
		panic("unreachable")
	}
}

type appended struct {
	name    string
	indexes []uint64
	err     error
}

// goAppend appends in a goroutine and reports on out.
func goAppend(s *Store, ctx context.Context, name string, out chan<- appended, events ...event.Event) {
	go func() {
		got, err := s.Append(ctx, events...)
		out <- appended{name, got, err}
	}()
}

// TestGroupCommit: calls that queue while a commit runs share the next
// one: 1 call then 7 calls make exactly 2 commits.
func TestGroupCommit(t *testing.T) {
	sc := newScript(0, 1)
	s, err := Open(filepath.Join(t.TempDir(), "log.db"), Options{beforeCommit: sc.hook})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	out := make(chan appended, 8)
	goAppend(s, ctx, "first", out, submit(1))
	receive(t, sc.entered, "the first commit")
	for j := int64(2); j <= 8; j++ {
		goAppend(s, ctx, "later", out, submit(j))
	}
	waitFor(t, "7 queued calls", func() bool { return s.queued() == 7 })
	close(sc.blocks[1])
	var later []uint64
	for range 8 {
		a := receive(t, out, "an append")
		if a.err != nil || len(a.indexes) != 1 {
			t.Fatalf("%s: %v, %v", a.name, a.indexes, a.err)
		}
		if a.name == "first" && a.indexes[0] != 1 {
			t.Errorf("first call got %v, want [1]", a.indexes)
		}
		if a.name == "later" {
			later = append(later, a.indexes[0])
		}
	}
	slices.Sort(later)
	if want := []uint64{2, 3, 4, 5, 6, 7, 8}; !reflect.DeepEqual(later, want) {
		t.Errorf("later calls got %v, want %v", later, want)
	}
	if got, want := s.Stats(), (Stats{Commits: 2, Appends: 8, Events: 8, MaxCalls: 7, Syncs: 4}); got != want {
		t.Errorf("Stats %+v, want %+v", got, want)
	}
}

// TestConcurrentAppends: 8 goroutines × 40 calls of 1 to 3 events, with
// the default options, a commit window, and batches of at most 2 events:
// every acknowledged event is in the log exactly once, each call's events
// are contiguous and in order, each goroutine's calls are in its order,
// indexes are dense, and concurrent calls shared commits.
func TestConcurrentAppends(t *testing.T) {
	for _, c := range []struct {
		name string
		opts Options
	}{
		{"default", Options{}},
		{"window", Options{CommitWindow: 200 * time.Microsecond}},
		// Calls of 2 and 3 events commit alone, 2 of 1 event may share.
		{"small batches", Options{MaxBatchEvents: 2}},
	} {
		t.Run(c.name, func(t *testing.T) { concurrentAppends(t, c.opts) })
	}
}

func concurrentAppends(t *testing.T, opts Options) {
	t.Helper()
	const writers, calls = 8, 40
	s, err := Open(filepath.Join(t.TempDir(), "log.db"), opts)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	size := func(g, m int) int { return 1 + (g+m)%3 }
	job := func(g, m, j int) int64 { return int64(g*10000 + m*10 + j) }
	got := make([][][]uint64, writers)
	var wg sync.WaitGroup
	for g := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for m := range calls {
				var evs []event.Event
				for j := range size(g, m) {
					evs = append(evs, submit(job(g, m, j)))
				}
				idx, err := s.Append(context.Background(), evs...)
				if err != nil {
					t.Error(err)
					return
				}
				got[g] = append(got[g], idx)
			}
		}()
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	total := 0
	for g := range writers {
		for m := range calls {
			total += size(g, m)
		}
	}
	if s.Last() != uint64(total) {
		t.Fatalf("Last %d, want %d", s.Last(), total)
	}
	log := readAll(t, s, 1)
	if len(log) != total {
		t.Fatalf("%d events in the log, want %d", len(log), total)
	}
	seen := make([]bool, total+1)
	for g := range writers {
		prev := uint64(0)
		for m, idx := range got[g] {
			if len(idx) != size(g, m) {
				t.Fatalf("writer %d call %d: %d indexes, want %d", g, m, len(idx), size(g, m))
			}
			if idx[0] <= prev {
				t.Errorf("writer %d call %d at %d, not after its previous call's %d", g, m, idx[0], prev)
			}
			for j, i := range idx {
				if i != idx[0]+uint64(j) {
					t.Errorf("writer %d call %d: indexes %v not contiguous", g, m, idx)
				}
				if i == 0 || i > uint64(total) || seen[i] {
					t.Fatalf("index %d twice or out of range", i)
				}
				seen[i] = true
				if e := log[i-1]; e.Index != i || e.Submit.Job != job(g, m, j) {
					t.Errorf("event %d: index %d job %d, want job %d", i, e.Index, e.Submit.Job, job(g, m, j))
				}
			}
			prev = idx[len(idx)-1]
		}
	}
	st := s.Stats()
	if st.Appends != writers*calls || st.Events != uint64(total) {
		t.Errorf("Stats %+v: want %d appends of %d events", st, writers*calls, total)
	}
	if opts.MaxBatchEvents == 0 && (st.Commits >= st.Appends || st.Commits == 0) {
		t.Errorf("%d commits for %d concurrent appends: no group commit", st.Commits, st.Appends)
	}
	if opts.MaxBatchEvents > 0 && (st.MaxCalls > uint64(opts.MaxBatchEvents) || st.Commits > st.Appends) {
		t.Errorf("Stats %+v: batches over %d events", st, opts.MaxBatchEvents)
	}
	t.Logf("%d appends in %d commits (%.2f commits per append, at most %d calls in one)", st.Appends, st.Commits, float64(st.Commits)/float64(st.Appends), st.MaxCalls)
}

// TestMaxBatchEvents: a batch takes queued calls in order while their
// events fit MaxBatchEvents; a call larger than it is committed whole, on
// its own.
func TestMaxBatchEvents(t *testing.T) {
	sc := newScript(0, 1)
	s, err := Open(filepath.Join(t.TempDir(), "log.db"), Options{MaxBatchEvents: 3, beforeCommit: sc.hook})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	out := make(chan appended, 7)
	goAppend(s, ctx, "A", out, submit(1))
	receive(t, sc.entered, "A's commit")
	// Queued in this order behind A: batches {B C D} {E} {F} {G}.
	sizes := []struct {
		name string
		n    int
	}{{"B", 1}, {"C", 1}, {"D", 1}, {"E", 2}, {"F", 5}, {"G", 1}}
	for q, c := range sizes {
		evs := make([]event.Event, c.n)
		for j := range evs {
			evs[j] = submit(int64(10*q + j))
		}
		goAppend(s, ctx, c.name, out, evs...)
		waitFor(t, c.name+" queued", func() bool { return s.queued() == q+1 })
	}
	close(sc.blocks[1])
	got := map[string][]uint64{}
	for range 7 {
		a := receive(t, out, "an append")
		if a.err != nil {
			t.Fatalf("%s: %v", a.name, a.err)
		}
		got[a.name] = a.indexes
	}
	want := map[string][]uint64{"A": {1}, "B": {2}, "C": {3}, "D": {4}, "E": {5, 6}, "F": {7, 8, 9, 10, 11}, "G": {12}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("indexes %v, want %v", got, want)
	}
	if st, want := s.Stats(), (Stats{Commits: 5, Appends: 7, Events: 12, MaxCalls: 3, Syncs: 10}); st != want {
		t.Errorf("Stats %+v, want %+v", st, want)
	}
}

// TestCancel: a call whose ctx ends while it waits in the queue is
// withdrawn and writes nothing; one whose commit started reports that
// commit's outcome.
func TestCancel(t *testing.T) {
	sc := newScript(0, 1)
	path := filepath.Join(t.TempDir(), "log.db")
	s, err := Open(path, Options{beforeCommit: sc.hook})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	done, cancel0 := context.WithCancel(context.Background())
	cancel0()
	if got, err := s.Append(done, submit(9)); got != nil || !errors.Is(err, context.Canceled) {
		t.Errorf("append with an ended ctx: %v, %v", got, err)
	}
	out := make(chan appended, 3)
	ctxA, cancelA := context.WithCancel(context.Background())
	goAppend(s, ctxA, "A", out, submit(1))
	receive(t, sc.entered, "A's commit")
	cancelA() // A's commit has started: A is written anyway

	ctxB, cancelB := context.WithCancel(context.Background())
	goAppend(s, ctxB, "B", out, submit(2), submit(3))
	waitFor(t, "B queued", func() bool { return s.queued() == 1 })
	cancelB()
	b := receive(t, out, "B withdrawn")
	if b.name != "B" || b.indexes != nil || !errors.Is(b.err, context.Canceled) || !strings.Contains(b.err.Error(), "withdrawn") {
		t.Errorf("B: %+v, want withdrawn with context.Canceled", b)
	}
	goAppend(s, context.Background(), "C", out, submit(4))
	waitFor(t, "C queued", func() bool { return s.queued() == 2 }) // B stays until the committer drops it
	close(sc.blocks[1])
	for range 2 {
		a := receive(t, out, "A and C")
		want := map[string][]uint64{"A": {1}, "C": {2}}[a.name]
		if a.err != nil || !reflect.DeepEqual(a.indexes, want) {
			t.Errorf("%s: %v, %v; want %v", a.name, a.indexes, a.err, want)
		}
	}
	var jobs []int64
	for _, e := range readAll(t, s, 1) {
		jobs = append(jobs, e.Submit.Job)
	}
	if !reflect.DeepEqual(jobs, []int64{1, 4}) {
		t.Errorf("log holds jobs %v, want [1 4]", jobs)
	}
}

// TestWriteFailure: when commit k fails, every call of its batch gets
// the error, none of its events is visible, calls queued behind it and
// every later write are refused with ErrFailed; a reopened store goes on
// from the last good commit.
func TestWriteFailure(t *testing.T) {
	for _, k := range []int{2, 3, 5} {
		t.Run(fmt.Sprintf("commit %d", k), func(t *testing.T) {
			sc := newScript(k, k-1, k)
			path := filepath.Join(t.TempDir(), "log.db")
			s, err := Open(path, Options{beforeCommit: sc.hook})
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			for j := 1; j <= k-2; j++ {
				if _, err := s.Append(ctx, submit(int64(j))); err != nil {
					t.Fatal(err)
				}
			}
			out := make(chan appended, 8)
			goAppend(s, ctx, "good", out, submit(int64(k-1)))
			receive(t, sc.entered, "commit k-1")
			for j := range 3 {
				goAppend(s, ctx, "failed", out, submit(int64(100+2*j)), submit(int64(101+2*j)))
			}
			waitFor(t, "3 queued calls", func() bool { return s.queued() == 3 })
			close(sc.blocks[k-1])
			if a := receive(t, out, "commit k-1's call"); a.name != "good" || a.err != nil || !reflect.DeepEqual(a.indexes, []uint64{uint64(k - 1)}) {
				t.Fatalf("commit k-1: %+v", a)
			}
			receive(t, sc.entered, "commit k")
			goAppend(s, ctx, "behind", out, submit(200))
			waitFor(t, "a call behind the failing commit", func() bool { return s.queued() == 1 })
			close(sc.blocks[k])
			var msgs []string
			for range 4 {
				a := receive(t, out, "the failed calls")
				if a.indexes != nil || !errors.Is(a.err, ErrFailed) || !errors.Is(a.err, sc.err) {
					t.Errorf("%s: %v, %v; want ErrFailed wrapping the injected error", a.name, a.indexes, a.err)
				}
				msgs = append(msgs, a.err.Error())
			}
			if want := fmt.Sprintf("write events %d to %d", k, k+5); !strings.Contains(msgs[0], want) {
				t.Errorf("error %q does not say %q", msgs[0], want)
			}
			if s.Last() != uint64(k-1) {
				t.Errorf("Last %d, want %d", s.Last(), k-1)
			}
			if got := readAll(t, s, 1); len(got) != k-1 || got[len(got)-1].Submit.Job != int64(k-1) {
				t.Errorf("after the failure the log has %d events, want %d", len(got), k-1)
			}
			_, errAppend := s.Append(ctx, submit(300))
			for name, err := range map[string]error{"Append": errAppend, "SaveSnapshot": s.SaveSnapshot(1, nil), "Compact": s.Compact(0), "Err": s.Err()} {
				if !errors.Is(err, ErrFailed) || !errors.Is(err, sc.err) {
					t.Errorf("%s after the failure: %v, want ErrFailed", name, err)
				}
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			s = open(t, path)
			defer s.Close()
			if got, err := s.Append(ctx, submit(400)); err != nil || !reflect.DeepEqual(got, []uint64{uint64(k)}) {
				t.Errorf("after reopening: %v, %v; want [%d]", got, err, k)
			}
		})
	}
}

// TestCloseFinishesQueued: Close commits the calls already queued,
// refuses later ones, and returns once they are durable.
func TestCloseFinishesQueued(t *testing.T) {
	sc := newScript(0, 1)
	path := filepath.Join(t.TempDir(), "log.db")
	s, err := Open(path, Options{beforeCommit: sc.hook})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	out := make(chan appended, 3)
	goAppend(s, ctx, "A", out, submit(1))
	receive(t, sc.entered, "A's commit")
	goAppend(s, ctx, "B", out, submit(2))
	waitFor(t, "B queued", func() bool { return s.queued() == 1 })
	goAppend(s, ctx, "C", out, submit(3), submit(4))
	waitFor(t, "C queued", func() bool { return s.queued() == 2 })
	closed := make(chan error, 1)
	go func() { closed <- s.Close() }()
	waitFor(t, "Close to start", func() bool { s.mu.Lock(); defer s.mu.Unlock(); return s.closing })
	if _, err := s.Append(ctx, submit(5)); !errors.Is(err, ErrClosed) {
		t.Errorf("append while closing: %v, want ErrClosed", err)
	}
	close(sc.blocks[1])
	got := map[string][]uint64{}
	for range 3 {
		a := receive(t, out, "the queued calls")
		if a.err != nil {
			t.Errorf("%s: %v", a.name, a.err)
		}
		got[a.name] = a.indexes
	}
	if err := receive(t, closed, "Close"); err != nil {
		t.Fatal(err)
	}
	if want := map[string][]uint64{"A": {1}, "B": {2}, "C": {3, 4}}; !reflect.DeepEqual(got, want) {
		t.Errorf("indexes %v, want %v", got, want)
	}
	s = open(t, path)
	defer s.Close()
	if s.Last() != 4 {
		t.Errorf("after reopening Last is %d, want 4", s.Last())
	}
}

// TestOnCommit: the hook hears of each committed transaction with its
// events (1, then the 7 queued while the first committed), and the
// syncs count SyncsPerCommit for each commit and for a snapshot saved.
func TestOnCommit(t *testing.T) {
	sc := newScript(0, 1)
	var mu sync.Mutex
	var sizes []int
	hook := func(events int, took time.Duration) {
		mu.Lock()
		defer mu.Unlock()
		if took <= 0 {
			t.Errorf("commit of %d events took %v", events, took)
		}
		sizes = append(sizes, events)
	}
	s, err := Open(filepath.Join(t.TempDir(), "log.db"), Options{beforeCommit: sc.hook, OnCommit: hook})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	out := make(chan appended, 8)
	goAppend(s, ctx, "first", out, submit(1))
	receive(t, sc.entered, "the first commit")
	for j := int64(2); j <= 8; j++ {
		goAppend(s, ctx, "later", out, submit(j))
	}
	waitFor(t, "7 queued calls", func() bool { return s.queued() == 7 })
	close(sc.blocks[1])
	for range 8 {
		if a := receive(t, out, "an append"); a.err != nil {
			t.Fatal(a.err)
		}
	}
	if err := s.SaveSnapshot(8, []byte("{}")); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(sizes, []int{1, 7}) {
		t.Errorf("OnCommit heard of commits of %v events, want [1 7]", sizes)
	}
	if got := s.Stats().Syncs; got != 6 {
		t.Errorf("Syncs %d, want 6: 2 commits and a snapshot, 2 each", got)
	}
}
