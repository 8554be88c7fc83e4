package daemon

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/xce-sched/xce/internal/api"
	"github.com/xce-sched/xce/internal/auth"
)

// ForwardTimeout bounds a write a follower forwards to the leader, from
// the request's start to the end of the leader's answer (docs/ha.md).
const ForwardTimeout = 20 * time.Second

// ForwardTokenTTL is the lifetime of the token a follower makes for a
// caller of its socket to forward that caller's write with: long enough
// for the request (ForwardTimeout) and a clock a little off between
// members, short enough to be worth nothing soon after.
const ForwardTokenTTL = 60 * time.Second

// maxForwardReply bounds the leader's answer a follower passes on (the
// answers to writes are small).
const maxForwardReply = 64 << 20

// forwarder sends a follower's writes (every /v1 request but the reads and
// the agents') to the leader's TCP listener and passes the leader's
// answer (status, headers, body) back unchanged. The caller is the one
// the follower knows: a TCP caller's own token goes on as it is (the
// signing key is replicated, so the leader checks it); a socket caller
// (SO_PEERCRED) goes on with a token the follower makes for exactly that
// user, uid and gid, for ForwardTokenTTL. The leader decides what the
// caller may do, as for any token.
type forwarder struct {
	// leader returns the TCP address of the leader's API, "" when no
	// leader is known.
	leader func() string
	// key returns the replicated signing key (64 hex digits), "" when
	// the state has none yet.
	key func() string
	// notLeader answers 503 with api.NotLeaderHeader (and the leader's
	// address, when known): the request was not taken; why, when not "",
	// says why it was not forwarded.
	notLeader func(w http.ResponseWriter, why string)
	// caughtUp, when set, is told the index of the state the leader
	// answered from (AppliedHeader): the follower's next read waits
	// (bounded) until it has applied as much, so that its caller reads
	// its write from it next (reader.require).
	caughtUp func(index uint64)

	scheme  string // "https" when the member serves TLS, else "http" (loopback only)
	client  *http.Client
	timeout time.Duration

	mu  sync.Mutex
	hex string       // the key iss was made of
	iss *auth.Issuer // the replicated signing key's issuer
	tcp http.Handler // the TCP listener's: tokens checked with iss
}

// forwardOptions configure newForwarder.
type forwardOptions struct {
	leader    func() string
	key       func() string
	notLeader func(w http.ResponseWriter, why string)
	caughtUp  func(index uint64)
	// TLS: the member's own certificate chain (PEM file, "" without TLS)
	// and the CA file its members' certificates are signed by ("": none
	// besides the system's roots and the chain).
	certFile, caFile string
	timeout          time.Duration
}

