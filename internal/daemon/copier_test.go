package daemon

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/xce-sched/xce/cluster"
	"github.com/xce-sched/xce/framework/plugins"
	"github.com/xce-sched/xce/internal/api"
	"github.com/xce-sched/xce/internal/auth"
	"github.com/xce-sched/xce/internal/event"
	"github.com/xce-sched/xce/internal/live"
	"github.com/xce-sched/xce/internal/server"
	"github.com/xce-sched/xce/internal/store"
)

// testKeys are the replicated keys of the copier's tests.
var testKeys = event.Keys{SigningKey: testKey, AgentToken: "the-agents-token"}

// submitEvent is job id's submit, at second id.
func submitEvent(id int64) event.Event {
	return event.Event{At: id * 1e9, Type: event.JobSubmitted, Submit: &event.Submit{Job: id, User: "alice", UID: 1000, GID: 1000,
		Queue: "normal", TasksMin: 1, TasksMax: 1, Command: []string{"true"}, Cwd: "/"}}
}

// sourceMember serves, over TCP on loopback, the API of a member whose
// local copy of the event log holds the cluster's keys (event 1) and jobs
// submits (events 2 on): a follower's read view over a real store (the
// reader's), behind the TCP listener's token check with testKey. It
// returns the member's API address and its log.
func sourceMember(t *testing.T, jobs int64) (string, *store.Store) {
	t.Helper()
	log, err := store.Open(filepath.Join(t.TempDir(), "events.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { log.Close() })
	keys := testKeys
	events := []event.Event{{At: 1, Type: event.ClusterKeys, Keys: &keys}}
	for id := int64(1); id <= jobs; id++ {
		events = append(events, submitEvent(id))
	}
	if _, err := log.Append(context.Background(), events...); err != nil {
		t.Fatal(err)
	}
	st, err := server.Recover(log)
	if err != nil {
		t.Fatal(err)
	}
	c, _, err := cluster.ParseConfig("test", []byte("hosts: [{name: h1, slots: 4}]\nqueues: [{name: normal}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	core, err := live.New(c, st, plugins.NewInTreeRegistry())
	if err != nil {
		t.Fatal(err)
	}
	loop := server.NewLoop(core, refuse{}, noAgent{}, time.Second, func() int64 { return time.Now().UnixNano() })
	iss, err := auth.NewIssuer(testKey)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(api.NewTCPHandler(nil, "", api.NewHandler(loop, log, nil), iss))
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://"), log
}

// readAll returns every event of log.
func readAll(t *testing.T, log *store.Store) []event.Event {
	t.Helper()
	var out []event.Event
	if err := log.Read(1, func(e event.Event) error { out = append(out, e); return nil }); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestCopierFillsGap: a member restored from a snapshot at event 2490
// with an empty local copy fills it from another member's API, in pages
// of api.MaxEventsPage, while the events applied meanwhile (2491 to 2501)
// are only noted; once complete, the copy is the other member's event for
// event (the cluster's keys too, which the API does not show: the copy
// takes them from the replicated state), and the next applied event is
// appended at once. A member whose address the copier cannot reach is
// skipped for the next one.
func TestCopierFillsGap(t *testing.T) {
	const jobs = 2500 // events 2 to 2501
	addr, src := sourceMember(t, jobs)
	srcEvents := readAll(t, src)
	local, err := store.Open(filepath.Join(t.TempDir(), "events.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer local.Close()
	f, _ := testForwarder(t, "", "", 0)
	dead := freeLoopback(t)
	c := newCopier(local, t.Logf)
	c.fetch = (&peerLog{fwd: f, addrs: func() []string { return []string{dead, addr} }}).events
	c.keys = func() *event.Keys { k := testKeys; return &k }

	if c.restored(2490); !c.gapped() {
		t.Fatal("no gap after a restore beyond the copy")
	}
	c.apply(srcEvents[2490:2495]) // events 2491-2495, applied during the gap
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); c.run(ctx) }()
	defer func() { cancel(); <-done }()
	c.apply(srcEvents[2495:])
	for end := time.Now().Add(10 * time.Second); c.gapped(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("the copy is still gapped after 10 s, at %d", local.Last())
		}
	}
	if local.Last() != jobs+1 {
		t.Fatalf("the copy ends at %d, want %d", local.Last(), jobs+1)
	}
	next := submitEvent(jobs + 1)
	next.Index = jobs + 2
	c.apply([]event.Event{next})
	got := readAll(t, local)
	want := append(srcEvents, next)
	a, _ := json.Marshal(got)
	b, _ := json.Marshal(want)
	if string(a) != string(b) {
		t.Fatalf("the copy (%d events) is not the source's (%d)", len(got), len(want))
	}
	if *got[0].Keys != testKeys {
		t.Fatalf("the copy's keys event holds %+v", got[0].Keys)
	}
	if _, err := server.Recover(local); err != nil {
		t.Fatalf("the filled copy does not fold: %v", err)
	}
}

// TestCopierRefusesNonAdmin: the API a copier reads refuses another
// member's log to a token that is not an administrator's (403), and to
// one of another key (401); nothing of the log is shown.
func TestCopierRefusesNonAdmin(t *testing.T) {
	addr, _ := sourceMember(t, 3)
	iss, _ := auth.NewIssuer(testKey)
	other, _ := auth.NewIssuer(strings.Repeat("ab", 32))
	alice, _ := iss.Issue(auth.Identity{User: "alice", UID: 1000, GID: 1000}, time.Minute)
	forged, _ := other.Issue(auth.Identity{User: "root"}, time.Minute)
	for _, c := range []struct {
		tok  string
		want int
	}{{alice, http.StatusForbidden}, {forged, http.StatusUnauthorized}} {
		req, _ := http.NewRequest(http.MethodGet, "http://"+addr+"/v1/events?from=1&limit=10", nil)
		req.Header.Set("Authorization", "Bearer "+c.tok)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var rep api.EventsReply
		_ = json.NewDecoder(resp.Body).Decode(&rep)
		resp.Body.Close()
		if resp.StatusCode != c.want || len(rep.Events) != 0 {
			t.Errorf("GET /v1/events: %d with %d events, want %d and none", resp.StatusCode, len(rep.Events), c.want)
		}
	}
}

// TestCheckPage: a page must start at the index asked for, be contiguous
// and hold well-formed events; a masked keys event takes the replicated
// keys, and fails without them.
func TestCheckPage(t *testing.T) {
	page := func(indexes ...uint64) []event.Event {
		var out []event.Event
		for _, i := range indexes {
			e := submitEvent(int64(i))
			e.Index = i
			out = append(out, e)
		}
		return out
	}
	bad := page(5, 6)
	bad[1].Submit = nil
	for _, c := range []struct {
		name   string
		events []event.Event
		ok     bool
	}{
		{"contiguous", page(5, 6, 7), true},
		{"empty", nil, false},
		{"starts later", page(6, 7), false},
		{"a hole", page(5, 7), false},
		{"twice", page(5, 5, 6), false},
		{"out of order", page(5, 7, 6), false},
		{"no payload", bad, false},
	} {
		if err := checkPage(5, c.events); (err == nil) != c.ok {
			t.Errorf("%s: %v", c.name, err)
		}
	}
	masked := []event.Event{{Index: 1, Type: event.ClusterKeys, Keys: &event.Keys{}}}
	if err := fillKeys(masked, nil); err == nil {
		t.Error("a masked keys event without replicated keys was taken")
	}
	if err := fillKeys(masked, &testKeys); err != nil || *masked[0].Keys != testKeys {
		t.Errorf("fillKeys: %v, %+v", err, masked[0].Keys)
	}
}

// TestLogRead: the reads of the local copy of the event log.
func TestLogRead(t *testing.T) {
	for _, c := range []struct {
		method, path string
		want         bool
	}{
		{"GET", "/v1/events", true},
		{"HEAD", "/v1/events", true},
		{"GET", "/v1/jobs/12/history", true},
		{"GET", "/v1/jobs/12.3/history", true},
		{"POST", "/v1/events", false},
		{"GET", "/v1/jobs", false},
		{"GET", "/v1/jobs/12/why", false},
		{"GET", "/v1/jobs//history", false},
		{"GET", "/v1/jobs/1/2/history", false},
	} {
		r := httptest.NewRequest(c.method, c.path, nil)
		if got := logRead(r); got != c.want {
			t.Errorf("%s %s: %v, want %v", c.method, c.path, got, c.want)
		}
	}
}

// freeLoopback returns a loopback address whose port was free a moment
// ago (nothing listens there).
func freeLoopback(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(http.NotFoundHandler())
	addr := strings.TrimPrefix(srv.URL, "http://")
	srv.Close()
	return addr
}

// TestGapReads: while the local copy has a gap, a follower sends a job's
// history and the event log to the leader (over its socket, as its
// caller; over TCP with the caller's token), and a leader answers them
// 503 with the not-leader header (the client asks another member); a
// read that does not need the copy is not sent on.
func TestGapReads(t *testing.T) {
	srv, s := testLeader(t, "", "")
	f, _ := testForwarder(t, strings.TrimPrefix(srv.URL, "http://"), "", 0)
	local, err := store.Open(filepath.Join(t.TempDir(), "events.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer local.Close()
	m := &member{local: local, copy: newCopier(local, t.Logf), fwd: f}
	m.copy.restored(40)
	w := httptest.NewRecorder()
	m.handler(false).ServeHTTP(w, socketRequest(http.MethodGet, "/v1/jobs/3/history", "", api.Caller{User: "alice", UID: 1000, GID: 1000}))
	if reqs := s.all(); w.Code != http.StatusConflict || len(reqs) != 1 || reqs[0].caller.User != "alice" {
		t.Fatalf("a history on the socket: %d, the leader got %+v; want alice's request answered by the leader", w.Code, reqs)
	}
	iss, _ := auth.NewIssuer(testKey)
	tok, _ := iss.Issue(auth.Identity{User: "root"}, time.Minute)
	r := httptest.NewRequest(http.MethodGet, "http://f/v1/events?from=1", nil)
	r.Header.Set("Authorization", "Bearer "+tok)
	w = httptest.NewRecorder()
	m.handler(true).ServeHTTP(w, r)
	if reqs := s.all(); w.Code != http.StatusConflict || len(reqs) != 2 || reqs[1].header.Get("Authorization") != "Bearer "+tok {
		t.Fatalf("the event log over TCP: %d, the leader got %+v; want root's token sent on", w.Code, reqs)
	}
	// Leading: no one to send them to.
	m.cur.Store(&handlers{socket: http.NotFoundHandler(), tcp: http.NotFoundHandler()})
	w = httptest.NewRecorder()
	m.handler(false).ServeHTTP(w, socketRequest(http.MethodGet, "/v1/events", "", api.Caller{User: "root"}))
	if w.Code != http.StatusServiceUnavailable || w.Header().Get(api.NotLeaderHeader) == "" || !strings.Contains(w.Body.String(), "ends at event 0") {
		t.Fatalf("a gapped leader's event log: %d %v %s", w.Code, w.Header(), w.Body)
	}
	w = httptest.NewRecorder()
	m.handler(false).ServeHTTP(w, socketRequest(http.MethodGet, "/v1/jobs", "", api.Caller{User: "root"}))
	if w.Code != http.StatusNotFound || len(s.all()) != 2 {
		t.Fatalf("a leader's other read: %d, want its own handler's", w.Code)
	}
}
