// Package client is what the CLI commands call: the live scheduler's API
// (docs/api.md) over its Unix socket.
package client

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
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/xce-sched/xce/internal/api"
	"github.com/xce-sched/xce/internal/limitview"
)

// Client talks to one server, or to the members of a replicated control
// plane (docs/ha.md), whichever leads.
type Client struct {
	http  *http.Client
	base  string
	token string // presented over TCP as "Authorization: Bearer TOKEN"
	err   error  // why the client could not be made (Dial): every call fails with it

	name    string       // the socket path or the URL, for errors
	members []*Client    // a replicated control plane's members, one client each
	leader  atomic.Int32 // the index in members of the one that answered last
}

// Dial is Open whose error, if any, every call of the client returns.
func Dial(server, tokenFile string) *Client {
	c, err := Open(server, tokenFile)
	if err != nil {
		return &Client{err: err}
	}
	return c
}

// Open returns a client of server: a Unix socket path (the caller is then
// known by its uid), or the http:// or https:// URL of the server's TCP
// listener, to which it presents a token: $XCE_TOKEN, else the contents of
// tokenFile. For https, the server's certificate is checked against the
// system's roots, or the PEM file $XCE_CA when set.
//
// A comma-separated list names the members of a replicated control plane:
// each call goes to the member that answered the last one, and on to the
// next when a member is not the leader or cannot be reached before the
// request was sent (Client.do).
func Open(server, tokenFile string) (*Client, error) {
	if list := strings.Split(server, ","); len(list) > 1 {
		c := &Client{}
		for _, s := range list {
			m, err := Open(strings.TrimSpace(s), tokenFile)
			if err != nil {
				return nil, err
			}
			c.members = append(c.members, m)
		}
		return c, nil
	}
	if !strings.HasPrefix(server, "http://") && !strings.HasPrefix(server, "https://") {
		return New(server), nil
	}
	u, err := url.Parse(server)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("server %q: want a socket path or http(s)://host:port", server)
	}
	token := strings.TrimSpace(os.Getenv("XCE_TOKEN"))
	if token == "" && tokenFile != "" {
		data, err := os.ReadFile(tokenFile)
		if err != nil {
			return nil, err
		}
		token = strings.TrimSpace(string(data))
	}
	if token == "" {
		return nil, fmt.Errorf("server %s: a TCP client needs a token ($XCE_TOKEN or --token-file; xce token create)", server)
	}
	tr := &http.Transport{}
	if ca := os.Getenv("XCE_CA"); ca != "" {
		pem, err := os.ReadFile(ca)
		if err != nil {
			return nil, err
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("%s: no certificate", ca)
		}
		tr.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	}
	base := strings.TrimSuffix(u.Scheme+"://"+u.Host, "/")
	return &Client{http: &http.Client{Transport: tr}, base: base, token: token, name: base}, nil
}

// DevSocket is where a dev server (`xce serve --dev` without --data) of
// the user with uid listens, and where clients look when nothing else is
// said.
func DevSocket(uid int) string {
	return filepath.Join(os.TempDir(), fmt.Sprintf("xce-dev-%d", uid), "xce.sock")
}

// Socket returns the server to use: server when set (a flag), else
// $XCE_SERVER, else DevSocket of the caller. It is a socket path or an
// http(s) URL (Open).
func Socket(server string) string {
	if server != "" {
		return server
	}
	if s := os.Getenv("XCE_SERVER"); s != "" {
		return s
	}
	return DevSocket(os.Getuid())
}

// New returns a client of the server listening on the Unix socket at
// socket.
func New(socket string) *Client {
	tr := &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", socket)
	}}
	return &Client{http: &http.Client{Transport: tr}, base: "http://xce", name: socket}
}