// newForwarder returns the forwarder of a member. With TLS (certFile
// set), the leader's certificate is checked against the system's roots,
// the certificates of the member's own chain (members that share a CA, or
// a certificate, trust each other with nothing more) and caFile's; the
// host name is always checked. Without TLS the member listens on loopback
// (api.ListenTCP), and it forwards only to a loopback address.
func newForwarder(o forwardOptions) (*forwarder, error) {
	f := &forwarder{leader: o.leader, key: o.key, notLeader: o.notLeader, caughtUp: o.caughtUp, scheme: "http", timeout: o.timeout}
	if f.timeout <= 0 {
		f.timeout = ForwardTimeout
	}
	// A connection per request: a kept-alive one to a leader that died
	// takes the write into a dead socket's buffer and fails with EOF, which
	// cannot be told from a leader that died while carrying it out (502,
	// "may or may not"), where a new connection is refused and the caller
	// told to try again (TestFailover met the first).
	tr := &http.Transport{DialContext: (&net.Dialer{Timeout: 3 * time.Second}).DialContext,
		TLSHandshakeTimeout: 5 * time.Second, DisableKeepAlives: true}
	if o.certFile != "" {
		pool, err := trustPool(o.certFile, o.caFile)
		if err != nil {
			return nil, err
		}
		f.scheme = "https"
		tr.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	}
	f.client = &http.Client{Transport: tr,
		// An answer is passed on as it is, a redirect included.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	return f, nil
}

// trustPool returns the roots a member checks the leader's certificate
// against: the system's, the certificates of certFile (its own chain) and
// those of caFile when given.
func trustPool(certFile, caFile string) (*x509.CertPool, error) {
	pool, err := x509.SystemCertPool()
	if err != nil {
		pool = x509.NewCertPool()
	}
	chain, err := os.ReadFile(certFile)
	if err != nil {
		return nil, fmt.Errorf("the members' TLS trust: %w", err)
	}
	if !pool.AppendCertsFromPEM(chain) {
		return nil, fmt.Errorf("the members' TLS trust: %s: no PEM certificate", certFile)
	}
	if caFile != "" {
		ca, err := os.ReadFile(caFile)
		if err != nil {
			return nil, fmt.Errorf("the members' TLS trust: %w", err)
		}
		if !pool.AppendCertsFromPEM(ca) {
			return nil, fmt.Errorf("the members' TLS trust: %s: no PEM certificate", caFile)
		}
	}
	return pool, nil
}

// issuer returns the issuer of the replicated signing key and the TCP
// listener's handler that checks tokens with it; nil before the state
// has the key.
func (f *forwarder) issuer() (*auth.Issuer, http.Handler) {
	key := f.key()
	if key == "" {
		return nil, nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if key != f.hex {
		iss, err := auth.NewIssuer(key)
		if err != nil {
			return nil, nil
		}
		// No hub, no agent token: the agents' routes never come here.
		f.hex, f.iss, f.tcp = key, iss, api.NewTCPHandler(nil, "", http.HandlerFunc(f.send), iss)
	}
	return f.iss, f.tcp
}

// tcpRequest forwards a request that came on the member's TCP listener:
// its token (or session cookie, with the same checks as the leader's
// listener makes: api.NewTCPHandler) is checked first with the
// replicated key.
func (f *forwarder) tcpRequest(w http.ResponseWriter, r *http.Request) {
	_, h := f.issuer()
	if h == nil {
		f.notLeader(w, "")
		return
	}
	h.ServeHTTP(w, r)
}

// send forwards r, whose caller is set, to the leader, and passes its
// answer on. It answers itself, with NotLeaderHeader (nothing was taken),
// when r was forwarded already, no leader is known, or the leader could
// not be sent the request; with 502 or 504 and no such header when the
// leader may have taken the request but did not answer (the caller must
// not send it again blindly).
func (f *forwarder) send(w http.ResponseWriter, r *http.Request) {
	c, ok := api.CallerOf(r.Context())
	if !ok {
		answer(w, http.StatusUnauthorized, "no identity: connect through the server's socket, or give a token")
		return
	}
	if r.Header.Get(api.ForwardedHeader) != "" {
		f.notLeader(w, "") // a member that does not lead never forwards twice
		return
	}
	addr := f.leader()
	iss, _ := f.issuer()
	switch {
	case addr == "" || iss == nil:
		f.notLeader(w, "")
		return
	case !f.reachable(addr):
		f.notLeader(w, fmt.Sprintf("this server does not forward to %s: over TLS to an address that names a host, else on loopback only", addr))
		return
	}
	token := ""
	if s, ok := api.SessionOf(r.Context()); ok {
		token = s.Token // the caller's own token, checked by the leader again
	} else {
		tok, err := iss.Issue(auth.Identity{User: c.User, UID: c.UID, GID: c.GID}, ForwardTokenTTL)
		if err != nil {
			answer(w, http.StatusInternalServerError, "forward to the leader: "+err.Error())
			return
		}
		token = tok
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, api.MaxBody))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			answer(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("the body is over %d bytes", api.MaxBody))
			return
		}
		answer(w, http.StatusBadRequest, "body: "+err.Error())
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), f.timeout)
	defer cancel()
	// wrote: the last attempt wrote the request (as client.Client.do).
	var wrote atomic.Bool
	ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		GetConn:      func(string) { wrote.Store(false) },
		WroteRequest: func(i httptrace.WroteRequestInfo) { wrote.Store(i.Err == nil) }})
	out, err := http.NewRequestWithContext(ctx, r.Method, f.scheme+"://"+addr+r.URL.RequestURI(), bytes.NewReader(body))
	if err != nil {
		answer(w, http.StatusBadRequest, "forward to the leader: "+err.Error())
		return
	}
	for k, vs := range r.Header {
		if !dropHeader(http.CanonicalHeaderKey(k)) {
			out.Header[k] = vs
		}
	}
	out.Header.Set("Authorization", "Bearer "+token)
	out.Header.Set(api.ForwardedHeader, "1")
	resp, err := f.client.Do(out)
	var data []byte
	if err == nil {
		data, err = io.ReadAll(io.LimitReader(resp.Body, maxForwardReply+1))
		resp.Body.Close()
		if err == nil && len(data) > maxForwardReply {
			err = fmt.Errorf("an answer over %d bytes", maxForwardReply)
		}
	}
	if err != nil {
		switch {
		case !wrote.Load() && resp == nil:
			f.notLeader(w, "the request could not be forwarded to it: "+err.Error()) // nothing was sent
		case errors.Is(ctx.Err(), context.DeadlineExceeded):
			answer(w, http.StatusGatewayTimeout, fmt.Sprintf("the leader (%s) took the request but did not answer within %v: it may or may not have been carried out; check (xce jobs)", addr, f.timeout))
		default:
			answer(w, http.StatusBadGateway, fmt.Sprintf("the leader (%s) took the request but did not answer: it may or may not have been carried out; check (xce jobs): %v", addr, err))
		}
		return
	}
	if at, err := strconv.ParseUint(resp.Header.Get(AppliedHeader), 10, 64); err == nil && f.caughtUp != nil {
		f.caughtUp(at)
	}
	for k, vs := range resp.Header {
		if !hopHeader(http.CanonicalHeaderKey(k)) {
			w.Header()[k] = vs
		}
	}
	w.WriteHeader(resp.StatusCode)
	_, _ = w.Write(data)
}

