package dashboard

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
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

const testConfig = `
hosts:
  - {name: h1, slots: 4}
  - {name: h2, slots: 2}
  - {name: h3, slots: 2}
queues:
  - {name: normal}
  - {name: short}
server:
  admins: [carol]
`

// fixture is a core over a log written by hand, and a dashboard over it:
//
//	job 1 alice normal  RUN  2 slots on h1, 1 on h2 (submitted at 10 s, started at 20 s)
//	job 2 bob   normal  PEND NotEnoughSlots       (submitted at 11 s)
//	job 3 alice short   DONE on h1                (submitted at 12 s, 21 s to 30 s)
//	job 4 bob   short   EXIT killed while pending (submitted at 13 s)
//	jobs 5-7 alice normal, array "a[1-3]": PEND Priority (submitted at 14 s)
//
// h1 and h2 registered, h2 closed, h3 never: ok, closed, unavail.
type fixture struct {
	mu   sync.RWMutex
	core *live.Core
	log  []event.Event
	h    *Handler
	tok  *auth.Issuer
}

func newFixture(t *testing.T, private bool) *fixture {
	t.Helper()
	c, srv, err := cluster.ParseConfig("config.yaml", []byte(testConfig))
	if err != nil {
		t.Fatal(err)
	}
	sub := func(id int64, user, q string, sec int64) event.Event {
		return event.Event{At: sec * 1e9, Type: event.JobSubmitted, Submit: &event.Submit{Job: id, User: user, Queue: q, TasksMin: 1, TasksMax: 3,
			Command: []string{"sleep", "60"}, Cwd: "/home/" + user, Env: []string{"SECRET=x", "A=b"}, ResReq: "rusage[mem=10]"}}
	}
	arr := sub(5, "alice", "normal", 14)
	arr.Submit.Name, arr.Submit.Array = "a", "1-3"
	f := &fixture{}
	st := state.New()
	for _, e := range []event.Event{
		{Type: event.ConfigReloaded, Config: &event.Config{Text: testConfig}},
		{Type: event.HostRegistered, Host: &event.Host{Name: "h1"}},
		{Type: event.HostRegistered, Host: &event.Host{Name: "h2"}},
		{Type: event.HostClosed, Host: &event.Host{Name: "h2"}},
		sub(1, "alice", "normal", 10), sub(2, "bob", "normal", 11), sub(3, "alice", "short", 12), sub(4, "bob", "short", 13), arr,
		{At: 20e9, Type: event.CycleDecided, Cycle: &event.Cycle{Number: 1,
			Started: []event.Placement{{Job: 1, Attempt: 1, Hosts: []event.HostAlloc{{Host: "h1", Slots: 2}, {Host: "h2", Slots: 1}}}}}},
		{At: 21e9, Type: event.CycleDecided, Cycle: &event.Cycle{Number: 2,
			Started: []event.Placement{{Job: 3, Attempt: 1, Hosts: []event.HostAlloc{{Host: "h1", Slots: 1}}}},
			Pending: []event.Pending{{Job: 2, Reason: "NotEnoughSlots"}, {Job: 5, Reason: "Priority"}, {Job: 6, Reason: "Priority"}, {Job: 7, Reason: "Priority"}}}},
		{At: 25e9, Type: event.JobKilled, Killed: &event.Killed{Job: 4, By: "bob"}},
		{At: 30e9, Type: event.JobFinished, Finished: &event.Finished{Job: 3, Attempt: 1}},
	} {
		e.Index = st.Index + 1
		if err := st.Apply(e); err != nil {
			t.Fatal(err)
		}
		f.log = append(f.log, e)
	}
	if f.core, err = live.New(c, st, plugins.NewInTreeRegistry()); err != nil {
		t.Fatal(err)
	}
	if f.tok, err = auth.LoadKey(t.TempDir()); err != nil {
		t.Fatal(err)
	}
	a := api.NewHandler((*server.Loop)(nil), nil, srv.Admins)
	a.Private = private
	f.h = New(Options{View: f.view, Log: f, API: a, Tokens: f.tok})
	return f
}

