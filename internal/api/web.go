package api

import (
	"context"
	"net/http"

	"github.com/xce-sched/xce/internal/state"
)

// What the dashboard (internal/dashboard) and the metrics
// (internal/metrics) take from the API: the caller, its rights, the
// jobs as the API shows them, and route labels.

// CallerOf returns who makes the request of ctx, and false when the
// request has no identity (a TCP caller without a valid token).
func CallerOf(ctx context.Context) (Caller, bool) { return callerOf(ctx) }

// Admin reports whether c may act on every job and host: root, or a
// user the configuration's server.admins names.
func (h *Handler) Admin(c Caller) bool { return h.admin(c) }

// InfoOf returns job j as GET /v1/jobs shows it, without its host
// reasons and forecast (the caller holds the loop's read lock).
func InfoOf(j *state.Job) JobInfo { return info(j) }

// Route returns the route pattern r matches ("POST /v1/jobs/{id}/kill"),
// or "other" for a request no route takes: a label of bounded
// cardinality for metrics.
func (h *Handler) Route(r *http.Request) string { return routeOf(h.mux, r) }

// routeOf returns the pattern of mux that r matches, or "other" (no
// route, or only the catch-all "/").
func routeOf(mux *http.ServeMux, r *http.Request) string {
	if _, p := mux.Handler(r); p != "" && p != "/" {
		return p
	}
	return "other"
}
