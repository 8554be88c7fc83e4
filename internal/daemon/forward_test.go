package daemon

import (
	"bytes"
	"crypto/tls"
	"encoding/json"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/xce-sched/xce/internal/api"
	"github.com/xce-sched/xce/internal/auth"
	"github.com/xce-sched/xce/internal/testtls"
)

// testKey is the replicated signing key of the tests' members.
const testKey = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"

// seen is what a test leader received: one entry per request.
type seen struct {
	mu   sync.Mutex
	reqs []seenReq
}

type seenReq struct {
	caller api.Caller
	header http.Header
	body   string
}

func (s *seen) all() []seenReq {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]seenReq(nil), s.reqs...)
}

// testLeader starts the TCP listener of a leader (tls: with the
// certificate and key files given): api.NewTCPHandler checks the token
// with the replicated key, withApplied sets the state index (7), and the
// request is recorded and answered 409 with a header and a body of its
// own, to check that they come back unchanged.
func testLeader(t *testing.T, certFile, keyFile string) (*httptest.Server, *seen) {
	t.Helper()
	iss, err := auth.NewIssuer(testKey)
	if err != nil {
		t.Fatal(err)
	}
	s := &seen{}
	users := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, _ := api.CallerOf(r.Context())
		b, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		s.reqs = append(s.reqs, seenReq{caller: c, header: r.Header.Clone(), body: string(b)})
		s.mu.Unlock()
		w.Header().Set("X-Leader", "yes")
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusConflict)
		_, _ = w.Write([]byte(`{"error":"from the leader"}` + "\n"))
	})
	h := withApplied(func() uint64 { return 7 }, api.NewTCPHandler(nil, "", users, iss))
	srv := httptest.NewUnstartedServer(h)
	// The handshakes TestForwardTLS makes fail on purpose are no news.
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	if certFile != "" {
		cert, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			t.Fatal(err)
		}
		srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
		srv.StartTLS()
	} else {
		srv.Start()
	}
	t.Cleanup(srv.Close)
	return srv, s
}

// notLeaderFunc is the tests' member.notLeader.
func notLeaderFunc(w http.ResponseWriter, why string) {
	w.Header().Set(api.NotLeaderHeader, "1")
	answer(w, http.StatusServiceUnavailable, strings.TrimSuffix("not the leader; "+why, "; "))
}

// testForwarder returns a follower's forwarder to the leader at addr and
// the state indexes it was told to wait for.
func testForwarder(t *testing.T, addr, certFile string, timeout time.Duration) (*forwarder, *[]uint64) {
	t.Helper()
	var mu sync.Mutex
	var waited []uint64
	f, err := newForwarder(forwardOptions{leader: func() string { return addr }, key: func() string { return testKey },
		notLeader: notLeaderFunc, certFile: certFile, timeout: timeout,
		caughtUp: func(i uint64) { mu.Lock(); waited = append(waited, i); mu.Unlock() }})
	if err != nil {
		t.Fatal(err)
	}
	return f, &waited
}

// socketRequest is a request as a follower's socket has it: its caller
// set by api.ConnContext, without a token.
func socketRequest(method, path, body string, c api.Caller) *http.Request {
	r := httptest.NewRequest(method, "http://xce"+path, strings.NewReader(body))
	return r.WithContext(api.WithCaller(r.Context(), c))
}

// TestForwardSocketCaller: a write on a follower's socket reaches the
// leader as its caller (alice, uid 1000), not as the follower's own user
// (these tests run as root), with a token of ForwardTokenTTL at most and
// the forwarded header; the caller's cookie, anti-forgery and
// idempotency headers stay behind; the leader's answer comes back
// unchanged; the follower was told the leader's state index.
func TestForwardSocketCaller(t *testing.T) {
	srv, s := testLeader(t, "", "")
	f, waited := testForwarder(t, strings.TrimPrefix(srv.URL, "http://"), "", 0)
	r := socketRequest(http.MethodPost, "/v1/jobs?x=1", `{"jobs":[]}`, api.Caller{User: "alice", UID: 1000, GID: 1001})
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Cookie", "xce_session=stolen")
	r.Header.Set(api.CSRFHeader, "x")
	r.Header.Set("Idempotency-Key", "k")
	w := httptest.NewRecorder()
	f.send(w, r)
	if w.Code != http.StatusConflict || w.Header().Get("X-Leader") != "yes" || w.Body.String() != `{"error":"from the leader"}`+"\n" {
		t.Fatalf("answer %d %v %q, want the leader's 409", w.Code, w.Header(), w.Body)
	}
	reqs := s.all()
	if len(reqs) != 1 {
		t.Fatalf("the leader got %d requests, want 1", len(reqs))
	}
	got := reqs[0]
	if got.caller != (api.Caller{User: "alice", UID: 1000, GID: 1001}) {
		t.Errorf("the leader's caller %+v, want alice 1000:1001", got.caller)
	}
	if got.body != `{"jobs":[]}` || got.header.Get(api.ForwardedHeader) != "1" || got.header.Get("Content-Type") != "application/json" {
		t.Errorf("the leader got body %q, headers %v", got.body, got.header)
	}
	for _, h := range []string{"Cookie", api.CSRFHeader, "Idempotency-Key"} {
		if got.header.Get(h) != "" {
			t.Errorf("%s was passed on: %q", h, got.header.Get(h))
		}
	}
	iss, _ := auth.NewIssuer(testKey)
	tok := strings.TrimPrefix(got.header.Get("Authorization"), "Bearer ")
	exp, err := iss.Expiry(tok)
	if err != nil || time.Until(exp) > ForwardTokenTTL || time.Until(exp) < ForwardTokenTTL-10*time.Second {
		t.Errorf("the forwarded token expires at %v (%v), want in %v", exp, err, ForwardTokenTTL)
	}
	if len(*waited) != 1 || (*waited)[0] != 7 {
		t.Errorf("the follower waited for %v, want [7]", *waited)
	}
}