func (f *fixture) view(fn func(k *live.Core)) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	fn(f.core)
}

// Read and Snapshot make the fixture an EventLog.
func (f *fixture) Read(from uint64, fn func(event.Event) error) error {
	for _, e := range f.log {
		if e.Index >= from {
			if err := fn(e); err != nil {
				return err
			}
		}
	}
	return nil
}

func (f *fixture) Snapshot() (uint64, []byte, bool, error) { return 0, nil, false, nil }

// get asks the dashboard for path as user (the socket's identity; "" for
// none) and decodes the answer into v.
func (f *fixture) get(t *testing.T, user, path string, v any) int {
	t.Helper()
	r := httptest.NewRequest("GET", path, nil)
	if user != "" {
		r = r.WithContext(api.WithCaller(r.Context(), api.Caller{User: user, UID: 1000}))
	}
	w := httptest.NewRecorder()
	f.h.ServeHTTP(w, r)
	if v != nil && w.Code == 200 {
		if err := json.Unmarshal(w.Body.Bytes(), v); err != nil {
			t.Fatalf("%s: %v: %s", path, err, w.Body)
		}
	}
	return w.Code
}

func jobIDs(p JobsPage) []int64 {
	var out []int64
	for _, j := range p.Jobs {
		out = append(out, j.Job)
	}
	return out
}

// TestJobsPage: filters, sorts and pages of the fixture's seven jobs.
func TestJobsPage(t *testing.T) {
	f := newFixture(t, false)
	for _, c := range []struct {
		query string
		want  []int64
		total int
	}{
		{"", []int64{7, 6, 5, 4, 3, 2, 1}, 7},
		{"?sort=id", []int64{1, 2, 3, 4, 5, 6, 7}, 7},
		{"?user=bob", []int64{4, 2}, 2},
		{"?user=all&queue=short", []int64{4, 3}, 2},
		{"?state=PEND", []int64{7, 6, 5, 2}, 4},
		{"?state=active&sort=id", []int64{1, 2, 5, 6, 7}, 5},
		{"?state=ended", []int64{4, 3}, 2},
		{"?host=h2", []int64{1}, 1},
		{"?host=h1&sort=id", []int64{1}, 1}, // job 3 ran on h1, but has ended
		{"?sort=user&limit=3", []int64{1, 3, 5}, 7},
		{"?sort=-user&limit=3", []int64{4, 2, 7}, 7},
		{"?sort=slots&offset=5", []int64{3, 1}, 7}, // 0 slots: 2, 4, 5, 6, 7; then 3 (1 slot, its last attempt), then 1 (3)
		{"?sort=id&offset=2&limit=2", []int64{3, 4}, 7},
		{"?sort=id&offset=9", nil, 7},
		{"?sort=start&state=RUN", []int64{1}, 1},
		{"?sort=reason&state=PEND", []int64{2, 5, 6, 7}, 4},
	} {
		var p JobsPage
		if code := f.get(t, "alice", "/ui/v1/jobs"+c.query, &p); code != 200 {
			t.Errorf("%s: status %d", c.query, code)
			continue
		}
		if got := jobIDs(p); !slices.Equal(got, c.want) || p.Total != c.total {
			t.Errorf("%s: jobs %v of %d, want %v of %d", c.query, got, p.Total, c.want, c.total)
		}
	}
	var p JobsPage
	f.get(t, "alice", "/ui/v1/jobs?sort=id&limit=1", &p)
	want := JobRow{Job: 1, ID: 1, Name: "", User: "alice", Queue: "normal", State: "RUN", Slots: 3, Hosts: "h1 +1", Submit: 10, Start: 20}
	if len(p.Jobs) != 1 || p.Jobs[0] != want || !slices.Equal(p.Users, []string{"alice", "bob"}) || !slices.Equal(p.Queues, []string{"normal", "short"}) {
		t.Errorf("page %+v; want job %+v, users alice bob, queues normal short", p, want)
	}
	f.get(t, "alice", "/ui/v1/jobs?state=PEND&sort=id&limit=2&offset=1", &p)
	if len(p.Jobs) != 2 || p.Jobs[0].ID != 5 || p.Jobs[0].ArrayIndex != 1 || p.Jobs[1].ID != 5 || p.Jobs[1].ArrayIndex != 2 || p.Jobs[0].Reason != "Priority" {
		t.Errorf("array elements %+v; want 5[1] and 5[2], Priority", p.Jobs)
	}
	for _, q := range []string{"?sort=colour", "?state=RUNNING", "?limit=-1", "?offset=x"} {
		if code := f.get(t, "alice", "/ui/v1/jobs"+q, nil); code != 400 {
			t.Errorf("%s: status %d, want 400", q, code)
		}
	}
	if code := f.get(t, "", "/ui/v1/jobs", nil); code != 401 {
		t.Errorf("no identity: status %d, want 401", code)
	}
	f.get(t, "alice", "/ui/v1/jobs?limit=100000", &p)
	if p.Limit != MaxLimit {
		t.Errorf("limit %d, want it cut to %d", p.Limit, MaxLimit)
	}
}

