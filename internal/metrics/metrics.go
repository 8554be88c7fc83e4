// Package metrics holds the live scheduler's Prometheus metrics
// (docs/metrics-live.md): the collectors, on a registry of their own per
// server (prometheus.NewRegistry, never the default one), and the
// handler that serves them in the exposition format at /metrics.
//
// Two kinds of metric: those counted as things happen (cycles, commits
// of the event log, API requests, events), fed by the server loop's
// Observer, the store's OnCommit hook and the Instrument middleware; and
// those read from the state when Prometheus scrapes (jobs by state and
// queue, pending jobs by reason, agents by status, heartbeat ages),
// through the loop's View, which only shares the loop's read lock for
// one pass over the jobs and sends nothing while it holds it.
package metrics

import (
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/xce-sched/xce/internal/event"
	"github.com/xce-sched/xce/internal/live"
	"github.com/xce-sched/xce/internal/store"
)

// Source is what the scrape-time collectors read.
type Source struct {
	// View runs fn on the core between the loop's batches
	// (server.Loop.View). Required.
	View func(fn func(k *live.Core))
	// Heartbeats, when set, returns when each remote agent with a session
	// was last heard from (agent.Hub.Heartbeats); nil for a server whose
	// agent is inside it (no heartbeat metric then).
	Heartbeats func() map[string]time.Time
	// Store, when set, returns the event log's counters (store.Stats).
	Store func() store.Stats
	// Streams, when set, returns the dashboard's live-update streams
	// open now and the messages dropped for slow ones so far.
	Streams func() (open int, dropped uint64)
	// Now is the clock (time.Now when nil).
	Now func() time.Time
}

// Metrics is one server's metrics and their registry.
type Metrics struct {
	reg          *prometheus.Registry
	cycle        prometheus.Histogram
	cycleStarted prometheus.Histogram
	started      prometheus.Counter
	commit       prometheus.Histogram
	events       *prometheus.CounterVec
	requests     *prometheus.CounterVec
	latency      *prometheus.HistogramVec
}

// New returns the metrics of a server reading src, registered on a new
// registry with the Go runtime's and the process's standard collectors.
func New(src Source) *Metrics {
	if src.Now == nil {
		src.Now = time.Now
	}
	m := &Metrics{reg: prometheus.NewRegistry()}
	m.cycle = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "xce_cycle_duration_seconds",
		Help:    "How long the scheduler took to decide one scheduling cycle (without appending its decisions to the event log).",
		Buckets: prometheus.ExponentialBuckets(0.0001, 2, 16),
	})
	m.cycleStarted = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "xce_cycle_started_jobs",
		Help:    "Jobs started by one scheduling cycle.",
		Buckets: []float64{0, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000},
	})
	m.started = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "xce_jobs_started_total",
		Help: "Jobs started (placed) by the scheduling cycles of this server process, requeued jobs' new attempts included.",
	})
	m.commit = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "xce_store_commit_duration_seconds",
		Help:    "How long one write transaction of the event log took to commit, its writes and fsyncs included (group commit: one transaction for all the appends waiting).",
		Buckets: prometheus.ExponentialBuckets(0.0001, 2, 16),
	})
	m.events = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "xce_events_total",
		Help: "Events this server process appended to the event log, by type.",
	}, []string{"type"})
	m.requests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "xce_api_requests_total",
		Help: "HTTP requests answered, on the socket and the TCP listener, by route pattern and status code.",
	}, []string{"route", "code"})
	m.latency = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "xce_api_request_duration_seconds",
		Help:    "How long HTTP requests took to answer, by route pattern (a live-update stream counts when it ends).",
		Buckets: prometheus.DefBuckets,
	}, []string{"route"})
	m.reg.MustRegister(m.cycle, m.cycleStarted, m.started, m.commit, m.events, m.requests, m.latency,
		&stateCollector{src: src}, collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	if src.Store != nil {
		m.reg.MustRegister(
			prometheus.NewCounterFunc(prometheus.CounterOpts{
				Name: "xce_store_commits_total",
				Help: "Write transactions of the event log that committed (appends, in groups, and snapshots).",
			}, func() float64 { return float64(src.Store().Commits) }),
			prometheus.NewCounterFunc(prometheus.CounterOpts{
				Name: "xce_store_fsyncs_total",
				Help: "fdatasync calls of the event log's committed write transactions: two each (data pages, then the meta page), snapshots included; counted, not traced.",
			}, func() float64 { return float64(src.Store().Syncs) }))
	}
	if src.Streams != nil {
		m.reg.MustRegister(
			prometheus.NewGaugeFunc(prometheus.GaugeOpts{
				Name: "xce_dashboard_streams",
				Help: "The dashboard's live-update streams (Server-Sent Events) open now.",
			}, func() float64 { n, _ := src.Streams(); return float64(n) }),
			prometheus.NewCounterFunc(prometheus.CounterOpts{
				Name: "xce_dashboard_stream_drops_total",
				Help: "Live-update messages not sent to a slow stream (its buffer was full); the page refetches what it shows instead.",
			}, func() float64 { _, d := src.Streams(); return float64(d) }))
	}
	return m
}

// Registry returns the registry the metrics are on.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Handler returns the handler of /metrics: the registry in the
// Prometheus exposition format (text, or what the scraper negotiates).
// An error while gathering is answered with what could be gathered.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
}

// Applied implements server.Observer: it counts the events by type.
func (m *Metrics) Applied(events []event.Event) {
	for i := range events {
		m.events.WithLabelValues(string(events[i].Type)).Inc()
	}
}

// Cycled implements server.Observer: the cycle's duration and the jobs
// it started.
func (m *Metrics) Cycled(d time.Duration, started int) {
	m.cycle.Observe(d.Seconds())
	m.cycleStarted.Observe(float64(started))
	m.started.Add(float64(started))
}

// Commit is the store's OnCommit hook: one commit's latency.
func (m *Metrics) Commit(_ int, took time.Duration) { m.commit.Observe(took.Seconds()) }

// Instrument returns h counting each request it answers by route(r) (a
// pattern such as "GET /v1/jobs": bounded cardinality) and status code,
// with its duration.
func (m *Metrics) Instrument(route func(r *http.Request) string, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		began := time.Now()
		rec := &recorder{ResponseWriter: w}
		h.ServeHTTP(rec, r)
		code := rec.code
		if code == 0 {
			code = http.StatusOK
		}
		rt := route(r)
		m.requests.WithLabelValues(rt, strconv.Itoa(code)).Inc()
		m.latency.WithLabelValues(rt).Observe(time.Since(began).Seconds())
	})
}

// recorder is a ResponseWriter that keeps the status code; it flushes
// and unwraps to the writer it wraps (for streams and
// http.ResponseController).
type recorder struct {
	http.ResponseWriter
	code int
}

// WriteHeader implements http.ResponseWriter.
func (r *recorder) WriteHeader(code int) {
	if r.code == 0 {
		r.code = code
	}
	r.ResponseWriter.WriteHeader(code)
}

// Write implements http.ResponseWriter.
func (r *recorder) Write(b []byte) (int, error) {
	if r.code == 0 {
		r.code = http.StatusOK
	}
	return r.ResponseWriter.Write(b)
}

// Flush implements http.Flusher when the writer it wraps does.
func (r *recorder) Flush() {
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		if r.code == 0 {
			r.code = http.StatusOK
		}
		f.Flush()
	}
}

// Unwrap returns the writer it wraps (http.ResponseController).
func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }
