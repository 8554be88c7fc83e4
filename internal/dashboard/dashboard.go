// Package dashboard is the live scheduler's web dashboard
// (docs/dashboard.md): the handlers of its pages and of the JSON they
// read, its live updates (Server-Sent Events), the utilization and
// queue-length history folded from the event log, and its assets (plain
// HTML, JavaScript and CSS, embedded in the binary with go:embed:
// building xce needs no JavaScript toolchain).
//
// The jobs, hosts and summary views read an index of their own: copied
// once from the server's state under the loop's read lock
// (server.Loop.View), then kept in step by folding the events the loop
// announces after each durable batch (server.Observer), so a change
// costs the loop a send on a buffered channel and a request reads only
// the index; filtering, sorting and paging never touch the loop's lock.
// The job page reads one job under the lock, as the API does, and uses
// the API's own routes (history, why, kill). Nothing here holds the
// loop's lock while it writes to a client, and a slow client never
// blocks the loop: the loop only drops notes in bounded buffers.
package dashboard

import (
	"context"
	"embed"
	"encoding/json"
	"io/fs"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/xce-sched/xce/internal/api"
	"github.com/xce-sched/xce/internal/auth"
	"github.com/xce-sched/xce/internal/event"
	"github.com/xce-sched/xce/internal/live"
)

//go:embed assets
var assets embed.FS

// EventLog is the event log the history charts are folded from (the
// store).
type EventLog interface {
	// Read passes the events from index from to the last durable one, in
	// order, to fn.
	Read(from uint64, fn func(event.Event) error) error
	// Snapshot returns the latest snapshot of the state, for a log whose
	// beginning was compacted away.
	Snapshot() (index uint64, data []byte, ok bool, err error)
}

// Options configure a Handler.
type Options struct {
	// View runs fn on the core between the loop's batches
	// (server.Loop.View). Required.
	View func(fn func(k *live.Core))
	// Log is the event log (required); API the server's API handler,
	// whose rules (administrators, private jobs) the pages follow
	// (required).
	Log EventLog
	API *api.Handler
	// Tokens checks the tokens of the login form and makes the
	// anti-forgery tokens of sessions; nil: no login (the socket only).
	Tokens *auth.Issuer
	// Now is the clock (time.Now when nil); Logf, when set, logs what
	// goes wrong while following the event log.
	Now  func() time.Time
	Logf func(format string, args ...any)
}

// Handler serves the dashboard. It is a server.Observer: the loop tells
// it what changed.
type Handler struct {
	o      Options
	mux    *http.ServeMux
	static http.Handler
	broker *broker
	hist   *history
	indexState
}

// New returns the dashboard of a server; Run makes its live updates and
// history go.
func New(o Options) *Handler {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logf == nil {
		o.Logf = func(string, ...any) {}
	}
	sub, _ := fs.Sub(assets, "assets") // the directory is embedded: never fails
	h := &Handler{o: o, mux: http.NewServeMux(), static: http.FileServer(http.FS(sub)), broker: newBroker(), hist: newHistory(),
		indexState: indexState{ix: &index{}, feed: make(chan []event.Event, feedSize)}}
	h.mux.HandleFunc("GET /{$}", h.index)
	h.mux.HandleFunc("GET /assets/", h.asset)
	h.mux.HandleFunc("POST "+api.LoginPath, h.login)
	h.mux.HandleFunc("POST /ui/logout", h.logout)
	h.mux.HandleFunc("GET /ui/v1/me", h.me)
	h.mux.HandleFunc("GET /ui/v1/summary", h.identified(h.summary))
	h.mux.HandleFunc("GET /ui/v1/jobs", h.identified(h.jobs))
	h.mux.HandleFunc("GET /ui/v1/jobs/{job}", h.identified(h.job))
	h.mux.HandleFunc("GET /ui/v1/hosts", h.identified(h.hosts))
	h.mux.HandleFunc("GET /ui/v1/series", h.identified(h.series))
	h.mux.HandleFunc("GET /ui/v1/stream", h.identified(h.stream))
	h.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		fail(w, http.StatusNotFound, "no such page")
	})
	return h
}

// Run follows the event log for the history charts and sends the live
// updates, until ctx ends; then the open streams end too.
func (h *Handler) Run(ctx context.Context) {
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); h.broker.run(ctx) }()
	go func() { defer wg.Done(); h.hist.follow(ctx, h.o.Log, h.o.Logf) }()
	wg.Wait()
}

// Applied implements server.Observer: it notes what changed for the
// streams and wakes the history. It never blocks.
func (h *Handler) Applied(events []event.Event) {
	h.announce(events)
	h.broker.note(events)
	h.hist.wake()
}

// Cycled implements server.Observer (nothing to do: a cycle that decided
// something comes as an Applied event).
func (h *Handler) Cycled(time.Duration, int) {}

// Streams returns the live-update streams open now and the messages
// dropped for slow ones so far (metrics).
func (h *Handler) Streams() (open int, dropped uint64) { return h.broker.stats() }

// Route returns the route pattern r matches ("GET /ui/v1/jobs"), or
// "other": a label for metrics.
func (h *Handler) Route(r *http.Request) string {
	if _, p := h.mux.Handler(r); p != "" && p != "/" {
		return p
	}
	return "other"
}

// ServeHTTP implements http.Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Referrer-Policy", "no-referrer")
	w.Header().Set("X-Frame-Options", "DENY")
	h.mux.ServeHTTP(w, r)
}

// csp is the pages' Content-Security-Policy: their own scripts, styles
// and requests only, no inline script, no framing.
const csp = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
	"form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

func (h *Handler) index(w http.ResponseWriter, r *http.Request) {
	data, err := assets.ReadFile("assets/index.html")
	if err != nil {
		fail(w, http.StatusInternalServerError, err.Error())
		return
	}
	w.Header().Set("Content-Security-Policy", csp)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	_, _ = w.Write(data)
}

func (h *Handler) asset(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("Content-Security-Policy", csp)
	r2 := r.Clone(r.Context())
	r2.URL.Path = strings.TrimPrefix(r.URL.Path, "/assets")
	if strings.HasSuffix(r2.URL.Path, "/") || r2.URL.Path == "/index.html" {
		fail(w, http.StatusNotFound, "no such asset")
		return
	}
	h.static.ServeHTTP(w, r2)
}

// identified answers 401 to a request without an identity (the page
// then shows its login form), and hands the others to fn.
func (h *Handler) identified(fn func(w http.ResponseWriter, r *http.Request, c api.Caller)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		c, ok := api.CallerOf(r.Context())
		if !ok {
			fail(w, http.StatusUnauthorized, "log in: give a token (xce token create --user NAME)")
			return
		}
		fn(w, r, c)
	}
}

// Me is the answer to GET /ui/v1/me: who the page acts as ("" with Login
// set: nobody, show the login form), whether that user is an
// administrator, whether jobs are private, and for a session kept in the
// cookie its anti-forgery token (sent back in api.CSRFHeader) and that
// it may log out.
type Me struct {
	User    string `json:"user"`
	Login   bool   `json:"login,omitempty"`
	Admin   bool   `json:"admin"`
	Private bool   `json:"private"`
	CSRF    string `json:"csrf,omitempty"`
	Session bool   `json:"session"`
}

func (h *Handler) me(w http.ResponseWriter, r *http.Request) {
	c, ok := api.CallerOf(r.Context())
	if !ok {
		reply(w, Me{Login: true})
		return
	}
	m := Me{User: c.User, Admin: h.o.API.Admin(c), Private: h.o.API.Private}
	if s, ok := api.SessionOf(r.Context()); ok && s.Cookie && h.o.Tokens != nil {
		m.CSRF, m.Session = h.o.Tokens.CSRF(s.Token), true
	}
	reply(w, m)
}

// login checks the token of the login form (field "token") and keeps it
// in the session cookie: HttpOnly (no script reads it), SameSite=Strict
// (no other site's page sends it), Secure over TLS, until the token
// expires. The form must come from a page of this server. A form
// answer redirects to the dashboard (303); a script's (Accept:
// application/json) gets {"user": ...}.
func (h *Handler) login(w http.ResponseWriter, r *http.Request) {
	if h.o.Tokens == nil {
		fail(w, http.StatusNotFound, "this listener takes no login: the socket knows who you are")
		return
	}
	if !api.SameOrigin(r) {
		fail(w, http.StatusForbidden, "refused: the login form must come from this server's page")
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	if err := r.ParseForm(); err != nil {
		fail(w, http.StatusBadRequest, "the login form: "+err.Error())
		return
	}
	tok := strings.TrimSpace(r.PostForm.Get("token"))
	id, err := h.o.Tokens.Verify(tok)
	if err != nil {
		fail(w, http.StatusUnauthorized, "bad or expired token: "+err.Error())
		return
	}
	exp, err := h.o.Tokens.Expiry(tok)
	if err != nil {
		fail(w, http.StatusUnauthorized, "bad token: "+err.Error())
		return
	}
	maxAge := int(time.Until(exp).Seconds())
	http.SetCookie(w, &http.Cookie{Name: api.CookieName(r.Host), Value: tok, Path: "/", MaxAge: max(maxAge, 1),
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil})
	if strings.Contains(r.Header.Get("Accept"), "application/json") {
		reply(w, map[string]string{"user": id.User})
		return
	}
	http.Redirect(w, r, "/", http.StatusSeeOther)
}

// logout forgets the session cookie. With a valid session the TCP
// listener has already checked the request's origin and anti-forgery
// token; a stale cookie is cleared for any page of this server.
func (h *Handler) logout(w http.ResponseWriter, r *http.Request) {
	if !api.SameOrigin(r) {
		fail(w, http.StatusForbidden, "refused: log out from this server's page")
		return
	}
	http.SetCookie(w, &http.Cookie{Name: api.CookieName(r.Host), Value: "", Path: "/", MaxAge: -1,
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil})
	reply(w, map[string]bool{"logged_out": true})
}

// reply answers v as JSON, not to be cached.
func reply(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	_ = json.NewEncoder(w).Encode(v)
}

// fail answers an error as the API does: the status and {"error": msg}.
func fail(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": msg})
}