// TestPrivateJobs: with private jobs a user's view holds only their own
// jobs, whatever the filter asks, and no list of users; an
// administrator sees all.
func TestPrivateJobs(t *testing.T) {
	f := newFixture(t, true)
	var p JobsPage
	f.get(t, "bob", "/ui/v1/jobs?user=alice", &p)
	if got := jobIDs(p); !slices.Equal(got, []int64{4, 2}) || p.Users != nil {
		t.Errorf("bob asking for alice's jobs: %v, users %v; want [4 2], none", got, p.Users)
	}
	f.get(t, "carol", "/ui/v1/jobs?user=alice", &p)
	if got := jobIDs(p); !slices.Equal(got, []int64{7, 6, 5, 3, 1}) {
		t.Errorf("carol (an administrator): %v, want alice's 7 6 5 3 1", got)
	}
	if code := f.get(t, "bob", "/ui/v1/jobs/1", nil); code != 404 {
		t.Errorf("bob's page of alice's job: %d, want 404", code)
	}
}

// TestJobPage: the job page's request, allocation, host reasons and
// kill permission: the owner and an administrator may kill a running
// job, another user may not, nobody may kill an ended one.
func TestJobPage(t *testing.T) {
	f := newFixture(t, false)
	var p JobPage
	if code := f.get(t, "alice", "/ui/v1/jobs/1", &p); code != 200 {
		t.Fatalf("status %d", code)
	}
	if p.Name != "1" || p.Job.State != "RUN" || p.Attempt != 1 || !p.CanKill || p.Request.Env != 2 || p.Request.Cwd != "/home/alice" ||
		!slices.Equal(p.Request.Command, []string{"sleep", "60"}) || p.Request.TasksMax != 3 || p.Request.ResReq != "rusage[mem=10]" ||
		len(p.Alloc) != 2 || p.Alloc[0].Host != "h1" || p.Alloc[0].Slots != 2 || p.Alloc[1].Host != "h2" || p.Alloc[1].Slots != 1 ||
		p.Job.Hosts["h1"] != 2 || p.Job.StartTime != 20 {
		t.Errorf("job 1 for alice: %+v", p)
	}
	for user, want := range map[string]bool{"alice": true, "bob": false, "carol": true} {
		f.get(t, user, "/ui/v1/jobs/1", &p)
		if p.CanKill != want {
			t.Errorf("job 1 for %s: can kill %v, want %v", user, p.CanKill, want)
		}
	}
	f.get(t, "alice", "/ui/v1/jobs/3", &p)
	if p.CanKill || p.Job.State != "DONE" {
		t.Errorf("job 3 (DONE) for alice: can kill %v, state %s", p.CanKill, p.Job.State)
	}
	f.get(t, "alice", "/ui/v1/jobs/6", &p)
	if want := "held back for an earlier job of the queue (strict FCFS order, or a backfill reservation)"; p.ReasonText != want {
		t.Errorf("job 6's reason text %q, want %q", p.ReasonText, want)
	}
	if got := reasonText("LimitReached", "L1"); got != "limit L1 is reached" {
		t.Errorf("LimitReached, L1: %q", got)
	}
	if got := reasonText("Nonsense", ""); got != "" {
		t.Errorf("an unknown code: %q", got)
	}
	if p.Name != "5[2]" || p.Request.Array != "1-3" || p.Job.Reason != "Priority" {
		t.Errorf("job 6: name %q, array %q, reason %q; want 5[2], 1-3, Priority", p.Name, p.Request.Array, p.Job.Reason)
	}
	if strings.Contains(mustJSON(t, p), "SECRET") {
		t.Error("the job page shows the job's environment")
	}
	for path, want := range map[string]int{"/ui/v1/jobs/99": 404, "/ui/v1/jobs/0": 400, "/ui/v1/jobs/x": 400} {
		if code := f.get(t, "alice", path, nil); code != want {
			t.Errorf("%s: %d, want %d", path, code, want)
		}
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestHostsAndSummary: the hosts as arrays in the configuration's order,
// with the slots running jobs hold (job 1: 2 on h1, 1 on h2; job 3 has
// ended), and the summary's counts.
func TestHostsAndSummary(t *testing.T) {
	f := newFixture(t, false)
	var v HostsView
	f.get(t, "bob", "/ui/v1/hosts", &v)
	if !slices.Equal(v.Names, []string{"h1", "h2", "h3"}) || !slices.Equal(v.Slots, []int{4, 2, 2}) || !slices.Equal(v.Used, []int{2, 1, 0}) ||
		v.Status != "ocu" || v.Index != 13 {
		t.Errorf("hosts %+v", v)
	}
	var s Summary
	f.get(t, "bob", "/ui/v1/summary", &s)
	if s.Jobs["PEND"] != 4 || s.Jobs["RUN"] != 1 || s.Jobs["DONE"] != 1 || s.Jobs["EXIT"] != 1 || s.Jobs["SUSP"] != 0 ||
		s.Hosts["ok"] != 1 || s.Hosts["closed"] != 1 || s.Hosts["unavail"] != 1 || s.Used != 3 || s.Slots != 8 {
		t.Errorf("summary %+v", s)
	}
}

// TestIndexFollowsEvents: after its first copy of the state the index
// reads no more of it: a change it is not told of is not seen; the
// change announced (server.Observer) is folded in; and when announced
// batches were dropped, the next read copies the state anew.
func TestIndexFollowsEvents(t *testing.T) {
	f := newFixture(t, false)
	var v HostsView
	f.get(t, "bob", "/ui/v1/hosts", &v)
	change := func(e event.Event) event.Event {
		f.mu.Lock()
		defer f.mu.Unlock()
		e.Index = f.core.State.Index + 1
		if err := f.core.Apply(e); err != nil {
			t.Fatal(err)
		}
		return e
	}
	opened := change(event.Event{Type: event.HostOpened, Host: &event.Host{Name: "h2"}})
	if f.get(t, "bob", "/ui/v1/hosts", &v); v.Status != "ocu" || v.Index != 13 {
		t.Errorf("before it is announced: %s at %d, want ocu at 13", v.Status, v.Index)
	}
	f.h.Applied([]event.Event{opened})
	if f.get(t, "bob", "/ui/v1/hosts", &v); v.Status != "oou" || v.Index != 14 {
		t.Errorf("announced: %s at %d, want oou at 14", v.Status, v.Index)
	}
	closed := change(event.Event{Type: event.HostClosed, Host: &event.Host{Name: "h1"}})
	for range feedSize {
		f.h.Applied(nil) // fills the queue: the next batch is dropped
	}
	f.h.Applied([]event.Event{closed})
	if f.get(t, "bob", "/ui/v1/hosts", &v); v.Status != "cou" || v.Index != 15 {
		t.Errorf("after a drop: %s at %d, want cou at 15 (copied anew)", v.Status, v.Index)
	}
}

// TestLogin: the login form's token goes into an HttpOnly, SameSite=Strict
// cookie named after the port, for the token's lifetime, only from a
// page of this server and with a valid token; /ui/v1/me then gives the
// session's anti-forgery token; logout clears the cookie.
func TestLogin(t *testing.T) {
	f := newFixture(t, false)
	tok, err := f.tok.Issue(auth.Identity{User: "alice", UID: 1000, GID: 1000}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	post := func(path, body string, headers map[string]string) *httptest.ResponseRecorder {
		r := httptest.NewRequest("POST", "http://127.0.0.1:7777"+path, strings.NewReader(body))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		for k, v := range headers {
			r.Header.Set(k, v)
		}
		w := httptest.NewRecorder()
		f.h.ServeHTTP(w, r)
		return w
	}
	same := map[string]string{"Origin": "http://127.0.0.1:7777"}
	if w := post("/ui/login", "token="+url.QueryEscape(tok), map[string]string{"Origin": "http://evil.example"}); w.Code != 403 || len(w.Result().Cookies()) != 0 {
		t.Errorf("login from another site: %d, cookies %v", w.Code, w.Result().Cookies())
	}
	if w := post("/ui/login", "token=nonsense", same); w.Code != 401 || len(w.Result().Cookies()) != 0 {
		t.Errorf("login with a bad token: %d, cookies %v", w.Code, w.Result().Cookies())
	}
	w := post("/ui/login", "token="+url.QueryEscape(tok), same)
	cs := w.Result().Cookies()
	if w.Code != 303 || w.Header().Get("Location") != "/" || len(cs) != 1 {
		t.Fatalf("login: %d %v %v", w.Code, w.Header(), cs)
	}
	c := cs[0]
	if c.Name != "xce_session_7777" || c.Value != tok || !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || c.Path != "/" ||
		c.MaxAge < 3590 || c.MaxAge > 3600 || c.Secure {
		t.Errorf("cookie %+v: want xce_session_7777, the token, HttpOnly, SameSite=Strict, Path /, an hour, not Secure over http", c)
	}
	// /ui/v1/me through the TCP handler, with the cookie.
	tcp := api.NewTCPHandler(nil, "", f.h, f.tok)
	r := httptest.NewRequest("GET", "http://127.0.0.1:7777/ui/v1/me", nil)
	r.AddCookie(c)
	rw := httptest.NewRecorder()
	tcp.ServeHTTP(rw, r)
	var me Me
	if err := json.Unmarshal(rw.Body.Bytes(), &me); err != nil || me.User != "alice" || me.Admin || !me.Session || !f.tok.CheckCSRF(tok, me.CSRF) {
		t.Errorf("me: %d %s", rw.Code, rw.Body)
	}
	if w := post("/ui/logout", "", same); w.Code != 200 || len(w.Result().Cookies()) != 1 || w.Result().Cookies()[0].MaxAge >= 0 {
		t.Errorf("logout: %d %v", w.Code, w.Result().Cookies())
	}
}

// TestPages: the page and its assets need no identity, and come with a
// Content-Security-Policy that allows no inline script.
func TestPages(t *testing.T) {
	f := newFixture(t, false)
	for path, want := range map[string]int{"/": 200, "/assets/app.js": 200, "/assets/app.css": 200, "/assets/nothing.js": 404,
		"/assets/": 404, "/nothing": 404, "/ui/v1/me": 200, "/ui/v1/summary": 401} {
		r := httptest.NewRequest("GET", path, nil)
		w := httptest.NewRecorder()
		f.h.ServeHTTP(w, r)
		if w.Code != want {
			t.Errorf("GET %s: %d, want %d", path, w.Code, want)
		}
		if want == 200 && !strings.HasPrefix(path, "/ui/") && !strings.Contains(w.Header().Get("Content-Security-Policy"), "script-src 'self'") {
			t.Errorf("GET %s: CSP %q", path, w.Header().Get("Content-Security-Policy"))
		}
	}
	var me Me
	if f.get(t, "", "/ui/v1/me", &me); me.User != "" || !me.Login {
		t.Errorf("me without an identity: %+v, want the login", me)
	}
	if got := f.h.Route(httptest.NewRequest("GET", "/ui/v1/jobs/12", nil)); got != "GET /ui/v1/jobs/{job}" {
		t.Errorf("Route: %q", got)
	}
	_ = context.Background
}
