package api

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/xce-sched/xce/cluster"
	"github.com/xce-sched/xce/framework/plugins"
	"github.com/xce-sched/xce/internal/event"
	"github.com/xce-sched/xce/internal/live"
	"github.com/xce-sched/xce/internal/server"
	"github.com/xce-sched/xce/internal/state"
	"github.com/xce-sched/xce/internal/store"
)

// rigConfig is the cluster of the loop tests: two hosts, a queue of each
// policy that plans every job, arrays of up to 1000 elements.
const rigConfig = `hosts: [{name: h1, slots: 4, resources: {mem: 64}}, {name: h2, slots: 4, resources: {mem: 64}}]
queues: [{name: normal, policy: fcfs}, {name: cons, policy: conservative}]
max_array_size: 1000
`

// rig is the API over a running server loop and a real store (on a
// memory file system when the machine has one), with one host
// registered; what the loop places is never started (no agent).
type rig struct {
	h    *Handler
	loop *server.Loop
	log  *store.Store
	stop func()
	// took is the loop time, in nanoseconds, of the last submit that
	// entered the loop: from the moment the loop took it (its make
	// began) to its answer (checked, applied and durable, or refused); 0
	// if none did.
	took atomic.Int64
}

// noDispatch stands for agents that never act: placements stay placed.
type noDispatch struct{}

func (noDispatch) Start(event.Placement, *event.Submit) {}
func (noDispatch) Kill(event.JobID, int, string)        {}
func (noDispatch) Suspend(event.JobID, int, string)     {}
func (noDispatch) Resume(event.JobID, int, string)      {}

// storeDir is a fresh directory for a store: under /dev/shm when it is
// there (fsync costs nothing), else under tb's temporary directory.
func storeDir(tb testing.TB) string {
	tb.Helper()
	if fi, err := os.Stat("/dev/shm"); err == nil && fi.IsDir() {
		dir, err := os.MkdirTemp("/dev/shm", "xce-api-test-")
		if err == nil {
			tb.Cleanup(func() { os.RemoveAll(dir) })
			return dir
		}
	}
	return tb.TempDir()
}

func newRig(tb testing.TB) *rig {
	tb.Helper()
	log, err := store.Open(filepath.Join(storeDir(tb), "events.db"), store.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	c, _, err := cluster.ParseConfig("config.yaml", []byte(rigConfig))
	if err != nil {
		tb.Fatal(err)
	}
	st, err := server.Recover(log)
	if err != nil {
		tb.Fatal(err)
	}
	core, err := live.New(c, st, plugins.NewInTreeRegistry())
	if err != nil {
		tb.Fatal(err)
	}
	loop := server.NewLoop(core, log, noDispatch{}, 5*time.Millisecond, func() int64 { return time.Now().UnixNano() })
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- loop.Run(ctx) }()
	r := &rig{h: NewHandler(loop, log, nil), loop: loop, log: log}
	r.h.do = func(ctx context.Context, mk func(*state.State, int64) ([]event.Event, error)) ([]event.Event, error) {
		var began time.Time // written by the loop before it answers
		evs, err := loop.Do(ctx, func(st *state.State, now int64) ([]event.Event, error) {
			began = time.Now()
			return mk(st, now)
		})
		if !began.IsZero() {
			r.took.Store(int64(time.Since(began)))
		}
		return evs, err
	}
	var once sync.Once
	r.stop = func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				tb.Errorf("loop: %v", err)
			}
			if err := log.Close(); err != nil {
				tb.Errorf("store: %v", err)
			}
		})
	}
	tb.Cleanup(r.stop)
	if _, err := loop.Do(ctx, func(*state.State, int64) ([]event.Event, error) {
		return []event.Event{{Type: event.HostRegistered, Host: &event.Host{Name: "h1"}}}, nil
	}); err != nil {
		tb.Fatal(err)
	}
	return r
}

// post sends body to POST /v1/jobs as alice and returns the answer; took
// is then the loop time it cost (0: it did not enter the loop), when no
// other post runs meanwhile.
func (r *rig) post(body []byte) *httptest.ResponseRecorder {
	r.took.Store(0)
	req := httptest.NewRequest(http.MethodPost, "/v1/jobs", bytes.NewReader(body))
	req = req.WithContext(WithCaller(req.Context(), Caller{User: "alice", UID: 1001, GID: 100}))
	w := httptest.NewRecorder()
	r.h.ServeHTTP(w, req)
	return w
}

// postJobs is post of a SubmitRequest of jobs.
func (r *rig) postJobs(tb testing.TB, jobs ...JobRequest) *httptest.ResponseRecorder {
	tb.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // '>' and '&' as themselves, as a client would
	if err := enc.Encode(SubmitRequest{Jobs: jobs}); err != nil {
		tb.Fatal(err)
	}
	return r.post(b.Bytes())
}
