package api

import (
	"context"
	"net"
	"net/http"
	"net/url"
	"strings"
)

// CSRFHeader is the request header in which a browser page sends the
// anti-forgery token of its session (auth.Issuer.CSRF) with every
// request that changes something (docs/dashboard.md).
const CSRFHeader = "X-Xce-Csrf"

// CookieName returns the name of the session cookie for a request that
// came to host (the Host header, "127.0.0.1:7777"): "xce_session_"
// and the port, or "xce_session" without one. Browsers send a host's
// cookies to every port of it, so two servers on one machine keep apart
// by name.
func CookieName(host string) string {
	_, port, err := net.SplitHostPort(host)
	if err != nil || port == "" || strings.Trim(port, "0123456789") != "" {
		return "xce_session"
	}
	return "xce_session_" + port
}

// Session is how a TCP request was identified: Token is the token it
// presented and Cookie says it came in the session cookie (a browser
// sends that by itself, so a request that changes something must carry
// the anti-forgery token too), not in an Authorization header.
type Session struct {
	Token  string
	Cookie bool
}

type sessionKey struct{}

// WithSession returns ctx carrying s.
func WithSession(ctx context.Context, s Session) context.Context {
	return context.WithValue(ctx, sessionKey{}, s)
}

// SessionOf returns the session of ctx's request; false for a request
// that presented no token (the Unix socket, or no identity).
func SessionOf(ctx context.Context) (Session, bool) {
	s, ok := ctx.Value(sessionKey{}).(Session)
	return s, ok
}

// SameOrigin reports whether a browser says r comes from a page of this
// server: Sec-Fetch-Site is "same-origin" when present, and Origin, when
// present, names r's own scheme and host. A request with neither header
// is not taken for same-origin (every browser in use sends at least one
// of them with a POST). It is the first of the two checks a request
// that carries the session cookie and changes something must pass; the
// anti-forgery header is the second.
func SameOrigin(r *http.Request) bool {
	site := r.Header.Get("Sec-Fetch-Site")
	origin := r.Header.Get("Origin")
	if site == "" && origin == "" {
		return false
	}
	if site != "" && site != "same-origin" {
		return false
	}
	if origin != "" {
		u, err := url.Parse(origin)
		if err != nil || u.Host != r.Host {
			return false
		}
		scheme := "http"
		if r.TLS != nil {
			scheme = "https"
		}
		if u.Scheme != scheme {
			return false
		}
	}
	return true
}

// safeMethod reports whether method only reads (GET, HEAD, OPTIONS).
func safeMethod(method string) bool {
	return method == http.MethodGet || method == http.MethodHead || method == http.MethodOptions
}
