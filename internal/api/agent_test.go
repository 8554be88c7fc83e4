package api

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/xce-sched/xce/internal/agent"
	"github.com/xce-sched/xce/internal/auth"
	"github.com/xce-sched/xce/internal/event"
	"github.com/xce-sched/xce/internal/state"
	"github.com/xce-sched/xce/internal/testtls"
)

// FuzzAgentRequest: the agent routes' body decoding (strict JSON, at most
// MaxBody bytes, then Validate) never panics, refuses with a 400 or 413
// *Error, and what it takes survives a round trip through JSON.
func FuzzAgentRequest(f *testing.F) {
	f.Add(false, []byte(`{"name":"h1","running":[{"job":1,"attempt":1,"pid":42}],"finished":[{"kind":"finished","job":2,"attempt":1,"exit_code":3}]}`))
	f.Add(false, []byte(`{"name":"h1","running":[],"finished":[],"extra":1}`))
	f.Add(false, []byte(`{"name":"h 1"}`))
	f.Add(true, []byte(`{"name":"h1","session":"ab","reports":[{"kind":"started","job":1,"attempt":1,"pid":7}]}`))
	f.Add(true, []byte(`{"name":"h1","session":"ab","reports":[{"kind":"started","job":1,"attempt":2,"pid":7},{"kind":"finished","job":1,"attempt":2,"exit_code":130,"signal":"SIGINT","reason":"killed","lost":true}]}`))
	f.Add(true, []byte(`{"name":"h1","session":"ab","reports":[{"kind":"started","job":1,"attempt":1,"pid":7}]} {}`))
	f.Add(true, []byte(`{"name":"h1","session":"ab","reports":[{"kind":"finished","job":1,"attempt":1,"exit_code":-1,"reason":"its agent stopped","lost":true,"unstarted":true}]}`))
	f.Add(true, []byte(`{"name":"h1","session":"ab","reports":[{"kind":"started","job":1e3,"attempt":1,"pid":7}]}`))
	f.Add(true, []byte(`{"name":"h1","session":"ab","kind":"started","job":1,"attempt":1,"pid":7}`))
	f.Fuzz(func(t *testing.T, report bool, body []byte) {
		r := httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(body))
		w := httptest.NewRecorder()
		var got any
		var err error
		if report {
			got, err = decodeReport(w, r)
		} else {
			got, err = decodeRegister(w, r)
		}
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || (e.Status != http.StatusBadRequest && e.Status != http.StatusRequestEntityTooLarge) {
				t.Fatalf("error %v: want a 400 or 413 *Error", err)
			}
			return
		}
		b, err := json.Marshal(got)
		if err != nil {
			t.Fatal(err)
		}
		r = httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(b))
		var again any
		if report {
			again, err = decodeReport(w, r)
		} else {
			again, err = decodeRegister(w, r)
		}
		if err != nil || !reflect.DeepEqual(got, again) {
			t.Fatalf("round trip of %s: %v, %+v != %+v", b, err, again, got)
		}
	})
}

// testHub is a hub over a state of its own (no loop, no store), for host
// h1, with a heartbeat timeout of a minute.
func testHub() *agent.Hub {
	st := state.New()
	do := func(_ context.Context, mk func(*state.State, int64) ([]event.Event, error)) ([]event.Event, error) {
		evs, err := mk(st, time.Now().UnixNano())
		if err != nil {
			return nil, err
		}
		for i := range evs {
			evs[i].Index = st.Index + 1
			if err := st.Apply(evs[i]); err != nil {
				return nil, err
			}
		}
		return evs, nil
	}
	return agent.NewHub(agent.HubOptions{Hosts: []string{"h1"}, Do: do, View: func(fn func(*state.State)) { fn(st) },
		HeartbeatTimeout: time.Minute, KillGrace: time.Second})
}

