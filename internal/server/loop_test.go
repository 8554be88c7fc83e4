package server

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/xce-sched/xce/cluster"
	"github.com/xce-sched/xce/framework/plugins"
	"github.com/xce-sched/xce/internal/agent"
	"github.com/xce-sched/xce/internal/event"
	"github.com/xce-sched/xce/internal/live"
	"github.com/xce-sched/xce/internal/state"
	"github.com/xce-sched/xce/internal/store"
)

// rig is a server loop over a real store and an in-process agent running
// real processes, in a temporary directory.
type rig struct {
	t      *testing.T
	dir    string
	log    *store.Store
	loop   *Loop
	agent  *agent.Local
	cancel context.CancelFunc
	done   chan error
}

func newRig(t *testing.T, config string) *rig {
	t.Helper()
	return newObservedRig(t, config, nil)
}

// newObservedRig is newRig whose loop tells obs (nil: none).
func newObservedRig(t *testing.T, config string, obs Observer) *rig {
	t.Helper()
	dir := t.TempDir()
	log, err := store.Open(filepath.Join(dir, "events.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	c, _, err := cluster.ParseConfig("config.yaml", []byte(config))
	if err != nil {
		t.Fatal(err)
	}
	st, err := Recover(log)
	if err != nil {
		t.Fatal(err)
	}
	core, err := live.New(c, st, plugins.NewInTreeRegistry())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &rig{t: t, dir: dir, log: log, cancel: cancel, done: make(chan error, 1)}
	report := func(ctx context.Context, mk func(*state.State, int64) ([]event.Event, error)) ([]event.Event, error) {
		return r.loop.Do(ctx, mk)
	}
	r.agent = agent.NewLocal(ctx, report, filepath.Join(dir, "work"), 2*time.Second, true)
	r.loop = NewLoop(core, log, r.agent, 5*time.Millisecond, func() int64 { return time.Now().UnixNano() })
	r.loop.SnapshotEvery = 5 // several snapshots in a short test
	if obs != nil {
		r.loop.Observer = obs
	}
	go func() { r.done <- r.loop.Run(ctx) }()
	return r
}

// stop kills what still runs, stops the loop and closes the store.
func (r *rig) stop() {
	r.agent.KillAll()
	r.agent.Wait()
	r.cancel()
	if err := <-r.done; err != nil {
		r.t.Error(err)
	}
	if err := r.log.Close(); err != nil {
		r.t.Error(err)
	}
}

func (r *rig) submit(tasks int, cmd ...string) event.JobID {
	r.t.Helper()
	u, err := user.Current()
	if err != nil {
		r.t.Fatal(err)
	}
	evs, err := r.loop.Do(context.Background(), func(st *state.State, _ int64) ([]event.Event, error) {
		return []event.Event{{Type: event.JobSubmitted, Submit: &event.Submit{Job: st.NextJob(), User: u.Username,
			UID: uint32(os.Getuid()), GID: uint32(os.Getgid()), Queue: "normal", TasksMin: tasks, TasksMax: tasks,
			Command: cmd, Cwd: r.dir, Stdout: filepath.Join(r.dir, "out.%J")}}}, nil
	})
	if err != nil {
		r.t.Fatal(err)
	}
	return evs[0].Submit.Job
}

// await polls the state until ok holds, for at most 15 s.
func (r *rig) await(what string, ok func(st *state.State) bool) {
	r.t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		var done bool
		r.loop.View(func(k *live.Core) { done = ok(k.State) })
		if done {
			return
		}
		if time.Now().After(deadline) {
			var snap []byte
			r.loop.View(func(k *live.Core) { snap, _ = k.State.Marshal() })
			r.t.Fatalf("%s: not within 15 s; state %s", what, snap)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestLoopRunsJobs: on one host of 4 slots with the in-process agent, a
// job that prints ends DONE with its output in its -o file; one that
// exits 3 ends EXIT with exit code 3; a 2-slot `sleep 30` is killed and
// ends EXIT, killed, within the 2 s grace (it dies on SIGINT). After the
// server stops, the state recovered from the log is exactly the one it
// had, and no attempt was started twice.
func TestLoopRunsJobs(t *testing.T) {
	r := newRig(t, "hosts: [{name: h1, slots: 4}]\nqueues: [{name: normal}]\n")
	if err := r.agent.Register("h1"); err != nil {
		t.Fatal(err)
	}
	j1 := r.submit(1, "sh", "-c", "echo hello")
	j2 := r.submit(1, "sh", "-c", "exit 3")
	j3 := r.submit(2, "sleep", "30")
	r.await("jobs 1 and 2 end, job 3 starts", func(st *state.State) bool {
		return st.Job(j1).State == state.Done && st.Job(j2).State == state.Exit && st.Job(j3).PID != 0
	})
	killed := time.Now()
	if _, err := r.loop.Do(context.Background(), func(*state.State, int64) ([]event.Event, error) {
		return []event.Event{{Type: event.JobKilled, Killed: &event.Killed{Job: j3, By: "alice"}}}, nil
	}); err != nil {
		t.Fatal(err)
	}
	r.await("job 3 ends", func(st *state.State) bool { return st.Job(j3).State == state.Exit })
	if d := time.Since(killed); d > 2*time.Second+time.Second {
		t.Errorf("the kill took %v, more than the grace of 2 s and a second", d)
	}
	var want []byte
	r.loop.View(func(k *live.Core) {
		if j := k.State.Job(j2); j.ExitCode != 3 {
			t.Errorf("job 2 exit code %d, want 3", j.ExitCode)
		}
		if j := k.State.Job(j3); j.EndReason != "killed" || j.KilledBy != "alice" || j.Hosts[0].Slots != 2 {
			t.Errorf("job 3: reason %q by %q on %+v", j.EndReason, j.KilledBy, j.Hosts)
		}
		want, _ = k.State.Marshal()
	})
	if out, err := os.ReadFile(filepath.Join(r.dir, "out.1")); err != nil || string(out) != "hello\n" {
		t.Errorf("job 1's output %q (%v), want \"hello\\n\"", out, err)
	}
	r.stop()

	log, err := store.Open(filepath.Join(r.dir, "events.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	snapAt, _, ok, err := log.Snapshot()
	if err != nil || !ok || snapAt < 5 {
		t.Errorf("snapshot at %d (%v, %v): want one at 5 or later", snapAt, ok, err)
	}
	st, err := Recover(log) // from the snapshot, then the events after it
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := st.Marshal(); !bytes.Equal(got, want) {
		t.Errorf("recovered state differs:\n got %s\nwant %s", got, want)
	}
	starts := map[[2]int64]int{}
	if err := log.Read(1, func(e event.Event) error {
		if e.Type == event.JobStarted {
			starts[[2]int64{e.Started.Job, int64(e.Started.Attempt)}]++
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for k, n := range starts {
		if n != 1 {
			t.Errorf("job %d attempt %d started %d times", k[0], k[1], n)
		}
	}
	if len(starts) != 3 {
		t.Errorf("%d attempts started, want 3", len(starts))
	}
}

// TestDoAfterStop: a request sent once the loop has stopped gets
// ErrStopped at once, not a wait forever.
func TestDoAfterStop(t *testing.T) {
	r := newRig(t, "hosts: [{name: h1, slots: 4}]\nqueues: [{name: normal}]\n")
	r.stop()
	done := make(chan error, 1)
	go func() {
		_, err := r.loop.Do(context.Background(), func(*state.State, int64) ([]event.Event, error) {
			return []event.Event{{Type: event.HostRegistered, Host: &event.Host{Name: "h1"}}}, nil
		})
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, ErrStopped) {
			t.Errorf("Do after the stop: %v, want ErrStopped", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Do after the stop did not return within 5 s")
	}
}

// TestDoEach: each request of DoEach sees the state the ones before it
// left, and is applied or refused on its own; after the stop every one
// gets ErrStopped.
func TestDoEach(t *testing.T) {
	r := newRig(t, "hosts: [{name: h1, slots: 4}]\nqueues: [{name: normal}]\n")
	submit := func(st *state.State, _ int64) ([]event.Event, error) {
		return []event.Event{{Type: event.JobSubmitted, Submit: &event.Submit{Job: st.NextJob(), User: "u",
			Queue: "normal", TasksMin: 1, TasksMax: 1, Command: []string{"true"}, Cwd: "/"}}}, nil
	}
	refuse := func(*state.State, int64) ([]event.Event, error) { return nil, errors.New("no") }
	killFirst := func(st *state.State, _ int64) ([]event.Event, error) {
		return []event.Event{{Type: event.JobKilled, Killed: &event.Killed{Job: st.NextJob() - 2, By: "u"}}}, nil
	}
	r.loop.Quiesce() // no cycle: the jobs stay pending
	evs, errs := r.loop.DoEach(context.Background(), []func(*state.State, int64) ([]event.Event, error){submit, refuse, submit, killFirst})
	wantErr := []bool{false, true, false, false}
	for i, err := range errs {
		if (err != nil) != wantErr[i] {
			t.Errorf("request %d: error %v, want an error: %v", i, err, wantErr[i])
		}
	}
	if len(evs[0]) != 1 || evs[0][0].Submit.Job != 1 || len(evs[1]) != 0 || len(evs[2]) != 1 || evs[2][0].Submit.Job != 2 {
		t.Fatalf("events %+v; want job 1, nothing, job 2", evs)
	}
	// killFirst saw both submits: NextJob 3, so it killed job 1.
	if len(evs[3]) != 1 || evs[3][0].Killed.Job != 1 || evs[3][0].Index != evs[2][0].Index+1 {
		t.Errorf("kill %+v; want job 1, right after job 2's submit", evs[3])
	}
	r.stop()
	_, errs = r.loop.DoEach(context.Background(), []func(*state.State, int64) ([]event.Event, error){submit, submit})
	for i, err := range errs {
		if !errors.Is(err, ErrStopped) {
			t.Errorf("after the stop, request %d: %v, want ErrStopped", i, err)
		}
	}
}

// recorder is an Observer that keeps what it is told.
type recorder struct {
	mu      sync.Mutex
	batches [][]event.Event
	cycles  int
	started int
	locked  bool // a call came while the loop's lock was held
	loop    *Loop
}

func (o *recorder) Applied(events []event.Event) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.batches = append(o.batches, events)
	o.checkUnlocked()
}

func (o *recorder) Cycled(_ time.Duration, started int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.cycles++
	o.started += started
	o.checkUnlocked()
}

// checkUnlocked notes whether the loop's lock is held for writing (a
// reader could not take it). o.mu is held.
func (o *recorder) checkUnlocked() {
	if o.loop != nil && !o.loop.mu.TryRLock() {
		o.locked = true
		return
	}
	if o.loop != nil {
		o.loop.mu.RUnlock()
	}
}

// TestObserver: the observer is told of every durable event exactly
// once, in the log's order, and of every cycle, outside the loop's lock:
// two jobs of one slot on a 4-slot host start in cycles whose started
// counts add up to 2.
func TestObserver(t *testing.T) {
	o := &recorder{}
	r := newObservedRig(t, "hosts: [{name: h1, slots: 4}]\nqueues: [{name: normal}]\n", o)
	o.mu.Lock()
	o.loop = r.loop
	o.mu.Unlock()
	if err := r.agent.Register("h1"); err != nil {
		t.Fatal(err)
	}
	j1 := r.submit(1, "true")
	j2 := r.submit(1, "true")
	r.await("both jobs end", func(st *state.State) bool {
		return st.Job(j1).State == state.Done && st.Job(j2).State == state.Done
	})
	r.stop()
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.locked {
		t.Error("the observer was called while the loop's lock was held")
	}
	if o.started != 2 || o.cycles < 1 {
		t.Errorf("cycles %d, jobs started %d; want 1 or more, and 2", o.cycles, o.started)
	}
	var seen []uint64
	for _, b := range o.batches {
		for _, e := range b {
			seen = append(seen, e.Index)
		}
	}
	log, err := store.Open(filepath.Join(r.dir, "events.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	var want []uint64
	if err := log.Read(1, func(e event.Event) error { want = append(want, e.Index); return nil }); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(seen, want) {
		t.Errorf("the observer saw events %v; the log holds %v", seen, want)
	}
}