// do sends a request with body in (nil: none) and decodes the answer into
// out. An error answer is an *api.Error with its status.
//
// With members, a request goes to the member that answered last, and to
// the next one when that one is not the leader (503 with the not-leader
// header: it took nothing) or could not be reached (no request sent), a
// round every 200 ms, for at most FailoverWait. A single server that
// says it is not the leader (a member of a replicated control plane
// while no leader is known: it took nothing) is asked again the same way.
// Any other answer or error is returned as it is: a write a server took
// but did not answer is not sent again (it may have been carried out).
func (c *Client) do(ctx context.Context, method, path string, in, out any) error {
	if c.err != nil {
		return c.err
	}
	if len(c.members) > 0 {
		return c.failover(ctx, method, path, in, out)
	}
	deadline := time.Now().Add(FailoverWait)
	for {
		err := c.send(ctx, method, path, in, out)
		if !errors.Is(err, errNotLeader) || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// send sends a request to the one server of c, once (Client.do).
func (c *Client) send(ctx context.Context, method, path string, in, out any) error {
	if c.err != nil {
		return c.err
	}
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, body)
	if err != nil {
		return err
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	// wrote: the last attempt wrote the request. The transport tries again
	// on a new connection only when the server cannot have taken the
	// request (a kept-alive connection it had closed), so each attempt
	// starts afresh (GetConn).
	var wrote atomic.Bool
	req = req.WithContext(httptrace.WithClientTrace(req.Context(), &httptrace.ClientTrace{
		GetConn:      func(string) { wrote.Store(false) },
		WroteRequest: func(i httptrace.WroteRequestInfo) { wrote.Store(i.Err == nil) }}))
	resp, err := c.http.Do(req)
	if err != nil {
		if wrote.Load() && method != http.MethodGet {
			return fmt.Errorf("the xce server took the request but did not answer (it may have stopped): it may or may not have been carried out; check (xce jobs): %w", err)
		}
		return fmt.Errorf("cannot reach the xce server: %w", unreachable{err})
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		e := &api.Error{Status: resp.StatusCode}
		if resp.Header.Get(api.NotLeaderHeader) != "" {
			if json.Unmarshal(data, e) != nil || e.Msg == "" {
				e.Msg = resp.Status
			}
			return notLeader{leader: resp.Header.Get(api.LeaderHeader), err: e}
		}
		if json.Unmarshal(data, e) != nil || e.Msg == "" {
			e.Msg = fmt.Sprintf("%s: %s", resp.Status, bytes.TrimSpace(data))
		}
		return e
	}
	return json.Unmarshal(data, out)
}

// Submit submits jobs (all or none) and returns their IDs and queues.
func (c *Client) Submit(ctx context.Context, jobs []api.JobRequest) (api.SubmitReply, error) {
	var rep api.SubmitReply
	err := c.do(ctx, http.MethodPost, "/v1/jobs", api.SubmitRequest{Jobs: jobs}, &rep)
	return rep, err
}

// Jobs lists jobs: of user ("all" for everybody's, "" for the caller's),
// ended ones too with all, or just ids when given.
func (c *Client) Jobs(ctx context.Context, user string, all bool, ids []int64) ([]api.JobInfo, error) {
	return c.JobsWith(ctx, JobsQuery{User: user, All: all, IDs: ids})
}

// JobsQuery selects jobs as Jobs does; Forecast adds each pending job's
// forecast (docs/forecast.md).
type JobsQuery struct {
	User string
	All  bool
	IDs  []int64
	// Names are jobs as users write them: "12" (a job, or every element
	// of array 12) or "12[3]" (one element); docs/arrays.md.
	Names    []string
	Forecast bool
}

// JobsWith lists the jobs q selects.
func (c *Client) JobsWith(ctx context.Context, sel JobsQuery) ([]api.JobInfo, error) {
	user, all, ids := sel.User, sel.All, sel.IDs
	q := url.Values{}
	if sel.Forecast {
		q.Set("forecast", "1")
	}
	if user != "" {
		q.Set("user", user)
	}
	if all {
		q.Set("all", "1")
	}
	for _, id := range ids {
		q.Add("id", strconv.FormatInt(id, 10))
	}
	for _, n := range sel.Names {
		q.Add("id", n)
	}
	var rep api.JobsReply
	err := c.do(ctx, http.MethodGet, "/v1/jobs?"+q.Encode(), nil, &rep)
	return rep.Jobs, err
}

// Kill kills job id.
func (c *Client) Kill(ctx context.Context, id int64) error {
	return c.KillName(ctx, strconv.FormatInt(id, 10))
}

// KillName kills the jobs name names: "12" (a job, or every unfinished
// element of array 12) or "12[3]" (one element).
func (c *Client) KillName(ctx context.Context, name string) error {
	var rep map[string]string
	return c.do(ctx, http.MethodPost, "/v1/jobs/"+url.PathEscape(name)+"/kill", nil, &rep)
}

// Hosts lists the hosts.
func (c *Client) Hosts(ctx context.Context) ([]api.HostInfo, error) {
	var rep api.HostsReply
	err := c.do(ctx, http.MethodGet, "/v1/hosts", nil, &rep)
	return rep.Hosts, err
}

// History returns the events of the job name names ("12", or "12[3]" for
// an element of an array).
func (c *Client) History(ctx context.Context, name string) (api.HistoryReply, error) {
	var rep api.HistoryReply
	err := c.do(ctx, http.MethodGet, "/v1/jobs/"+url.PathEscape(name)+"/history", nil, &rep)
	return rep, err
}

// Events returns the event log from index from, at most limit events
// (api.MaxEventsPage at most), and the log's last index: administrators
// only.
func (c *Client) Events(ctx context.Context, from uint64, limit int) (api.EventsReply, error) {
	var rep api.EventsReply
	err := c.do(ctx, http.MethodGet, "/v1/events?from="+strconv.FormatUint(from, 10)+"&limit="+strconv.Itoa(limit), nil, &rep)
	return rep, err
}

// Why explains why the job name names pends ("12", or "12[3]" for an
// element of an array): its reasons, forecast and the changes that would
// let it start sooner (GET /v1/jobs/{id}/why).
func (c *Client) Why(ctx context.Context, name string) (api.WhyReply, error) {
	var rep api.WhyReply
	err := c.do(ctx, http.MethodGet, "/v1/jobs/"+url.PathEscape(name)+"/why", nil, &rep)
	return rep, err
}

// Queues lists the queues.
func (c *Client) Queues(ctx context.Context) ([]api.QueueInfo, error) {
	var rep api.QueuesReply
	err := c.do(ctx, http.MethodGet, "/v1/queues", nil, &rep)
	return rep.Queues, err
}

// SetHost closes (open false) or opens host name: administrators only.
func (c *Client) SetHost(ctx context.Context, name string, open bool) error {
	verb := "close"
	if open {
		verb = "open"
	}
	var rep map[string]string
	return c.do(ctx, http.MethodPost, "/v1/hosts/"+url.PathEscape(name)+"/"+verb, nil, &rep)
}

// Reconfig asks the server to reload its configuration file
// (administrators only).
func (c *Client) Reconfig(ctx context.Context) error {
	var rep map[string]bool
	return c.do(ctx, http.MethodPost, "/v1/reconfig", nil, &rep)
}

// Limits returns each limit instance's usage now (GET /v1/limits).
func (c *Client) Limits(ctx context.Context) ([]limitview.Row, error) {
	var rep api.LimitsReply
	if err := c.do(ctx, http.MethodGet, "/v1/limits", nil, &rep); err != nil {
		return nil, err
	}
	rows := make([]limitview.Row, len(rep.Limits))
	for i, l := range rep.Limits {
		rows[i] = limitview.Row{Name: l.Name, Users: l.Users, Queues: l.Queues, Hosts: l.Hosts, Projects: l.Projects}
		for _, u := range l.Usage {
			rows[i].Resources = append(rows[i].Resources, u.Resource)
			rows[i].Used = append(rows[i].Used, u.Used)
			rows[i].Max = append(rows[i].Max, u.Max)
		}
	}
	return rows, nil
}

// Token asks for a token for user, valid for ttl (administrators only).
func (c *Client) Token(ctx context.Context, user string, ttl time.Duration) (api.TokenReply, error) {
	var rep api.TokenReply
	err := c.do(ctx, http.MethodPost, "/v1/tokens", api.TokenRequest{User: user, TTL: int64(ttl / time.Second)}, &rep)
	return rep, err
}

// FailoverWait bounds how long a client of a replicated control plane
// looks for its leader before it gives up with the last error.
const FailoverWait = 30 * time.Second

var (
	errNotLeader   = errors.New("not the leader")
	errUnreachable = errors.New("unreachable")
)

// unreachable is a request that was not sent: its error reads as the
// dial's, and is errUnreachable.
type unreachable struct{ err error }

func (u unreachable) Error() string        { return u.err.Error() }
func (u unreachable) Unwrap() error        { return u.err }
func (u unreachable) Is(target error) bool { return target == errUnreachable }

// notLeader is a member's answer that it is not the leader (it took
// nothing): errNotLeader, with the leader's API address when it said.
type notLeader struct {
	leader string
	err    *api.Error
}

func (e notLeader) Error() string        { return e.err.Error() }
func (e notLeader) Unwrap() error        { return e.err }
func (e notLeader) Is(target error) bool { return target == errNotLeader }

// failover sends a request to the members in turn, from the one that
// answered last, until one that leads answers (Client.do); a member that
// names the leader sends the request there next.
func (c *Client) failover(ctx context.Context, method, path string, in, out any) error {
	deadline := time.Now().Add(FailoverWait)
	n := len(c.members)
	for {
		var err error
		tried := make([]bool, n)
		for next := int(c.leader.Load()); next >= 0; {
			i := next
			tried[i] = true
			err = c.members[i].send(ctx, method, path, in, out)
			if !errors.Is(err, errNotLeader) && !errors.Is(err, errUnreachable) {
				c.leader.Store(int32(i))
				return err
			}
			next = -1
			for k := 1; k < n; k++ {
				if j := (i + k) % n; !tried[j] {
					next = j
					break
				}
			}
			var nl notLeader
			if errors.As(err, &nl) && nl.leader != "" {
				if j := c.member(nl.leader); j >= 0 && !tried[j] {
					next = j
				}
			}
		}
		if time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// member returns the index of the member whose TCP address is addr
// (host:port), or -1.
func (c *Client) member(addr string) int {
	for i, m := range c.members {
		if m.base == "http://"+addr || m.base == "https://"+addr {
			return i
		}
	}
	return -1
}

// ChangeMember adds (join) or removes a replicated control plane's
// member at raft address addr, through whichever member leads.
func (c *Client) ChangeMember(ctx context.Context, addr string, join bool) error {
	path := "/v1/members/remove"
	if join {
		path = "/v1/members/join"
	}
	var rep map[string]bool
	return c.do(ctx, http.MethodPost, path, api.MemberChange{Raft: addr}, &rep)
}

// Members returns what each member of a replicated control plane says of
// itself (GET /v1/members), in the order of the list the client was made
// with; a member that does not answer is left out, and its error is
// returned with what the others said.
func (c *Client) Members(ctx context.Context) ([]api.Member, error) {
	if c.err != nil {
		return nil, c.err
	}
	one := []*Client{c}
	if len(c.members) > 0 {
		one = c.members
	}
	var out []api.Member
	var errs []error
	for _, m := range one {
		var rep api.MembersReply
		if err := m.send(ctx, http.MethodGet, "/v1/members", nil, &rep); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", m.name, err))
			continue
		}
		out = append(out, rep.Members...)
	}
	return out, errors.Join(errs...)
}
