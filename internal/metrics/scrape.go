package metrics

import (
	"sort"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/xce-sched/xce/internal/live"
	"github.com/xce-sched/xce/internal/state"
)

// The metrics read from the state at each scrape.
var (
	descJobs = prometheus.NewDesc("xce_jobs",
		"Jobs by state (PEND, RUN, SUSP, DONE, EXIT) and queue, ended ones included, as the server's state holds them.",
		[]string{"state", "queue"}, nil)
	descPending = prometheus.NewDesc("xce_pending_jobs",
		"Pending jobs by main pending reason (docs/pending-reasons.md); None: no cycle has looked at the job yet.",
		[]string{"reason"}, nil)
	descAgents = prometheus.NewDesc("xce_agents",
		"The configuration's hosts by the status of their agent: ok (registered, open), closed (registered, closed by an administrator), unavail (no agent).",
		[]string{"status"}, nil)
	descHeartbeat = prometheus.NewDesc("xce_agent_heartbeat_age_seconds",
		"Seconds since the server last heard from a remote agent with a session (its registration, or the start of its latest poll or report); the host is lost once this passes heartbeat_timeout.",
		[]string{"host"}, nil)
	descCapacity = prometheus.NewDesc("xce_slots_capacity",
		"Job slots of every host of the configuration.", nil, nil)
	descUsed = prometheus.NewDesc("xce_slots_used",
		"Job slots held by running jobs.", nil, nil)
	descIndex = prometheus.NewDesc("xce_log_last_index",
		"The index of the last event of the event log folded into the state.", nil, nil)
)

// jobStates are the states every queue is reported in, zero or not.
var jobStates = []state.JobState{state.Pend, state.Run, state.Susp, state.Done, state.Exit}

// agentStatuses are the host statuses always reported.
var agentStatuses = []string{"ok", "closed", "unavail"}

// stateCollector reads the state when Prometheus scrapes.
type stateCollector struct{ src Source }

// Describe implements prometheus.Collector.
func (c *stateCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descJobs, descPending, descAgents, descHeartbeat, descCapacity, descUsed, descIndex} {
		ch <- d
	}
}

// tally is what one pass over the state counts.
type tally struct {
	queues   []string
	jobs     map[[2]string]int
	pending  map[string]int
	agents   map[string]int
	capacity int
	used     int
	index    uint64
}

// count makes one pass over the core's state (under the loop's read
// lock: nothing is sent meanwhile). Consecutive jobs mostly share a
// queue and a reason, so the maps are looked up only when those change.
func count(k *live.Core) tally {
	t := tally{jobs: map[[2]string]int{}, pending: map[string]int{}, agents: map[string]int{}, index: k.State.Index}
	for _, q := range k.Cluster.Queues {
		t.queues = append(t.queues, q.Name)
	}
	type perQueue struct {
		name string
		n    [5]int // by jobStates' order
	}
	var queues []*perQueue
	byName := map[string]*perQueue{}
	var cur *perQueue
	reasons := map[string]*int{}
	lastReason, lastN := "\x00", (*int)(nil)
	for _, j := range k.State.Jobs {
		if cur == nil || cur.name != j.Queue {
			if cur = byName[j.Queue]; cur == nil {
				cur = &perQueue{name: j.Queue}
				byName[j.Queue] = cur
				queues = append(queues, cur)
			}
		}
		switch j.State {
		case state.Pend:
			cur.n[0]++
			if j.Reason != lastReason {
				if lastN = reasons[j.Reason]; lastN == nil {
					lastN = new(int)
					reasons[j.Reason] = lastN
				}
				lastReason = j.Reason
			}
			*lastN++
		case state.Run:
			cur.n[1]++
			for _, a := range j.Hosts {
				t.used += a.Slots
			}
		case state.Susp:
			cur.n[2]++
		case state.Done:
			cur.n[3]++
		case state.Exit:
			cur.n[4]++
		}
	}
	for _, q := range queues {
		for i, n := range q.n {
			if n > 0 {
				t.jobs[[2]string{string(jobStates[i]), q.name}] = n
			}
		}
	}
	for r, n := range reasons {
		if r == "" {
			r = "None"
		}
		t.pending[r] += *n
	}
	for _, h := range k.Cluster.Hosts {
		t.capacity += h.Slots
		status := "unavail"
		if sh := k.State.Host(h.Name); sh != nil {
			status = sh.Status()
		}
		t.agents[status]++
	}
	return t
}

// Collect implements prometheus.Collector.
func (c *stateCollector) Collect(ch chan<- prometheus.Metric) {
	var t tally
	c.src.View(func(k *live.Core) { t = count(k) })
	send := func(d *prometheus.Desc, typ prometheus.ValueType, v float64, labels ...string) {
		// Label values come from the configuration and the log: one that
		// is not valid UTF-8 is left out rather than panic.
		if m, err := prometheus.NewConstMetric(d, typ, v, labels...); err == nil {
			ch <- m
		}
	}
	// Every state of every configured queue, then what else the jobs
	// name (an ended job of a queue since removed).
	seen := map[[2]string]bool{}
	for _, q := range t.queues {
		for _, s := range jobStates {
			k := [2]string{string(s), q}
			seen[k] = true
			send(descJobs, prometheus.GaugeValue, float64(t.jobs[k]), k[0], k[1])
		}
	}
	for _, k := range sortedKeys(t.jobs) {
		if !seen[k] {
			send(descJobs, prometheus.GaugeValue, float64(t.jobs[k]), k[0], k[1])
		}
	}
	for _, r := range sortedKeys(t.pending) {
		send(descPending, prometheus.GaugeValue, float64(t.pending[r]), r)
	}
	for _, s := range agentStatuses {
		send(descAgents, prometheus.GaugeValue, float64(t.agents[s]), s)
	}
	send(descCapacity, prometheus.GaugeValue, float64(t.capacity))
	send(descUsed, prometheus.GaugeValue, float64(t.used))
	send(descIndex, prometheus.GaugeValue, float64(t.index))
	if c.src.Heartbeats != nil {
		now := c.src.Now()
		hb := c.src.Heartbeats()
		for _, h := range sortedKeys(hb) {
			send(descHeartbeat, prometheus.GaugeValue, max(now.Sub(hb[h]).Seconds(), 0), h)
		}
	}
}

// sortedKeys returns m's keys in order (strings, or pairs of them).
func sortedKeys[K string | [2]string, V any](m map[K]V) []K {
	out := make([]K, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool { return less(out[i], out[j]) })
	return out
}

func less[K string | [2]string](a, b K) bool {
	switch x := any(a).(type) {
	case string:
		return x < any(b).(string)
	case [2]string:
		y := any(b).([2]string)
		return x[0] < y[0] || x[0] == y[0] && x[1] < y[1]
	}
	return false
}
