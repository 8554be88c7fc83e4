package daemon

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/xce-sched/xce/cluster"
	"github.com/xce-sched/xce/framework/plugins"
	"github.com/xce-sched/xce/internal/api"
	"github.com/xce-sched/xce/internal/auth"
	"github.com/xce-sched/xce/internal/event"
	"github.com/xce-sched/xce/internal/live"
	"github.com/xce-sched/xce/internal/server"
	"github.com/xce-sched/xce/internal/state"
)

// AppliedHeader is set on a follower's answer to a read: the index of the
// last event of the replicated state the answer was read from (docs/ha.md
// says how stale that may be).
const AppliedHeader = "Xce-Applied-Index"

// FollowerRefresh is the least time between two rebuilds of a follower's
// read view: a read sees the state as it was at most this long before,
// plus the replication lag.
const FollowerRefresh = 200 * time.Millisecond

// reader serves a follower's reads (GET /v1/...) from the replicated
// state: a core built from a copy of the FSM's state, rebuilt at most
// every FollowerRefresh when the state moved on.
type reader struct {
	m *member

	mu     sync.Mutex
	at     uint64    // the state index of the view; 0: none yet
	need   uint64    // the least index the next view must have (caughtUp)
	built  time.Time // when the view was built
	socket http.Handler
	tcp    http.Handler
}

// serve answers r from the view, rebuilt first when it is stale.
func (rd *reader) serve(tcp bool, w http.ResponseWriter, r *http.Request) {
	socket, tcpH, at, err := rd.view()
	if err != nil {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set(api.NotLeaderHeader, "1")
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write([]byte(`{"error":"this follower has no state to read from yet; ask another server"}` + "\n"))
		return
	}
	w.Header().Set(AppliedHeader, strconv.FormatUint(at, 10))
	if tcp {
		tcpH.ServeHTTP(w, r)
	} else {
		socket.ServeHTTP(w, r)
	}
}

// view returns the handlers of the current view, building a new one when
// the replicated state moved on and the view is FollowerRefresh old.
func (rd *reader) view() (socket, tcp http.Handler, at uint64, err error) {
	rd.mu.Lock()
	defer rd.mu.Unlock()
	var index uint64
	rd.m.node.FSM().View(func(st *state.State) { index = st.Index })
	if rd.socket != nil && rd.at >= rd.need && (index == rd.at || time.Since(rd.built) < FollowerRefresh) {
		return rd.socket, rd.tcp, rd.at, nil
	}
	st, _, err := rd.m.node.FSM().Clone()
	if err != nil {
		return nil, nil, 0, err
	}
	// The local copy of the log (job histories) is appended right after
	// the state: wait a moment for it to catch up.
	for end := time.Now().Add(100 * time.Millisecond); rd.m.local.Last() < st.Index && time.Now().Before(end); {
		time.Sleep(2 * time.Millisecond)
	}
	if st.Index == 0 || st.Config == "" {
		return nil, nil, 0, errors.New("no state yet")
	}
	c, _, err := cluster.ParseConfig("configuration", []byte(st.Config))
	if err != nil {
		return nil, nil, 0, err
	}
	core, err := live.New(c, st, plugins.NewInTreeRegistry())
	if err != nil {
		return nil, nil, 0, err
	}
	o := rd.m.o
	loop := server.NewLoop(core, refuse{}, noAgent{}, o.Server.CycleInterval, func() int64 { return time.Now().UnixNano() })
	h := api.NewHandler(loop, rd.m.local, o.Server.Admins)
	h.Private = o.Server.PrivateJobs
	var tokens *auth.Issuer
	if st.Keys != nil {
		if tokens, err = auth.NewIssuer(st.Keys.SigningKey); err != nil {
			return nil, nil, 0, err
		}
	}
	h.Tokens = tokens
	rd.socket, rd.tcp = h, api.NewTCPHandler(nil, "", h, tokens)
	rd.at, rd.built = st.Index, time.Now()
	return rd.socket, rd.tcp, rd.at, nil
}

// CaughtUpWait bounds how long a follower that forwarded a write waits,
// before it passes the leader's answer on, to have applied the state the
// leader answered from (docs/ha.md).
const CaughtUpWait = 2 * time.Second

// caughtUp waits (at most CaughtUpWait, or until ctx ends) until the
// replicated state has reached index, then makes the next read build its
// view from a state at least that recent (a client that wrote through
// this follower reads its write from it next), however recently the
// view was built.
func (rd *reader) caughtUp(ctx context.Context, index uint64) {
	var at uint64
	stateAt := func() uint64 {
		rd.m.node.FSM().View(func(st *state.State) { at = st.Index })
		return at
	}
	end := time.NewTimer(CaughtUpWait)
	defer end.Stop()
	tick := time.NewTicker(2 * time.Millisecond)
	defer tick.Stop()
	for stateAt() < index {
		select {
		case <-ctx.Done():
			return
		case <-end.C:
			return
		case <-tick.C:
		}
	}
	rd.mu.Lock()
	rd.need = max(rd.need, index)
	rd.mu.Unlock()
}

// refuse is the log of a follower's read view: it takes no write (the
// member's handler sends only reads there).
type refuse struct{}

func (refuse) Append(context.Context, ...event.Event) ([]uint64, error) {
	return nil, errors.New("a follower takes no write")
}
