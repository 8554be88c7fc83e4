package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/xce-sched/xce/internal/agent"
	"github.com/xce-sched/xce/internal/auth"
	"github.com/xce-sched/xce/internal/server"
)

// NewTCPHandler returns the handler of the server's TCP listener: the
// agent routes (docs/api.md, "Agents") over hub, for callers presenting
// the agent token as "Authorization: Bearer TOKEN" (hub nil: a server
// without remote agents, whose agent routes are 404); every other route
// is users, for callers presenting a user token that tokens verifies
// (package auth), who act as the user it names. The token comes in the
// Authorization header or in the session cookie a browser got from the
// dashboard's login (CookieName); a request with the cookie that changes
// something (not GET, HEAD, OPTIONS) must come from a page of this
// server (SameOrigin) and carry the session's anti-forgery token in
// CSRFHeader, else it is 403. Without a valid token, the API routes
// (/v1/...) and /metrics are 401, and the rest (the dashboard: its
// login page) goes to users without an identity, as does the login form
// (LoginPath) whatever cookie it comes with. With tokens nil, no user is
// served over TCP.
func NewTCPHandler(hub *agent.Hub, token string, users http.Handler, tokens *auth.Issuer) *TCPHandler {
	a := &TCPHandler{hub: hub, token: token, users: users, tokens: tokens, mux: http.NewServeMux()}
	a.mux.HandleFunc("POST "+agent.PathRegister, a.register)
	a.mux.HandleFunc("GET "+agent.PathOrders, a.orders)
	a.mux.HandleFunc("POST "+agent.PathReport, a.report)
	a.mux.HandleFunc("POST "+agent.PathLeave, a.leave)
	return a
}

// LoginPath is the dashboard's login form's path: the TCP listener hands
// it on without an identity, whatever cookie comes with it.
const LoginPath = "/ui/login"

// TCPHandler is the handler of the server's TCP listener (NewTCPHandler).
type TCPHandler struct {
	hub    *agent.Hub
	token  string
	users  http.Handler
	tokens *auth.Issuer
	mux    *http.ServeMux
}

// Route returns the agent route r matches ("POST /v1/agent/report"), or
// "other": a label for metrics.
func (a *TCPHandler) Route(r *http.Request) string { return routeOf(a.mux, r) }

// ServeHTTP implements http.Handler.
func (a *TCPHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if strings.HasPrefix(r.URL.Path, "/v1/agent/") {
		a.serveAgent(w, r)
		return
	}
	protected := strings.HasPrefix(r.URL.Path, "/v1/") || r.URL.Path == "/metrics"
	if r.URL.Path == LoginPath && a.users != nil {
		// The login form acts with the token it carries, not with a
		// cookie it may come with: the dashboard checks it and its
		// origin itself.
		a.users.ServeHTTP(w, r)
		return
	}
	if a.tokens == nil || a.users == nil {
		fail(w, &Error{Status: http.StatusUnauthorized, Msg: "no identity: give a token (xce token create; $XCE_TOKEN), or connect through the server's socket"})
		return
	}
	sess, ok := Session{}, false
	if tok, bearer := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); bearer {
		sess, ok = Session{Token: tok}, true
	} else if c, err := r.Cookie(CookieName(r.Host)); err == nil && c.Value != "" {
		sess, ok = Session{Token: c.Value, Cookie: true}, true
	}
	if !ok {
		if protected {
			fail(w, &Error{Status: http.StatusUnauthorized, Msg: "no identity: give a token (xce token create; $XCE_TOKEN), or connect through the server's socket"})
			return
		}
		a.users.ServeHTTP(w, r)
		return
	}
	id, err := a.tokens.Verify(sess.Token)
	if err != nil {
		if !protected && sess.Cookie {
			// A stale cookie (expired, or another server's): the
			// dashboard asks for a login again.
			a.users.ServeHTTP(w, r)
			return
		}
		fail(w, &Error{Status: http.StatusUnauthorized, Msg: "bad or expired token: " + err.Error()})
		return
	}
	if sess.Cookie && !safeMethod(r.Method) {
		if !SameOrigin(r) {
			fail(w, &Error{Status: http.StatusForbidden, Msg: "refused: a request with the session cookie that does not come from this server's pages (Origin, Sec-Fetch-Site)"})
			return
		}
		if !a.tokens.CheckCSRF(sess.Token, r.Header.Get(CSRFHeader)) {
			fail(w, &Error{Status: http.StatusForbidden, Msg: "refused: a request with the session cookie needs the anti-forgery token in " + CSRFHeader})
			return
		}
	}
	ctx := WithSession(WithCaller(r.Context(), Caller{User: id.User, UID: id.UID, GID: id.GID}), sess)
	a.users.ServeHTTP(w, r.WithContext(ctx))
}