// TestForwardTCPToken: a TCP caller's token is checked by the follower
// and goes on to the leader as it is; a bad one is refused by the
// follower (401) and nothing is forwarded.
func TestForwardTCPToken(t *testing.T) {
	srv, s := testLeader(t, "", "")
	f, _ := testForwarder(t, strings.TrimPrefix(srv.URL, "http://"), "", 0)
	iss, _ := auth.NewIssuer(testKey)
	tok, err := iss.Issue(auth.Identity{User: "bob", UID: 1002, GID: 1002}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	r := httptest.NewRequest(http.MethodPost, "http://f/v1/jobs/3/kill", nil)
	r.Header.Set("Authorization", "Bearer "+tok)
	w := httptest.NewRecorder()
	f.tcpRequest(w, r)
	reqs := s.all()
	if w.Code != http.StatusConflict || len(reqs) != 1 || reqs[0].header.Get("Authorization") != "Bearer "+tok || reqs[0].caller.User != "bob" {
		t.Fatalf("answer %d, the leader got %+v; want bob's own token", w.Code, reqs)
	}
	other, _ := auth.NewIssuer(strings.Repeat("ab", 32))
	bad, _ := other.Issue(auth.Identity{User: "root"}, time.Hour)
	r = httptest.NewRequest(http.MethodPost, "http://f/v1/jobs/3/kill", nil)
	r.Header.Set("Authorization", "Bearer "+bad)
	w = httptest.NewRecorder()
	f.tcpRequest(w, r)
	if w.Code != http.StatusUnauthorized || len(s.all()) != 1 {
		t.Fatalf("a token of another key: %d, the leader got %d requests; want 401 and 1", w.Code, len(s.all()))
	}
}

// TestForwardOnce: a member that does not lead and receives a request
// another member forwarded answers 503 with the not-leader header and
// does not forward it again, even when it knows a leader: follower A
// forwards to B (a follower too, which takes B for the leader's
// address), and B answers A's request itself; the leader behind B never
// sees it, and A passes B's answer on unchanged.
func TestForwardOnce(t *testing.T) {
	leader, s := testLeader(t, "", "")
	b, _ := testForwarder(t, strings.TrimPrefix(leader.URL, "http://"), "", 0)
	bSrv := httptest.NewServer(http.HandlerFunc(b.tcpRequest))
	t.Cleanup(bSrv.Close)
	a, _ := testForwarder(t, strings.TrimPrefix(bSrv.URL, "http://"), "", 0)
	w := httptest.NewRecorder()
	a.send(w, socketRequest(http.MethodPost, "/v1/jobs", `{}`, api.Caller{User: "alice", UID: 1000, GID: 1000}))
	if w.Code != http.StatusServiceUnavailable || w.Header().Get(api.NotLeaderHeader) != "1" {
		t.Fatalf("A's answer %d %v %q, want B's 503 with %s", w.Code, w.Header(), w.Body, api.NotLeaderHeader)
	}
	if n := len(s.all()); n != 0 {
		t.Fatalf("the leader got %d requests through two followers, want 0", n)
	}
	// The header alone stops a follower, on its socket too.
	r := socketRequest(http.MethodPost, "/v1/jobs", `{}`, api.Caller{User: "alice", UID: 1000, GID: 1000})
	r.Header.Set(api.ForwardedHeader, "1")
	w = httptest.NewRecorder()
	b.send(w, r)
	if w.Code != http.StatusServiceUnavailable || w.Header().Get(api.NotLeaderHeader) != "1" || len(s.all()) != 0 {
		t.Fatalf("a forwarded request on B's socket: %d %v, the leader got %d", w.Code, w.Header(), len(s.all()))
	}
}

// TestForwardRefusals: what a follower answers itself. No leader, or a
// leader it may not send a token to in clear: 503 not-leader (nothing
// taken). A leader that cannot be reached: 503 not-leader. A body over
// api.MaxBody: 413, nothing sent. A leader that took the request and
// closed the connection, or did not answer in time: 502 and 504, without
// the not-leader header (the caller must not send the write again).
func TestForwardRefusals(t *testing.T) {
	alice := api.Caller{User: "alice", UID: 1000, GID: 1000}
	notLeader := func(t *testing.T, f *forwarder, wantWhy string) {
		t.Helper()
		w := httptest.NewRecorder()
		f.send(w, socketRequest(http.MethodPost, "/v1/reconfig", "", alice))
		var e api.Error
		_ = json.Unmarshal(w.Body.Bytes(), &e)
		if w.Code != http.StatusServiceUnavailable || w.Header().Get(api.NotLeaderHeader) != "1" || !strings.Contains(e.Msg, wantWhy) {
			t.Fatalf("answer %d %v %q, want 503 not-leader saying %q", w.Code, w.Header(), e.Msg, wantWhy)
		}
	}
	t.Run("no leader", func(t *testing.T) {
		f, _ := testForwarder(t, "", "", 0)
		notLeader(t, f, "not the leader")
	})
	t.Run("in clear over a network", func(t *testing.T) {
		f, _ := testForwarder(t, "192.0.2.1:7700", "", 0)
		notLeader(t, f, "on loopback only")
		f, _ = testForwarder(t, "[::]:7700", "", 0)
		notLeader(t, f, "on loopback only")
	})
	t.Run("unreachable", func(t *testing.T) {
		srv := httptest.NewServer(http.NotFoundHandler())
		addr := strings.TrimPrefix(srv.URL, "http://")
		srv.Close()
		f, _ := testForwarder(t, addr, "", 0)
		notLeader(t, f, "could not be forwarded")
	})
	t.Run("too big", func(t *testing.T) {
		srv, s := testLeader(t, "", "")
		f, _ := testForwarder(t, strings.TrimPrefix(srv.URL, "http://"), "", 0)
		w := httptest.NewRecorder()
		f.send(w, socketRequest(http.MethodPost, "/v1/jobs", strings.Repeat("x", api.MaxBody+1), alice))
		if w.Code != http.StatusRequestEntityTooLarge || len(s.all()) != 0 {
			t.Fatalf("a body over the limit: %d, %d forwarded", w.Code, len(s.all()))
		}
	})
	took := func(t *testing.T, h http.HandlerFunc, timeout time.Duration, want int) {
		t.Helper()
		srv := httptest.NewServer(h)
		defer srv.Close()
		f, _ := testForwarder(t, strings.TrimPrefix(srv.URL, "http://"), "", timeout)
		w := httptest.NewRecorder()
		f.send(w, socketRequest(http.MethodPost, "/v1/jobs", `{}`, alice))
		if w.Code != want || w.Header().Get(api.NotLeaderHeader) != "" || !strings.Contains(w.Body.String(), "may or may not") {
			t.Fatalf("answer %d %v %q, want %d without %s", w.Code, w.Header(), w.Body, want, api.NotLeaderHeader)
		}
	}
	t.Run("took and closed", func(t *testing.T) {
		took(t, func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.ReadAll(r.Body)
			c, _, err := http.NewResponseController(w).Hijack()
			if err == nil {
				c.Close()
			}
		}, 0, http.StatusBadGateway)
	})
	t.Run("took and no answer", func(t *testing.T) {
		took(t, func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.ReadAll(r.Body) // then the server sees the connection close
			select {
			case <-r.Context().Done():
			case <-time.After(10 * time.Second):
			}
		}, 200*time.Millisecond, http.StatusGatewayTimeout)
	})
}

