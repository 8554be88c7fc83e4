package daemon

import (
	"fmt"
	"net/http"
	"os"
	"os/user"
	"strconv"
	"strings"
	"time"

	"github.com/xce-sched/xce/internal/agent"
	"github.com/xce-sched/xce/internal/api"
	"github.com/xce-sched/xce/internal/auth"
	"github.com/xce-sched/xce/internal/dashboard"
	"github.com/xce-sched/xce/internal/metrics"
)

// web is what the server serves over HTTP, on its socket and its TCP
// listener alike: the API (/v1/...), the metrics (/metrics) and the
// dashboard (the rest), each request counted by route and status.
type web struct {
	api   *api.Handler
	m     *metrics.Metrics
	dash  *dashboard.Handler
	mux   *http.ServeMux
	agent *api.TCPHandler // the TCP listener's, once made
}

func newWeb(a *api.Handler, m *metrics.Metrics, dash *dashboard.Handler) *web {
	w := &web{api: a, m: m, dash: dash, mux: http.NewServeMux()}
	w.mux.Handle("/v1/", a)
	w.mux.Handle("/metrics", metricsRoute(m))
	w.mux.Handle("/", dash)
	return w
}

// metricsRoute returns the handler of /metrics: m's, for a caller with an
// identity (401 without).
func metricsRoute(m *metrics.Metrics) http.Handler {
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if _, ok := api.CallerOf(r.Context()); !ok {
			rw.Header().Set("Content-Type", "application/json")
			rw.WriteHeader(http.StatusUnauthorized)
			_, _ = rw.Write([]byte(`{"error":"no identity: give a token, or connect through the server's socket"}` + "\n"))
			return
		}
		m.Handler().ServeHTTP(rw, r)
	})
}

// route returns the label of r for the metrics: the pattern of the route
// that takes it, or "other".
func (w *web) route(r *http.Request) string {
	p := r.URL.Path
	switch {
	case strings.HasPrefix(p, "/v1/agent/") && w.agent != nil:
		return w.agent.Route(r)
	case strings.HasPrefix(p, "/v1/"):
		return w.api.Route(r)
	case p == "/metrics":
		return "GET /metrics"
	}
	return w.dash.Route(r)
}

// socket returns the handler of the Unix socket, where the kernel says
// who the caller is.
func (w *web) socket() http.Handler { return w.m.Instrument(w.route, w.mux) }

// tcp returns the handler of the TCP listener: the agents (hub nil: none)
// with the agent token, users with their tokens (api.NewTCPHandler).
func (w *web) tcp(hub *agent.Hub, agentToken string, tokens *auth.Issuer) http.Handler {
	w.agent = api.NewTCPHandler(hub, agentToken, w.mux, tokens)
	return w.m.Instrument(w.route, w.agent)
}

// loginLink returns the address of a dev server's dashboard at addr and
// a link that logs the server's own user in: a token for a day, after
// "#token=" (the fragment is never sent to the server; the page posts
// it to the login form and forgets it).
func loginLink(tokens *auth.Issuer, addr string, tls bool) (dash, link string, err error) {
	id := auth.Identity{User: "uid" + strconv.Itoa(os.Getuid()), UID: uint32(os.Getuid()), GID: uint32(os.Getgid())}
	if u, err := user.LookupId(strconv.Itoa(os.Getuid())); err == nil {
		id.User = u.Username
	}
	tok, err := tokens.Issue(id, 24*time.Hour)
	if err != nil {
		return "", "", fmt.Errorf("the dashboard's login link: %w", err)
	}
	scheme := "http"
	if tls {
		scheme = "https"
	}
	dash = scheme + "://" + addr + "/"
	return dash, dash + "#token=" + tok, nil
}
