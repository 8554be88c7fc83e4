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
	"github.com/xce-sched/xce/internal/metrics"
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
// every FollowerRefresh when the state moved on, or sooner to show a
// write the follower forwarded (require).
type reader struct {
	m *member
	// metrics are the follower's (/metrics), over the current view.
	metrics *metrics.Metrics

	mu     sync.Mutex
	at     uint64        // the state index of the view; 0: none yet
	need   uint64        // the least index the next view must have (require)
	built  time.Time     // when the view was built
	cost   time.Duration // how long building it took
	socket http.Handler
	tcp    http.Handler
	loop   *server.Loop // the view's
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
	if rd.at < rd.need {
		rd.catchUp()
	}
	began := time.Now()
	defer func() { rd.cost = time.Since(began) }()
	st, _, err := rd.m.node.FSM().Clone()
	if err != nil {
		return nil, nil, 0, err
	}
	// The local copy of the log (job histories) is appended right after
	// the state: wait a moment for it to catch up (unless it has a gap:
	// its reads go to the leader then, member.handler).
	for end := time.Now().Add(100 * time.Millisecond); rd.m.local.Last() < st.Index && !rd.m.copy.gapped() && time.Now().Before(end); {
		time.Sleep(2 * time.Millisecond)
	}
	if st.Index == 0 || st.Config == "" {
		return nil, nil, 0, errors.New("no state yet")
	}
	c, srv, err := cluster.ParseConfig("configuration", []byte(st.Config))
	if err != nil {
		return nil, nil, 0, err
	}
	core, err := live.New(c, st, plugins.NewInTreeRegistry())
	if err != nil {
		return nil, nil, 0, err
	}
	// The administrators are those of the configuration the replicated
	// log says is in force (a reload's), as on the leader.
	core.Server = srv
	o := rd.m.o
	loop := server.NewLoop(core, refuse{}, noAgent{}, o.Server.CycleInterval, func() int64 { return time.Now().UnixNano() })
	h := api.NewHandler(loop, rd.m.local, srv.Admins)
	h.Private = o.Server.PrivateJobs
	var tokens *auth.Issuer
	if st.Keys != nil {
		if tokens, err = auth.NewIssuer(st.Keys.SigningKey); err != nil {
			return nil, nil, 0, err
		}
	}
	h.Tokens = tokens
	users := http.NewServeMux()
	users.Handle("/v1/", h)
	users.Handle("GET /metrics", metricsRoute(rd.metrics))
	rd.socket, rd.tcp, rd.loop = users, api.NewTCPHandler(nil, "", users, tokens), loop
	rd.at, rd.built = st.Index, time.Now()
	return rd.socket, rd.tcp, rd.at, nil
}

// coreView runs fn on the core of the current view, if any (the
// follower's metrics).
func (rd *reader) coreView(fn func(k *live.Core)) {
	rd.mu.Lock()
	loop := rd.loop
	rd.mu.Unlock()
	if loop != nil {
		loop.View(fn)
	}
}

// CaughtUpWait bounds how long a read on a follower waits for the
// replicated state to hold a write the follower forwarded (docs/ha.md).
const CaughtUpWait = time.Second

// require makes the next read build its view from a state that holds
// index (the leader's state index when it answered a write this follower
// forwarded: AppliedHeader), however recently the view was built: a
// client that wrote through this follower reads its write from it next.
func (rd *reader) require(index uint64) {
	rd.mu.Lock()
	defer rd.mu.Unlock()
	rd.need = max(rd.need, index)
}

// catchUp waits (rd.mu held) until the replicated state holds rd.need,
// CaughtUpWait at most (then it gives up on it: the view is built from
// what the state holds), and until the last build's cost has passed since
// it ended: views built for writes take half the time at most.
func (rd *reader) catchUp() {
	var index uint64
	stateAt := func() uint64 {
		rd.m.node.FSM().View(func(st *state.State) { index = st.Index })
		return index
	}
	for end := time.Now().Add(CaughtUpWait); stateAt() < rd.need && time.Now().Before(end); {
		time.Sleep(2 * time.Millisecond)
	}
	if index < rd.need {
		rd.need = index
	}
	if wait := rd.cost - time.Since(rd.built); wait > 0 {
		time.Sleep(wait)
	}
}

// refuse is the log of a follower's read view: it takes no write (the
// member's handler sends only reads there).
type refuse struct{}

func (refuse) Append(context.Context, ...event.Event) ([]uint64, error) {
	return nil, errors.New("a follower takes no write")
}