// serveAgent serves the agent routes, for callers with the agent token.
func (a *TCPHandler) serveAgent(w http.ResponseWriter, r *http.Request) {
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || a.token == "" || !agent.TokenEqual(tok, a.token) {
		fail(w, &Error{Status: http.StatusUnauthorized, Msg: "no or wrong agent token"})
		return
	}
	if a.hub == nil {
		fail(w, &Error{Status: http.StatusNotFound, Msg: "this server has no remote agents (a dev server runs its agent inside)"})
		return
	}
	a.mux.ServeHTTP(w, r)
}

// agentFail answers an error of the hub with its status.
func agentFail(w http.ResponseWriter, err error) {
	status := http.StatusBadRequest
	switch {
	case errors.Is(err, agent.ErrUnknownHost):
		status = http.StatusNotFound
	case errors.Is(err, agent.ErrRegister):
		status = http.StatusGone
	case errors.Is(err, agent.ErrSuperseded):
		status = http.StatusConflict
	case errors.Is(err, server.ErrStopped), errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		status = http.StatusServiceUnavailable
	}
	fail(w, &Error{Status: status, Msg: err.Error()})
}

// decodeRegister reads and checks the body of a registration.
func decodeRegister(w http.ResponseWriter, r *http.Request) (*agent.RegisterRequest, error) {
	var req agent.RegisterRequest
	if err := decode(w, r, &req); err != nil {
		return nil, err
	}
	if err := req.Validate(); err != nil {
		return nil, &Error{Status: http.StatusBadRequest, Msg: err.Error()}
	}
	return &req, nil
}

// decodeReport reads and checks the body of a report request.
func decodeReport(w http.ResponseWriter, r *http.Request) (*agent.ReportRequest, error) {
	var rep agent.ReportRequest
	if err := decode(w, r, &rep); err != nil {
		return nil, err
	}
	if err := rep.Validate(); err != nil {
		return nil, &Error{Status: http.StatusBadRequest, Msg: err.Error()}
	}
	return &rep, nil
}

func (a *TCPHandler) register(w http.ResponseWriter, r *http.Request) {
	req, err := decodeRegister(w, r)
	if err != nil {
		fail(w, err)
		return
	}
	rep, err := a.hub.Register(r.Context(), req)
	if err != nil {
		agentFail(w, err)
		return
	}
	if rep.Orders == nil {
		rep.Orders = []agent.Order{}
	}
	reply(w, http.StatusOK, rep)
}

func (a *TCPHandler) orders(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	after, err1 := strconv.ParseUint(q.Get("after"), 10, 64)
	wait, err2 := strconv.ParseInt(q.Get("wait_ms"), 10, 64)
	if err := errors.Join(err1, err2); err != nil || wait < 0 || q.Get("name") == "" || q.Get("session") == "" {
		fail(w, &Error{Status: http.StatusBadRequest, Msg: fmt.Sprintf("want name, session, after and wait_ms (ms >= 0), got %q", r.URL.RawQuery)})
		return
	}
	orders, err := a.hub.Poll(r.Context(), q.Get("name"), q.Get("session"), after, time.Duration(min(wait, agent.MaxWait.Milliseconds()))*time.Millisecond)
	if err != nil {
		agentFail(w, err)
		return
	}
	if orders == nil {
		orders = []agent.Order{}
	}
	reply(w, http.StatusOK, agent.OrdersReply{Orders: orders})
}

func (a *TCPHandler) report(w http.ResponseWriter, r *http.Request) {
	rep, err := decodeReport(w, r)
	if err != nil {
		fail(w, err)
		return
	}
	applied, err := a.hub.Report(r.Context(), rep)
	if err != nil {
		agentFail(w, err)
		return
	}
	reply(w, http.StatusOK, agent.ReportReply{Applied: applied})
}

func (a *TCPHandler) leave(w http.ResponseWriter, r *http.Request) {
	var l agent.Leave
	if err := decode(w, r, &l); err != nil {
		fail(w, err)
		return
	}
	if err := l.Validate(); err != nil {
		fail(w, &Error{Status: http.StatusBadRequest, Msg: err.Error()})
		return
	}
	if err := a.hub.Leave(r.Context(), l.Name, l.Session, l.Draining); err != nil {
		agentFail(w, err)
		return
	}
	reply(w, http.StatusOK, struct{}{})
}
