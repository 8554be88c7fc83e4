package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestMemberChange: POST /v1/members/join and /remove are an
// administrator's (root, or a user of admins, by name, whatever the
// socket or token that said so): anyone else is 403 and nothing is
// asked of the raft node; a body without a host:port is 400; a member
// that does not lead answers 503 with NotLeaderHeader; a single server
// (no Members) 409.
func TestMemberChange(t *testing.T) {
	var calls []string
	var answer error
	h := NewHandler(nil, nil, []string{"ops"})
	h.Members = func(_ context.Context, addr string, join bool) error {
		calls = append(calls, fmt.Sprint(addr, " ", join))
		return answer
	}
	root, ops := Caller{User: "root"}, Caller{User: "ops", UID: 1002, GID: 1002}
	alice, fakeRoot := Caller{User: "alice", UID: 1001, GID: 1001}, Caller{User: "root2", UID: 1003}
	for _, c := range []struct {
		caller Caller
		path   string
		body   string
		answer error
		status int
		calls  string
	}{
		{root, "/v1/members/join", `{"raft":"10.0.0.4:7800"}`, nil, 200, "[10.0.0.4:7800 true]"},
		{ops, "/v1/members/remove", `{"raft":"s4:7800"}`, nil, 200, "[s4:7800 false]"},
		{alice, "/v1/members/remove", `{"raft":"s4:7800"}`, nil, 403, "[]"},
		{fakeRoot, "/v1/members/join", `{"raft":"s4:7800"}`, nil, 403, "[]"},
		{root, "/v1/members/join", `{"raft":"s4"}`, nil, 400, "[]"},
		{root, "/v1/members/join", `{"raft":""}`, nil, 400, "[]"},
		{root, "/v1/members/join", `{"raft":"s4:7800","x":1}`, nil, 400, "[]"},
		{root, "/v1/members/join", `{"raft":"s4:7800"}`, fmt.Errorf("%w: raft", ErrNotLeader), 503, "[s4:7800 true]"},
		{root, "/v1/members/join", `{"raft":"s4:7800"}`, errors.New("timed out"), 500, "[s4:7800 true]"},
	} {
		calls, answer = nil, c.answer
		r := httptest.NewRequest(http.MethodPost, c.path, strings.NewReader(c.body))
		r = r.WithContext(WithCaller(r.Context(), c.caller))
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != c.status || fmt.Sprint(calls) != c.calls {
			t.Errorf("%s %s %s: %d %q, calls %v; want %d, %s", c.caller.User, c.path, c.body, w.Code, w.Body, calls, c.status, c.calls)
		}
		if notLeader := w.Header().Get(NotLeaderHeader) == "1"; notLeader != (c.status == 503) {
			t.Errorf("%s %s: %s %q", c.path, c.body, NotLeaderHeader, w.Header().Get(NotLeaderHeader))
		}
	}
	h.Members = nil
	r := httptest.NewRequest(http.MethodPost, "/v1/members/join", strings.NewReader(`{"raft":"s4:7800"}`))
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r.WithContext(WithCaller(r.Context(), root)))
	if w.Code != http.StatusConflict {
		t.Errorf("a single server: %d %q, want 409", w.Code, w.Body)
	}
}
