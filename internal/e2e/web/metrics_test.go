package web

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// documented is one metric of docs/metrics-live.md's table.
type documented struct {
	name, typ string
	labels    []string
}

var docRowRE = regexp.MustCompile("^\\| `(xce_[a-z_]+)` \\| (gauge|counter|histogram) \\| ([^|]*) \\|")

// documentedMetrics reads the metrics docs/metrics-live.md documents.
func documentedMetrics(t *testing.T) []documented {
	t.Helper()
	data, err := os.ReadFile("../../../docs/metrics-live.md")
	if err != nil {
		t.Fatal(err)
	}
	var out []documented
	for _, line := range strings.Split(string(data), "\n") {
		m := docRowRE.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		d := documented{name: m[1], typ: m[2]}
		for _, l := range regexp.MustCompile("`([a-z_]+)`").FindAllStringSubmatch(m[3], -1) {
			d.labels = append(d.labels, l[1])
		}
		sort.Strings(d.labels)
		out = append(out, d)
	}
	if len(out) < 15 {
		t.Fatalf("docs/metrics-live.md documents %d metrics: the table was not read", len(out))
	}
	return out
}

// scrape reads /metrics over client (the socket, or TCP with a token)
// and parses it with expfmt.
func scrape(t *testing.T, c *http.Client, url, token string) (map[string]*dto.MetricFamily, int) {
	t.Helper()
	req, err := http.NewRequest("GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		return nil, resp.StatusCode
	}
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(resp.Body); err != nil {
		t.Fatal(err)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(&buf)
	if err != nil {
		t.Fatalf("/metrics does not parse: %v\n%s", err, buf.String())
	}
	return fams, 200
}

// value returns the value of fam's sample with labels (name=value
// pairs; a histogram's sample count, and its sum with sum set), and
// whether there is one.
func value(fam *dto.MetricFamily, sum bool, labels ...string) (float64, bool) {
	if fam == nil {
		return 0, false
	}
	want := map[string]string{}
	for i := 0; i+1 < len(labels); i += 2 {
		want[labels[i]] = labels[i+1]
	}
	for _, m := range fam.GetMetric() {
		got := map[string]string{}
		for _, l := range m.GetLabel() {
			got[l.GetName()] = l.GetValue()
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			continue
		}
		switch fam.GetType() {
		case dto.MetricType_COUNTER:
			return m.GetCounter().GetValue(), true
		case dto.MetricType_GAUGE:
			return m.GetGauge().GetValue(), true
		case dto.MetricType_HISTOGRAM:
			if sum {
				return m.GetHistogram().GetSampleSum(), true
			}
			return float64(m.GetHistogram().GetSampleCount()), true
		}
	}
	return 0, false
}

// TestMetricsLive runs a server with two hosts of 2 slots, h1 with an
// agent and h2 without, and queues normal and short, and scripts:
//
//	job 1, normal, 1 task, `true`       → DONE
//	job 2, normal, 2 tasks, sleep 600   → RUN on h1 (full)
//	job 3, short, 1 task                → PEND NotEnoughSlots (h1 full, h2 unavail)
//	job 4, short, 1 task                → killed while pending: EXIT
//
// Then /metrics, read with expfmt on the socket and over TCP (401
// without a token), has every metric docs/metrics-live.md documents,
// with its type and labels, and these values worked out from the
// script: xce_jobs normal DONE 1, RUN 1, short PEND 1, EXIT 1, the other
// states 0; one job pending for NotEnoughSlots; agents ok 1, unavail 1,
// closed 0; 4 slots, 2 used; 2 jobs started, in cycles whose started
// counts add up to 2; 4 submits and 1 kill answered 200, 1 agent
// registration; 4 job.submitted, 2 job.started, 1 job.finished, 1
// job.killed events; fsyncs twice the commits; no stream open.
func TestMetricsLive(t *testing.T) {
	r := newRig(t, "hosts:\n  - {name: h1, slots: 2}\n  - {name: h2, slots: 2}\nqueues:\n  - {name: normal}\n  - {name: short}\n", "h1")
	j1 := r.submit("", "-q", "normal", "--", "true")
	r.await("job 1 ends", waitShort, func() bool { return r.job(j1).State == "DONE" })
	j2 := r.submit("", "-q", "normal", "-n", "2", "--", "sleep", "600")
	r.running(j2)
	j3 := r.submit("", "-q", "short", "--", "true")
	j4 := r.submit("", "-q", "short", "--", "true")
	r.xce("kill", j4)
	r.await("job 3 pends for lack of slots, job 4 is killed", waitShort, func() bool {
		return r.job(j3).Reason == "NotEnoughSlots" && r.job(j4).State == "EXIT"
	})

	sock := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "unix", r.sock)
	}}}
	fams, code := scrape(t, sock, "http://xce/metrics", "")
	if code != 200 {
		t.Fatalf("/metrics on the socket: %d", code)
	}
	tcp := &http.Client{}
	if _, code := scrape(t, tcp, "http://"+r.addr+"/metrics", ""); code != 401 {
		t.Errorf("/metrics over TCP without a token: %d, want 401", code)
	}
	a, _ := others(t, r.me)
	if overTCP, code := scrape(t, tcp, "http://"+r.addr+"/metrics", r.token(a)); code != 200 || overTCP["xce_jobs"] == nil {
		t.Errorf("/metrics over TCP with %s's token: %d", a, code)
	}

	for _, d := range documentedMetrics(t) {
		fam := fams[d.name]
		if fam == nil {
			t.Errorf("%s: documented, not served", d.name)
			continue
		}
		if got := strings.ToLower(fam.GetType().String()); got != d.typ {
			t.Errorf("%s: type %s, documented %s", d.name, got, d.typ)
		}
		for _, m := range fam.GetMetric() {
			var names []string
			for _, l := range m.GetLabel() {
				names = append(names, l.GetName())
			}
			sort.Strings(names)
			if !slices.Equal(names, d.labels) {
				t.Errorf("%s: a sample with labels %v, documented %v", d.name, names, d.labels)
			}
		}
	}

	exact := func(name string, want float64, labels ...string) {
		t.Helper()
		if got, ok := value(fams[name], false, labels...); !ok || got != want {
			t.Errorf("%s%v = %v (present %v), want %v", name, labels, got, ok, want)
		}
	}
	for _, s := range []struct {
		queue, state string
		n            float64
	}{{"normal", "PEND", 0}, {"normal", "RUN", 1}, {"normal", "SUSP", 0}, {"normal", "DONE", 1}, {"normal", "EXIT", 0},
		{"short", "PEND", 1}, {"short", "RUN", 0}, {"short", "SUSP", 0}, {"short", "DONE", 0}, {"short", "EXIT", 1}} {
		exact("xce_jobs", s.n, "queue", s.queue, "state", s.state)
	}
	if n := len(fams["xce_jobs"].GetMetric()); n != 10 {
		t.Errorf("xce_jobs: %d samples, want 10 (5 states of 2 queues)", n)
	}
	exact("xce_pending_jobs", 1, "reason", "NotEnoughSlots")
	if n := len(fams["xce_pending_jobs"].GetMetric()); n != 1 {
		t.Errorf("xce_pending_jobs: %d samples, want 1", n)
	}
	exact("xce_agents", 1, "status", "ok")
	exact("xce_agents", 0, "status", "closed")
	exact("xce_agents", 1, "status", "unavail")
	exact("xce_slots_capacity", 4)
	exact("xce_slots_used", 2)
	if age, ok := value(fams["xce_agent_heartbeat_age_seconds"], false, "host", "h1"); !ok || age < 0 || age > 30 {
		t.Errorf("h1's heartbeat age %v (present %v): want 0 to the heartbeat timeout, 30 s", age, ok)
	}
	if _, ok := value(fams["xce_agent_heartbeat_age_seconds"], false, "host", "h2"); ok {
		t.Error("h2 has no agent, but a heartbeat age")
	}
	exact("xce_jobs_started_total", 2)
	if got, _ := value(fams["xce_cycle_started_jobs"], true); got != 2 {
		t.Errorf("xce_cycle_started_jobs_sum %v, want 2", got)
	}
	cycles, _ := value(fams["xce_cycle_started_jobs"], false)
	timed, _ := value(fams["xce_cycle_duration_seconds"], false)
	if cycles < 2 || cycles != timed {
		t.Errorf("cycles: %v counted by jobs started, %v timed; want the same, 2 or more (jobs 1 and 2 started in two)", cycles, timed)
	}
	exact("xce_api_requests_total", 4, "route", "POST /v1/jobs", "code", "200")
	exact("xce_api_requests_total", 1, "route", "POST /v1/jobs/{id}/kill", "code", "200")
	exact("xce_api_requests_total", 1, "route", "POST /v1/agent/register", "code", "200")
	exact("xce_events_total", 4, "type", "job.submitted")
	exact("xce_events_total", 2, "type", "job.started")
	exact("xce_events_total", 1, "type", "job.finished")
	exact("xce_events_total", 1, "type", "job.killed")
	exact("xce_events_total", 1, "type", "host.registered")
	commits, _ := value(fams["xce_store_commits_total"], false)
	fsyncs, _ := value(fams["xce_store_fsyncs_total"], false)
	timedCommits, _ := value(fams["xce_store_commit_duration_seconds"], false)
	if commits < 1 || fsyncs != 2*commits || timedCommits != commits {
		t.Errorf("commits %v, fsyncs %v, commits timed %v: want fsyncs twice the commits, every commit timed (no snapshot yet)", commits, fsyncs, timedCommits)
	}
	var events float64
	for _, m := range fams["xce_events_total"].GetMetric() {
		events += m.GetCounter().GetValue()
	}
	exact("xce_log_last_index", events) // a new log: every event is this process's
	exact("xce_dashboard_streams", 0)
	exact("xce_dashboard_stream_drops_total", 0)
	if t.Failed() {
		var b bytes.Buffer
		for _, f := range fams {
			_, _ = expfmt.MetricFamilyToText(&b, f)
		}
		t.Logf("/metrics:\n%s", b.String())
	}
}

// TestGrafanaDashboard: docs/grafana-xce.json is a Grafana dashboard
// whose every query names metrics of docs/metrics-live.md only, and that
// queries each of them.
func TestGrafanaDashboard(t *testing.T) {
	data, err := os.ReadFile("../../../docs/grafana-xce.json")
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Title  string `json:"title"`
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(data, &dash); err != nil {
		t.Fatalf("docs/grafana-xce.json: %v", err)
	}
	known := map[string]bool{}
	for _, d := range documentedMetrics(t) {
		known[d.name] = true
	}
	used := map[string]bool{}
	name := regexp.MustCompile(`xce_[a-z_]+`)
	for _, p := range dash.Panels {
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, q := range p.Targets {
			for _, n := range name.FindAllString(q.Expr, -1) {
				base := strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(n, "_bucket"), "_sum"), "_count")
				if !known[base] && !known[n] {
					t.Errorf("panel %q queries %s, which docs/metrics-live.md does not document", p.Title, n)
				}
				used[base] = true
			}
		}
	}
	for n := range known {
		if !used[n] && n != "xce_log_last_index" && n != "xce_api_request_duration_seconds" && n != "xce_dashboard_stream_drops_total" {
			t.Errorf("no panel shows %s", n)
		}
	}
}