// TestTCPHandler: the TCP listener's routes: anything but an agent route
// is 401, an agent route without the token or with another one is 401,
// and the agent routes answer their errors with the documented statuses.
func TestTCPHandler(t *testing.T) {
	const tok = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"
	issuer, err := auth.LoadKey(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	alice, err := issuer.Issue(auth.Identity{User: "alice", UID: 1001, GID: 100}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	other, _ := auth.LoadKey(t.TempDir())
	forged, _ := other.Issue(auth.Identity{User: "root"}, time.Hour)
	users := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, _ := callerOf(r.Context())
		fmt.Fprintf(w, "%s %d %d", c.User, c.UID, c.GID)
	})
	h := NewTCPHandler(testHub(), tok, users, issuer)
	do := func(method, path, auth, body string) (int, string) {
		r := httptest.NewRequest(method, path, strings.NewReader(body))
		if auth != "" {
			r.Header.Set("Authorization", auth)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w.Code, strings.TrimSpace(w.Body.String())
	}
	bearer := "Bearer " + tok
	for _, c := range []struct {
		method, path, auth, body string
		status                   int
		msg                      string
	}{
		{"GET", "/v1/jobs", bearer, "", 401, "bad or expired token"},
		{"POST", "/v1/jobs/1/kill", "", "", 401, "no identity: give a token"},
		{"GET", "/v1/jobs", "Bearer " + forged, "", 401, "bad or expired token"},
		{"GET", "/v1/jobs", "Bearer " + alice, "", 200, "alice 1001 100"},
		{"POST", agent.PathRegister, "Bearer " + alice, `{"name":"h1"}`, 401, "no or wrong agent token"},
		{"POST", agent.PathRegister, "", `{"name":"h1"}`, 401, "no or wrong agent token"},
		{"POST", agent.PathRegister, "Bearer " + strings.Repeat("0", 64), `{"name":"h1"}`, 401, "no or wrong agent token"},
		{"POST", agent.PathRegister, tok, `{"name":"h1"}`, 401, "no or wrong agent token"},
		{"POST", agent.PathRegister, bearer, `{"name":"h9"}`, 404, `host \"h9\": not a host of the cluster's configuration`},
		{"POST", agent.PathRegister, bearer, `{"name":"h1","extra":true}`, 400, `unknown field \"extra\"`},
		{"POST", agent.PathRegister, bearer, `{"name":"h1","running":[{"job":0,"attempt":1,"pid":1}]}`, 400, "running[0]: job 0 attempt 1 pid 1"},
		{"POST", agent.PathRegister, bearer, `{"name":"h1"`, 400, "body:"},
		{"POST", agent.PathRegister, bearer, `{"name":"` + strings.Repeat("x", MaxBody) + `"}`, 413, "the body is over"},
		{"GET", agent.PathOrders + "?name=h1&session=x&after=0", bearer, "", 400, "want name, session, after and wait_ms"},
		{"GET", agent.PathOrders + "?name=h1&session=x&after=0&wait_ms=0", bearer, "", 410, "not registered: register again"},
		{"GET", agent.PathOrders + "?name=h2&session=x&after=0&wait_ms=0", bearer, "", 404, "not a host"},
		{"POST", agent.PathReport, bearer, `{"name":"h1","session":"x","reports":[{"kind":"started","job":1,"attempt":1,"pid":5}]}`, 410, "register again"},
		{"POST", agent.PathReport, bearer, `{"name":"h1","session":"x","reports":[{"kind":"started","job":1,"attempt":1,"pid":5},{"kind":"begun","job":1,"attempt":1}]}`, 400, "reports[1]: kind"},
		{"POST", agent.PathReport, bearer, `{"name":"h1","session":"x","reports":[]}`, 400, "reports: 0, want 1 to 1000"},
		{"POST", agent.PathReport, bearer, `{"name":"h1","session":"x","kind":"started","job":1,"attempt":1,"pid":5}`, 400, `unknown field \"kind\"`},
		{"GET", agent.PathReport, bearer, "", 405, ""},
	} {
		status, body := do(c.method, c.path, c.auth, c.body)
		if status != c.status || !strings.Contains(body, c.msg) {
			t.Errorf("%s %s (%q): %d %s; want %d with %q", c.method, c.path, c.auth, status, clip(body), c.status, c.msg)
		}
	}
	// A registration, then a poll and a report with its session.
	status, body := do("POST", agent.PathRegister, bearer, `{"name":"h1","running":[],"finished":[]}`)
	var reg agent.RegisterReply
	if status != 200 || json.Unmarshal([]byte(body), &reg) != nil || reg.Session == "" || reg.HeartbeatMS != 60000 || reg.KillGraceMS != 1000 {
		t.Fatalf("register: %d %s", status, body)
	}
	if status, body := do("GET", agent.PathOrders+"?name=h1&session="+reg.Session+"&after=0&wait_ms=0", bearer, ""); status != 200 || body != `{"orders":[]}` {
		t.Errorf("poll: %d %s", status, body)
	}
	rep := `{"name":"h1","session":"` + reg.Session + `","reports":[{"kind":"finished","job":1,"attempt":1},{"kind":"started","job":2,"attempt":1,"pid":7}]}`
	if status, body := do("POST", agent.PathReport, bearer, rep); status != 200 || body != `{"applied":[false,false]}` {
		t.Errorf("report of an unknown job: %d %s", status, body)
	}
	// A second registration supersedes the first session.
	if status, _ := do("POST", agent.PathRegister, bearer, `{"name":"h1"}`); status != 200 {
		t.Fatalf("second register: %d", status)
	}
	if status, body := do("POST", agent.PathReport, bearer, rep); status != 409 || !strings.Contains(body, "another agent registered") {
		t.Errorf("report with a superseded session: %d %s", status, body)
	}
	// A leave ends the session.
	status, body = do("POST", agent.PathRegister, bearer, `{"name":"h1"}`)
	if status != 200 || json.Unmarshal([]byte(body), &reg) != nil {
		t.Fatalf("third register: %d %s", status, body)
	}
	leave := `{"name":"h1","session":"` + reg.Session + `"}`
	if status, body := do("POST", agent.PathLeave, bearer, leave); status != 200 || body != `{}` {
		t.Errorf("leave: %d %s", status, body)
	}
	if status, _ := do("POST", agent.PathLeave, bearer, leave); status != 410 {
		t.Errorf("second leave: %d, want 410", status)
	}
}

func clip(s string) string {
	if len(s) > 200 {
		return s[:200] + "..."
	}
	return s
}

// TestListenTCP: a loopback address needs no TLS; any other address does;
// with a certificate and its key the listener serves TLS.
func TestListenTCP(t *testing.T) {
	for addr, want := range map[string]bool{"127.0.0.1:0": true, "[::1]:7777": true, "localhost:7777": true, ":7777": false,
		"0.0.0.0:7777": false, "10.1.2.3:7777": false, "example.com:7777": false, "127.0.0.1": false} {
		if got := Loopback(addr); got != want {
			t.Errorf("Loopback(%q) = %v, want %v", addr, got, want)
		}
	}
	if _, err := ListenTCP("0.0.0.0:0", "", ""); err == nil || !strings.Contains(err.Error(), "TLS is required") {
		t.Errorf("non-loopback without TLS: %v", err)
	}
	if _, err := ListenTCP("127.0.0.1:0", "cert.pem", ""); err == nil || !strings.Contains(err.Error(), "give both") {
		t.Errorf("a certificate without a key: %v", err)
	}
	dir := t.TempDir()
	certFile, keyFile, pool, err := testtls.SelfSigned(dir)
	if err != nil {
		t.Fatal(err)
	}
	l, err := ListenTCP("127.0.0.1:0", certFile, keyFile)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: NewTCPHandler(testHub(), strings.Repeat("ab", 32), nil, nil), ReadHeaderTimeout: 5 * time.Second,
		ErrorLog: log.New(io.Discard, "", 0)}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(l) }()
	defer func() {
		_ = srv.Close()
		<-done
	}()
	c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	resp, err := c.Get("https://" + l.Addr().String() + "/v1/hosts")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 401 || !strings.Contains(string(b), "no identity") {
		t.Errorf("GET /v1/hosts over TLS: %d %s", resp.StatusCode, b)
	}
	plain := &http.Client{Timeout: 10 * time.Second}
	resp, err = plain.Get("http://" + l.Addr().String() + "/v1/hosts")
	if err == nil {
		b, _ = io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 400 || strings.Contains(string(b), "agents only") {
			t.Errorf("plain HTTP to the TLS listener: %d %s; want crypto/tls's 400", resp.StatusCode, b)
		}
	}
}