// redirect sends a browser that asks a follower for the dashboard (a GET
// outside /v1) to the leader's, at the same path: 307 to the leader's
// address, over TLS when this member serves TLS; 503 (not leader) while
// no leader is known.
func (f *forwarder) redirect(w http.ResponseWriter, r *http.Request) {
	addr := f.leader()
	host, _, err := net.SplitHostPort(addr)
	if ip := net.ParseIP(host); err != nil || host == "" || ip != nil && ip.IsUnspecified() {
		f.notLeader(w, "")
		return
	}
	http.Redirect(w, r, f.scheme+"://"+addr+r.URL.RequestURI(), http.StatusTemporaryRedirect)
}

// reachable reports whether the follower may send a caller's token to
// addr: over TLS anywhere but an unspecified address ("[::]:7700" names
// no member); without TLS on loopback only (a token never crosses a
// network in clear).
func (f *forwarder) reachable(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil || host == "" {
		return false
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		return false
	}
	return f.scheme == "https" || api.Loopback(addr)
}

// hopHeader reports whether k (canonical) is a header of one connection
// (RFC 9110, 7.6.1), passed on neither way.
func hopHeader(k string) bool {
	switch k {
	case "Connection", "Keep-Alive", "Proxy-Connection", "Proxy-Authenticate", "Proxy-Authorization", "Te", "Trailer",
		"Transfer-Encoding", "Upgrade":
		return true
	}
	return false
}

// dropHeader reports whether a follower keeps request header k
// (canonical) from the leader: those of one connection, the length (of
// the body it sends), the caller's credentials, which it replaces with
// the Authorization it sends (a session cookie and its anti-forgery token
// were checked by the follower), and an idempotency key (with one, Go's
// transport may send a write again on its own; xce's API has none, and a
// write is sent once).
func dropHeader(k string) bool {
	switch k {
	case "Content-Length", "Authorization", "Cookie", api.CSRFHeader, "Idempotency-Key", "X-Idempotency-Key":
		return true
	}
	return hopHeader(k)
}

// answer writes an error as the API does: status and {"error": msg}.
func answer(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(api.Error{Msg: msg})
}

// withApplied returns h that, on the answer to a request a follower
// forwarded (api.ForwardedHeader), sets AppliedHeader to the index of the
// leader's state when it answers (stateAt): the follower's next read
// waits until it has applied as much.
func withApplied(stateAt func() uint64, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get(api.ForwardedHeader) == "" {
			h.ServeHTTP(w, r)
			return
		}
		h.ServeHTTP(&appliedWriter{ResponseWriter: w, stateAt: stateAt}, r)
	})
}

// appliedWriter sets AppliedHeader before the answer's status goes out.
type appliedWriter struct {
	http.ResponseWriter
	stateAt func() uint64
	sent    bool
}

// WriteHeader implements http.ResponseWriter.
func (a *appliedWriter) WriteHeader(status int) {
	if !a.sent {
		a.sent = true
		a.Header().Set(AppliedHeader, strconv.FormatUint(a.stateAt(), 10))
	}
	a.ResponseWriter.WriteHeader(status)
}

// Write implements http.ResponseWriter.
func (a *appliedWriter) Write(b []byte) (int, error) {
	if !a.sent {
		a.WriteHeader(http.StatusOK)
	}
	return a.ResponseWriter.Write(b)
}

// Unwrap returns the writer underneath (http.ResponseController).
func (a *appliedWriter) Unwrap() http.ResponseWriter { return a.ResponseWriter }
