//go:build linux

package ha

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/xce-sched/xce/internal/api"
	"github.com/xce-sched/xce/internal/client"
)

// forwardConf: one host of two slots; root's jobs may run.
const forwardConf = `server:
  allow_root_jobs: true
  cycle_interval: 100ms
  heartbeat_timeout: 10s
hosts:
  - {name: h1, slots: 2}
queues:
  - {name: normal, policy: firstfit}
`

// run runs the xce binary with args in dir, as cred (nil: the test's
// user), with env and PATH alone for its environment, for at most 40 s; it
// returns its standard output and error and how it ended.
func run(t *testing.T, cred *syscall.Credential, dir string, env []string, args ...string) (string, string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, xceBin, args...)
	cmd.Dir = dir
	cmd.Env = append([]string{"PATH=/usr/bin:/bin"}, env...)
	if cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	}
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	return out.String(), errOut.String(), err
}

// submit runs xce submit with args as run does, and returns the job's
// ID, failing the test when the submit fails.
func submit(t *testing.T, cred *syscall.Credential, dir string, env []string, args ...string) int64 {
	t.Helper()
	out, errOut, err := run(t, cred, dir, env, append([]string{"submit"}, args...)...)
	m := regexp.MustCompile(`^Job <(\d+)> is submitted to queue <normal>\.\n$`).FindStringSubmatch(out)
	if err != nil || m == nil {
		t.Fatalf("xce submit %v (%v): %v: %q %q", args, env, err, out, errOut)
	}
	id, _ := strconv.ParseInt(m[1], 10, 64)
	return id
}

// TestForward: three members serving TLS (one self-signed certificate for
// 127.0.0.1, which each member trusts as its own) and one agent; every
// client names one follower alone. Root submits through the follower's
// socket and, with a token, through its TCP listener: both jobs run to
// DONE. As nobody (a user that is not the servers'), a submit through the
// follower's socket is nobody's job, nobody cannot kill root's job there
// but kills its own, and nobody's `xce server remove` is refused (403),
// on the socket and with nobody's token over TCP. Root's token over TCP
// removes the third member (which then receives no more entries) and
// joins it again (it catches up). The follower serves its own metrics and
// sends a browser to the leader's dashboard.
func TestForward(t *testing.T) {
	c := prepare(t, forwardConf)
	// nobody reaches the members' sockets under the test's directory.
	for _, d := range []string{c.dir, filepath.Dir(c.dir)} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	c.useTLS()
	for i := range 3 {
		c.start(i)
	}
	cl := c.dial()
	l := c.leader(cl)
	f, x := (l+1)%3, (l+2)%3
	fsock := filepath.Join(c.data(f), "xce.sock")
	tokFile := filepath.Join(c.dir, "agent.token")
	waitFile(t, filepath.Join(c.data(l), "agent.token"), tokFile)
	agents := c.startAgents(tokFile, 1)
	defer agents.stop(t)

	// The follower forwards once it knows the leader's address and the
	// replicated key: a token request (a write that changes nothing)
	// tells when; the client asks again while it says it is not the
	// leader (bounded by client.FailoverWait).
	fc, err := client.Open(fsock, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fc.Token(context.Background(), "root", time.Minute); err != nil {
		t.Fatalf("a token through follower %d's socket: %v", f, err)
	}

	onSocket := []string{"XCE_SERVER=" + fsock}
	id1 := submit(t, nil, c.dir, onSocket, "-J", "on-socket", "--", "/bin/true")
	tokens := map[string]string{}
	for _, u := range []string{"root", "nobody"} {
		out, errOut, err := run(t, nil, c.dir, onSocket, "token", "create", "--user", u, "--ttl", "1h")
		if err != nil {
			t.Fatalf("xce token create --user %s on the follower's socket: %v: %s", u, err, errOut)
		}
		tokens[u] = strings.TrimSpace(out)
	}
	overTCP := func(user string) []string {
		return []string{"XCE_SERVER=" + c.url(f), "XCE_TOKEN=" + tokens[user], "XCE_CA=" + c.ca}
	}
	id2 := submit(t, nil, c.dir, overTCP("root"), "-J", "over-tcp", "--", "/bin/true")
	jobs := func(id int64) api.JobInfo {
		t.Helper()
		js, err := fc.Jobs(context.Background(), "", false, []int64{id})
		if err != nil || len(js) != 1 {
			t.Fatalf("job %d on the follower: %v, %v", id, js, err)
		}
		return js[0]
	}
	waitState := func(id int64, want string) api.JobInfo {
		t.Helper()
		var j api.JobInfo
		for end := time.Now().Add(30 * time.Second); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
			if j = jobs(id); j.State == want {
				return j
			}
		}
		t.Fatalf("job %d is %s (%s), want %s", id, j.State, j.EndReason, want)
		return j
	}
	for _, id := range []int64{id1, id2} {
		if j := waitState(id, "DONE"); j.User != "root" {
			t.Errorf("job %d is %s's, want root's", id, j.User)
		}
	}

	if os.Geteuid() != 0 {
		t.Log("not root: the steps as nobody are left out")
	} else {
		nobody := &syscall.Credential{Uid: 65534, Gid: 65534}
		id3 := submit(t, nobody, "/tmp", onSocket, "-J", "nobody's", "-o", "/dev/null", "--", "/bin/sleep", "60")
		if j := jobs(id3); j.User != "nobody" {
			t.Fatalf("nobody's job through the follower is %s's", j.User)
		}
		if _, errOut, err := run(t, nobody, "/tmp", onSocket, "kill", fmt.Sprint(id1)); err == nil || !strings.Contains(errOut, "only its owner or an administrator") {
			t.Fatalf("nobody kills root's job through the follower: %v: %q", err, errOut)
		}
		waitState(id3, "RUN")
		if out, errOut, err := run(t, nobody, "/tmp", onSocket, "kill", fmt.Sprint(id3)); err != nil || out != fmt.Sprintf("Job <%d> is being terminated\n", id3) {
			t.Fatalf("nobody kills its job through the follower: %v: %q %q", err, out, errOut)
		}
		if j := waitState(id3, "EXIT"); j.EndReason == "" {
			t.Errorf("nobody's killed job: %+v", j)
		}
		h, err := fc.History(context.Background(), fmt.Sprint(id3))
		if err != nil || !strings.Contains(fmt.Sprint(h.Events), "killed by nobody") {
			t.Errorf("nobody's job's history: %+v, %v; want killed by nobody", h.Events, err)
		}
		if _, errOut, err := run(t, nobody, "/tmp", onSocket, "server", "remove", c.raft[x]); err == nil || !strings.Contains(errOut, "only an administrator may add or remove a server") {
			t.Fatalf("nobody's xce server remove on the follower's socket: %v: %q", err, errOut)
		}
	}
	nobodyTok := filepath.Join(c.dir, "nobody.token")
	if err := os.WriteFile(nobodyTok, []byte(tokens["nobody"]+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("XCE_CA", c.ca)
	nc, err := client.Open(c.url(f), nobodyTok)
	if err != nil {
		t.Fatal(err)
	}
	var apiErr *api.Error
	if err := nc.ChangeMember(context.Background(), c.raft[x], false); !errors.As(err, &apiErr) || apiErr.Status != http.StatusForbidden {
		t.Fatalf("nobody's remove over TCP to the follower: %v, want 403", err)
	}

	// An administrator's token over TCP, through the follower alone.
	out, errOut, err := run(t, nil, c.dir, overTCP("root"), "server", "remove", c.raft[x])
	if err != nil || out != c.raft[x]+": removed\n" {
		t.Fatalf("xce server remove %s over TCP to the follower: %v: %q %q", c.raft[x], err, out, errOut)
	}
	submit(t, nil, c.dir, overTCP("root"), "-J", "after-remove", "--", "/bin/true")
	last := func(i int) uint64 {
		mc, err := client.Open(filepath.Join(c.data(i), "xce.sock"), "")
		if err != nil {
			t.Fatal(err)
		}
		ms, err := mc.Members(context.Background())
		if err != nil || len(ms) != 1 {
			t.Fatalf("member %d: %v, %v", i, ms, err)
		}
		return ms[0].LastIndex
	}
	if lx, ll := last(x), last(l); lx >= ll {
		t.Fatalf("the removed member's last index %d, the leader's %d: it still receives entries", lx, ll)
	}
	out, errOut, err = run(t, nil, c.dir, overTCP("root"), "server", "join", c.raft[x])
	if err != nil || out != c.raft[x]+": joined\n" {
		t.Fatalf("xce server join %s over TCP to the follower: %v: %q %q", c.raft[x], err, out, errOut)
	}
	want := last(l)
	for end := time.Now().Add(15 * time.Second); last(x) < want; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("the member joined again is at %d, the leader was at %d", last(x), want)
		}
	}

	// The log of a running member, read through its socket (the keys
	// masked), replays to the same decisions.
	if out, err := exec.Command(xceBin, "sim", "verify", "--data", c.data(f)).CombinedOutput(); err != nil ||
		!strings.Contains(string(out), "differences") || !strings.HasSuffix(strings.TrimSpace(lastLine(string(out))), " 0") {
		t.Fatalf("xce sim verify on a running follower: %v\n%s", err, out)
	}

	// The follower's own metrics, from its replicated state; its
	// dashboard is the leader's.
	pool := x509.NewCertPool()
	if pem, err := os.ReadFile(c.ca); err != nil || !pool.AppendCertsFromPEM(pem) {
		t.Fatalf("%s: %v", c.ca, err)
	}
	hc := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	req, _ := http.NewRequest(http.MethodGet, c.url(f)+"/metrics", nil)
	req.Header.Set("Authorization", "Bearer "+tokens["root"])
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `xce_jobs{queue="normal",state="DONE"} `) ||
		!strings.Contains(string(body), "\nxce_log_last_index ") {
		t.Fatalf("the follower's /metrics: %d %.300s", resp.StatusCode, body)
	}
	resp, err = hc.Get(c.url(f) + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	// (The member joined again may have made the leader change meanwhile:
	// the one that leads now is named.)
	if now, loc := c.leader(cl), resp.Header.Get("Location"); now != f && (resp.StatusCode != http.StatusTemporaryRedirect || loc != c.url(now)+"/") {
		t.Fatalf("the follower's dashboard: %d to %q, want 307 to %s/", resp.StatusCode, loc, c.url(now))
	}
}
