package api

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/xce-sched/xce/internal/auth"
)

// TestCookieName: the session cookie is named after the port the
// browser reached.
func TestCookieName(t *testing.T) {
	for host, want := range map[string]string{"127.0.0.1:7777": "xce_session_7777", "[::1]:80": "xce_session_80",
		"localhost": "xce_session", "example.com:x1": "xce_session", "": "xce_session"} {
		if got := CookieName(host); got != want {
			t.Errorf("CookieName(%q) = %q, want %q", host, got, want)
		}
	}
}

// TestTCPSession: a token in the session cookie identifies the caller as
// a Bearer token does; a request with the cookie that changes something
// needs both a same-origin browser's headers and the anti-forgery token,
// a request with the Authorization header needs neither; without a
// valid token the API and /metrics are 401 and the dashboard's routes go
// on without an identity.
func TestTCPSession(t *testing.T) {
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
	csrf := issuer.CSRF(alice)
	users := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, ok := CallerOf(r.Context())
		s, _ := SessionOf(r.Context())
		if !ok {
			fmt.Fprint(w, "anonymous")
			return
		}
		fmt.Fprintf(w, "%s cookie=%v", c.User, s.Cookie)
	})
	h := NewTCPHandler(nil, "", users, issuer)
	const host = "127.0.0.1:7777"
	cookie := func(v string) string { return CookieName(host) + "=" + v }
	type hdr = map[string]string
	for _, c := range []struct {
		name, method, path string
		headers            hdr
		status             int
		body               string
	}{
		{"cookie GET", "GET", "/v1/jobs", hdr{"Cookie": cookie(alice)}, 200, "alice cookie=true"},
		{"cookie of another port", "GET", "/v1/jobs", hdr{"Cookie": "xce_session_8888=" + alice}, 401, "no identity"},
		{"bearer GET", "GET", "/v1/jobs", hdr{"Authorization": "Bearer " + alice}, 200, "alice cookie=false"},
		{"cookie POST, no origin headers", "POST", "/v1/jobs/1/kill", hdr{"Cookie": cookie(alice), CSRFHeader: csrf}, 403, "does not come from this server's pages"},
		{"cookie POST, other origin", "POST", "/v1/jobs/1/kill", hdr{"Cookie": cookie(alice), CSRFHeader: csrf, "Origin": "http://evil.example"}, 403, "does not come from"},
		{"cookie POST, other port", "POST", "/v1/jobs/1/kill", hdr{"Cookie": cookie(alice), CSRFHeader: csrf, "Origin": "http://127.0.0.1:8888"}, 403, "does not come from"},
		{"cookie POST, https origin on http", "POST", "/v1/jobs/1/kill", hdr{"Cookie": cookie(alice), CSRFHeader: csrf, "Origin": "https://" + host}, 403, "does not come from"},
		{"cookie POST, cross-site fetch", "POST", "/v1/jobs/1/kill", hdr{"Cookie": cookie(alice), CSRFHeader: csrf, "Sec-Fetch-Site": "cross-site"}, 403, "does not come from"},
		{"cookie POST, no csrf", "POST", "/v1/jobs/1/kill", hdr{"Cookie": cookie(alice), "Origin": "http://" + host}, 403, "anti-forgery token"},
		{"cookie POST, wrong csrf", "POST", "/v1/jobs/1/kill", hdr{"Cookie": cookie(alice), "Origin": "http://" + host, CSRFHeader: issuer.CSRF(forged)}, 403, "anti-forgery token"},
		{"cookie POST, same origin and csrf", "POST", "/v1/jobs/1/kill", hdr{"Cookie": cookie(alice), "Origin": "http://" + host, "Sec-Fetch-Site": "same-origin", CSRFHeader: csrf}, 200, "alice cookie=true"},
		{"cookie POST, Sec-Fetch-Site only", "POST", "/v1/jobs/1/kill", hdr{"Cookie": cookie(alice), "Sec-Fetch-Site": "same-origin", CSRFHeader: csrf}, 200, "alice cookie=true"},
		{"bearer POST needs no csrf", "POST", "/v1/jobs/1/kill", hdr{"Authorization": "Bearer " + alice}, 200, "alice cookie=false"},
		{"no identity, API", "GET", "/v1/hosts", hdr{}, 401, "no identity"},
		{"no identity, metrics", "GET", "/metrics", hdr{}, 401, "no identity"},
		{"no identity, dashboard", "GET", "/", hdr{}, 200, "anonymous"},
		{"stale cookie, dashboard", "GET", "/ui/v1/me", hdr{"Cookie": cookie(forged)}, 200, "anonymous"},
		{"stale cookie, API", "GET", "/v1/jobs", hdr{"Cookie": cookie(forged)}, 401, "bad or expired token"},
		{"forged bearer, dashboard", "GET", "/", hdr{"Authorization": "Bearer " + forged}, 401, "bad or expired token"},
		{"login form with a cookie", "POST", LoginPath, hdr{"Cookie": cookie(alice)}, 200, "anonymous"},
		{"agent route without hub", "POST", "/v1/agent/register", hdr{"Authorization": "Bearer x"}, 401, "no or wrong agent token"},
	} {
		r := httptest.NewRequest(c.method, "http://"+host+c.path, strings.NewReader(""))
		for k, v := range c.headers {
			r.Header.Set(k, v)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if body := strings.TrimSpace(w.Body.String()); w.Code != c.status || !strings.Contains(body, c.body) {
			t.Errorf("%s: %d %s; want %d with %q", c.name, w.Code, body, c.status, c.body)
		}
	}
}
