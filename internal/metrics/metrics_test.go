package metrics

import (
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/xce-sched/xce/cluster"
	"github.com/xce-sched/xce/framework/plugins"
	"github.com/xce-sched/xce/internal/event"
	"github.com/xce-sched/xce/internal/live"
	"github.com/xce-sched/xce/internal/state"
	"github.com/xce-sched/xce/internal/store"
)

const config = `
hosts:
  - {name: h1, slots: 4}
  - {name: h2, slots: 2}
  - {name: h3, slots: 2}
queues:
  - {name: normal}
  - {name: short}
`

// testCore folds a log written by hand: h1 registered, h2 registered
// then closed, h3 never; jobs 1 and 2 in normal, 3 and 4 in short; a
// cycle starts job 1 on 2 slots of h1 and leaves job 2 NotEnoughSlots
// and job 3 Priority; job 4 is killed while pending; job 5 (short) comes
// after the cycle.
func testCore(t *testing.T) *live.Core {
	t.Helper()
	c, _, err := cluster.ParseConfig("config.yaml", []byte(config))
	if err != nil {
		t.Fatal(err)
	}
	sub := func(id int64, q string) event.Event {
		return event.Event{Type: event.JobSubmitted, Submit: &event.Submit{Job: id, User: "alice", Queue: q, TasksMin: 1, TasksMax: 1, Command: []string{"true"}, Cwd: "/"}}
	}
	st := state.New()
	for i, e := range []event.Event{
		{Type: event.ConfigReloaded, Config: &event.Config{Text: config}},
		{Type: event.HostRegistered, Host: &event.Host{Name: "h1"}},
		{Type: event.HostRegistered, Host: &event.Host{Name: "h2"}},
		{Type: event.HostClosed, Host: &event.Host{Name: "h2"}},
		sub(1, "normal"), sub(2, "normal"), sub(3, "short"), sub(4, "short"),
		{Type: event.CycleDecided, Cycle: &event.Cycle{Number: 1,
			Started: []event.Placement{{Job: 1, Attempt: 1, Hosts: []event.HostAlloc{{Host: "h1", Slots: 2}}}},
			Pending: []event.Pending{{Job: 2, Reason: "NotEnoughSlots"}, {Job: 3, Reason: "Priority"}, {Job: 4, Reason: "Priority"}}}},
		{Type: event.JobKilled, Killed: &event.Killed{Job: 4, By: "alice"}},
		sub(5, "short"),
	} {
		e.Index, e.At = uint64(i+1), int64(i+1)*1e9
		if err := st.Apply(e); err != nil {
			t.Fatal(err)
		}
	}
	k, err := live.New(c, st, plugins.NewInTreeRegistry())
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// series is one gathered sample: its labels ("k=v,k=v", sorted) and
// value (a histogram's count).
type series map[string]map[string]float64

func gather(t *testing.T, m *Metrics) (series, map[string]dto.MetricType) {
	t.Helper()
	fams, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	out, types := series{}, map[string]dto.MetricType{}
	for _, f := range fams {
		types[f.GetName()] = f.GetType()
		out[f.GetName()] = map[string]float64{}
		for _, s := range f.GetMetric() {
			var ls []string
			for _, l := range s.GetLabel() {
				ls = append(ls, l.GetName()+"="+l.GetValue())
			}
			sort.Strings(ls)
			var v float64
			switch f.GetType() {
			case dto.MetricType_COUNTER:
				v = s.GetCounter().GetValue()
			case dto.MetricType_GAUGE:
				v = s.GetGauge().GetValue()
			case dto.MetricType_HISTOGRAM:
				v = float64(s.GetHistogram().GetSampleCount())
			}
			out[f.GetName()][strings.Join(ls, ",")] = v
		}
	}
	return out, types
}

// TestMetrics: each metric of the package, after the log of testCore,
// two cycles, a commit and three requests, with the values worked out
// from them by hand.
func TestMetrics(t *testing.T) {
	k := testCore(t)
	now := time.Unix(1000, 0)
	m := New(Source{
		View:       func(fn func(*live.Core)) { fn(k) },
		Heartbeats: func() map[string]time.Time { return map[string]time.Time{"h1": time.Unix(990, 0)} },
		Store:      func() store.Stats { return store.Stats{Commits: 3, Syncs: 6} },
		Streams:    func() (int, uint64) { return 2, 5 },
		Now:        func() time.Time { return now },
	})
	m.Cycled(2*time.Millisecond, 1)
	m.Cycled(time.Millisecond, 0)
	m.Commit(3, 5*time.Millisecond)
	m.Applied([]event.Event{{Type: event.JobSubmitted}, {Type: event.JobSubmitted}, {Type: event.JobKilled}})
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/jobs", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("missing") != "" {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write([]byte("{}"))
	})
	route := func(r *http.Request) string {
		if _, p := mux.Handler(r); p != "" {
			return p
		}
		return "other"
	}
	h := m.Instrument(route, mux)
	for _, q := range []string{"", "", "?missing=1"} {
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/v1/jobs"+q, nil))
	}
	got, types := gather(t, m)
	want := map[string]map[string]float64{
		"xce_jobs": {
			"queue=normal,state=PEND": 1, "queue=normal,state=RUN": 1, "queue=normal,state=SUSP": 0, "queue=normal,state=DONE": 0, "queue=normal,state=EXIT": 0,
			"queue=short,state=PEND": 2, "queue=short,state=RUN": 0, "queue=short,state=SUSP": 0, "queue=short,state=DONE": 0, "queue=short,state=EXIT": 1,
		},
		"xce_pending_jobs":                  {"reason=NotEnoughSlots": 1, "reason=Priority": 1, "reason=None": 1},
		"xce_agents":                        {"status=ok": 1, "status=closed": 1, "status=unavail": 1},
		"xce_agent_heartbeat_age_seconds":   {"host=h1": 10},
		"xce_slots_capacity":                {"": 8},
		"xce_slots_used":                    {"": 2},
		"xce_log_last_index":                {"": 11},
		"xce_cycle_duration_seconds":        {"": 2},
		"xce_cycle_started_jobs":            {"": 2},
		"xce_jobs_started_total":            {"": 1},
		"xce_store_commit_duration_seconds": {"": 1},
		"xce_store_commits_total":           {"": 3},
		"xce_store_fsyncs_total":            {"": 6},
		"xce_events_total":                  {"type=job.submitted": 2, "type=job.killed": 1},
		"xce_api_requests_total":            {"code=200,route=GET /v1/jobs": 2, "code=404,route=GET /v1/jobs": 1},
		"xce_api_request_duration_seconds":  {"route=GET /v1/jobs": 3},
		"xce_dashboard_streams":             {"": 2},
		"xce_dashboard_stream_drops_total":  {"": 5},
	}
	wantType := map[string]dto.MetricType{
		"xce_cycle_duration_seconds": dto.MetricType_HISTOGRAM, "xce_cycle_started_jobs": dto.MetricType_HISTOGRAM,
		"xce_store_commit_duration_seconds": dto.MetricType_HISTOGRAM, "xce_api_request_duration_seconds": dto.MetricType_HISTOGRAM,
		"xce_jobs_started_total": dto.MetricType_COUNTER, "xce_store_commits_total": dto.MetricType_COUNTER, "xce_store_fsyncs_total": dto.MetricType_COUNTER,
		"xce_events_total": dto.MetricType_COUNTER, "xce_api_requests_total": dto.MetricType_COUNTER, "xce_dashboard_stream_drops_total": dto.MetricType_COUNTER,
	}
	for name, ws := range want {
		gs, ok := got[name]
		if !ok {
			t.Errorf("%s: not gathered", name)
			continue
		}
		if wt, ok := wantType[name]; ok && types[name] != wt || !ok && types[name] != dto.MetricType_GAUGE {
			t.Errorf("%s: type %v", name, types[name])
		}
		if len(gs) != len(ws) {
			t.Errorf("%s: series %v, want %v", name, gs, ws)
			continue
		}
		for ls, v := range ws {
			if g, ok := gs[ls]; !ok || g != v {
				t.Errorf("%s{%s} = %v (present %v), want %v", name, ls, g, ok, v)
			}
		}
	}
	// The standard collectors are there too.
	for _, name := range []string{"go_goroutines", "process_cpu_seconds_total"} {
		if _, ok := got[name]; !ok {
			t.Errorf("%s: not gathered", name)
		}
	}
}

// TestNoDefaultRegistry: two servers' metrics do not share a registry.
func TestNoDefaultRegistry(t *testing.T) {
	k := testCore(t)
	src := Source{View: func(fn func(*live.Core)) { fn(k) }}
	a, b := New(src), New(src)
	if a.Registry() == b.Registry() {
		t.Fatal("two Metrics share a registry")
	}
	a.Cycled(time.Millisecond, 3)
	gb, _ := gather(t, b)
	if v := gb["xce_jobs_started_total"][""]; v != 0 {
		t.Errorf("b counts %v jobs started by a's cycle", v)
	}
}