// TestForwardTLS: a follower that serves TLS forwards over TLS, checking
// the leader's certificate against its own chain (here the members share
// one certificate, for 127.0.0.1); a follower whose certificate is
// another's does not trust the leader's and sends nothing (503, saying
// why): verification is never skipped.
func TestForwardTLS(t *testing.T) {
	cert, key, _, err := testtls.SelfSigned(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	srv, s := testLeader(t, cert, key)
	addr := strings.TrimPrefix(srv.URL, "https://")
	f, _ := testForwarder(t, addr, cert, 0)
	w := httptest.NewRecorder()
	f.send(w, socketRequest(http.MethodPost, "/v1/jobs", `{}`, api.Caller{User: "alice", UID: 1000, GID: 1000}))
	if w.Code != http.StatusConflict || len(s.all()) != 1 {
		t.Fatalf("over TLS: %d %q, %d forwarded; want the leader's 409", w.Code, w.Body, len(s.all()))
	}
	other, _, _, err := testtls.SelfSigned(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	g, _ := testForwarder(t, addr, other, 0)
	w = httptest.NewRecorder()
	g.send(w, socketRequest(http.MethodPost, "/v1/jobs", `{}`, api.Caller{User: "alice", UID: 1000, GID: 1000}))
	if w.Code != http.StatusServiceUnavailable || w.Header().Get(api.NotLeaderHeader) != "1" ||
		!bytes.Contains(w.Body.Bytes(), []byte("certificate")) || len(s.all()) != 1 {
		t.Fatalf("an unknown certificate: %d %q, %d forwarded; want 503 naming the certificate, nothing sent", w.Code, w.Body, len(s.all()))
	}
}
