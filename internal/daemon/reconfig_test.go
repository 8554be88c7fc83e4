package daemon

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/xce-sched/xce/cluster"
	"github.com/xce-sched/xce/internal/agent"
	"github.com/xce-sched/xce/internal/api"
	"github.com/xce-sched/xce/internal/auth"
	"github.com/xce-sched/xce/internal/event"
)

// reconfigServer is a configured server (remote agents on a loopback
// listener) started by Serve for a test, with tokens for its users.
type reconfigServer struct {
	t      *testing.T
	base   string // http://addr
	config string // the configuration file
	tokens map[string]string
	agent  string // the agent token
}

// reconfigConfig is the configuration of the tests: one host of 4 slots,
// one queue, and the server section given.
func reconfigConfig(server string) string {
	return "hosts:\n  - {name: h1, slots: 4}\nqueues:\n  - {name: normal, policy: firstfit}\nserver:\n" + server
}

func startReconfigServer(t *testing.T, server string) *reconfigServer {
	t.Helper()
	data := t.TempDir()
	path := filepath.Join(t.TempDir(), "xce.yaml")
	text := reconfigConfig(server)
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	c, s, err := cluster.ParseConfig(path, []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		done <- Serve(ctx, Options{Cluster: c, Server: s, ConfigText: text, ConfigPath: path, DataDir: data,
			Listen: "127.0.0.1:0", Ready: func(_, addr string) { ready <- addr }})
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	var addr string
	select {
	case addr = <-ready:
	case err := <-done:
		t.Fatalf("serve: %v", err)
	case <-time.After(30 * time.Second): // a hang guard only
		t.Fatal("the server did not start")
	}
	iss, err := auth.LoadKey(data)
	if err != nil {
		t.Fatal(err)
	}
	rs := &reconfigServer{t: t, base: "http://" + addr, config: path, tokens: map[string]string{}}
	for _, id := range []auth.Identity{{User: "alice", UID: 1001, GID: 1001}, {User: "bob", UID: 1002, GID: 1002},
		{User: "carol", UID: 1003, GID: 1003}, {User: "root"}} {
		if rs.tokens[id.User], err = iss.Issue(id, time.Hour); err != nil {
			t.Fatal(err)
		}
	}
	tok, err := os.ReadFile(filepath.Join(data, "agent.token"))
	if err != nil {
		t.Fatal(err)
	}
	rs.agent = strings.TrimSpace(string(tok))
	return rs
}

// call sends a request with token, body in as JSON (nil: none), decodes
// a 200 answer into out and returns the status and the error message.
func (rs *reconfigServer) call(method, path, token string, in, out any) (int, string) {
	rs.t.Helper()
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			rs.t.Fatal(err)
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, rs.base+path, body)
	if err != nil {
		rs.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		rs.t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		var e api.Error
		_ = json.Unmarshal(data, &e)
		return resp.StatusCode, e.Msg
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			rs.t.Fatalf("%s %s: %v", method, path, err)
		}
	}
	return resp.StatusCode, ""
}

// as sends a request as user (who has a token).
func (rs *reconfigServer) as(user, method, path string, in, out any) (int, string) {
	rs.t.Helper()
	return rs.call(method, path, rs.tokens[user], in, out)
}

// reload writes the configuration with the server section given and asks
// the server to reload it, as user.
func (rs *reconfigServer) reload(user, server string) (int, string) {
	rs.t.Helper()
	if err := os.WriteFile(rs.config, []byte(reconfigConfig(server)), 0o644); err != nil {
		rs.t.Fatal(err)
	}
	return rs.as(user, http.MethodPost, "/v1/reconfig", nil, nil)
}

// wantStatus checks a request's status.
func wantStatus(t *testing.T, what string, got, want int, msg string) {
	t.Helper()
	if got != want {
		t.Fatalf("%s: status %d (%s), want %d", what, got, msg, want)
	}
}

// configEvents returns the texts of the config.reloaded events of the
// log, in order (read as root).
func (rs *reconfigServer) configEvents() []string {
	rs.t.Helper()
	var rep api.EventsReply
	if st, msg := rs.as("root", http.MethodGet, "/v1/events?from=1", nil, &rep); st != http.StatusOK {
		rs.t.Fatalf("events: %d %s", st, msg)
	}
	var out []string
	for _, e := range rep.Events {
		if e.Type == event.ConfigReloaded {
			out = append(out, e.Config.Text)
		}
	}
	return out
}

// TestReconfigAdmins: xce reconfig applies the server section's admins at
// once, through the real handler and loop over TCP with tokens: alice,
// an administrator, closes h1 and bob may not (403); once the file names
// bob instead and alice reloads it, alice's next close is 403 (with the
// token she had) and bob opens and closes h1, and may read the event
// log, and kills carol's job where alice may not; carol is 403
// throughout. Each reload is one more config.reloaded
// event holding the file.
func TestReconfigAdmins(t *testing.T) {
	rs := startReconfigServer(t, "  admins: [alice]\n")
	closeH1, openH1 := "/v1/hosts/h1/close", "/v1/hosts/h1/open"
	st, msg := rs.as("alice", http.MethodPost, closeH1, nil, nil)
	wantStatus(t, "alice closes h1", st, http.StatusOK, msg)
	st, msg = rs.as("bob", http.MethodPost, openH1, nil, nil)
	wantStatus(t, "bob opens h1 before", st, http.StatusForbidden, msg)

	st, msg = rs.reload("alice", "  admins: [bob]\n")
	wantStatus(t, "alice reloads", st, http.StatusOK, msg)
	st, msg = rs.as("alice", http.MethodPost, openH1, nil, nil)
	wantStatus(t, "alice opens h1 after her removal", st, http.StatusForbidden, msg)
	if msg != "only an administrator may close or open a host" {
		t.Errorf("alice's 403: %q", msg)
	}
	st, msg = rs.as("alice", http.MethodGet, "/v1/events?from=1", nil, nil)
	wantStatus(t, "alice reads the log after her removal", st, http.StatusForbidden, msg)
	st, msg = rs.as("alice", http.MethodPost, "/v1/reconfig", nil, nil)
	wantStatus(t, "alice reloads after her removal", st, http.StatusForbidden, msg)
	st, msg = rs.as("bob", http.MethodPost, openH1, nil, nil)
	wantStatus(t, "bob opens h1 after", st, http.StatusOK, msg)
	st, msg = rs.as("bob", http.MethodPost, closeH1, nil, nil)
	wantStatus(t, "bob closes h1 after", st, http.StatusOK, msg)
	st, msg = rs.as("carol", http.MethodPost, openH1, nil, nil)
	wantStatus(t, "carol opens h1", st, http.StatusForbidden, msg)
	// A kill checks the caller inside the loop's request.
	var rep api.SubmitReply
	job := api.JobRequest{TasksMin: 1, TasksMax: 1, Command: []string{"true"}, Cwd: "/"}
	st, msg = rs.as("carol", http.MethodPost, "/v1/jobs", api.SubmitRequest{Jobs: []api.JobRequest{job}}, &rep)
	wantStatus(t, "carol submits", st, http.StatusOK, msg)
	kill := fmt.Sprintf("/v1/jobs/%d/kill", rep.IDs[0])
	st, msg = rs.as("alice", http.MethodPost, kill, nil, nil)
	wantStatus(t, "alice kills carol's job after her removal", st, http.StatusForbidden, msg)
	st, msg = rs.as("bob", http.MethodPost, kill, nil, nil)
	wantStatus(t, "bob kills carol's job", st, http.StatusOK, msg)

	got := rs.configEvents()
	want := []string{reconfigConfig("  admins: [alice]\n"), reconfigConfig("  admins: [bob]\n")}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("config.reloaded events:\n%q\nwant\n%q", got, want)
	}
}

// TestReconfigRestartOnly: a file that changes keys only a restart
// applies (cycle_interval 20ms → 50ms, private_jobs false → true) beside
// the admins is refused with 400 naming both keys with their values, and
// nothing of it is applied: bob (the running file's administrator) still
// closes h1, carol (the new file's) still may not, and the log holds no
// new config.reloaded event. Put back to the running values, the same
// admins change is taken.
func TestReconfigRestartOnly(t *testing.T) {
	rs := startReconfigServer(t, "  admins: [bob]\n")
	st, msg := rs.reload("bob", "  admins: [carol]\n  cycle_interval: 50ms\n  private_jobs: true\n")
	wantStatus(t, "the reload", st, http.StatusBadRequest, msg)
	want := rs.config + ": not reloaded: server.cycle_interval (20ms to 50ms), server.private_jobs (false to true) only change when the server restarts (xce serve); restart it, or give the running value back to reload the rest (administrators and allow_root_jobs change at once)"
	if msg != want {
		t.Fatalf("refusal:\n%s\nwant\n%s", msg, want)
	}
	st, msg = rs.as("bob", http.MethodPost, "/v1/hosts/h1/close", nil, nil)
	wantStatus(t, "bob closes h1", st, http.StatusOK, msg)
	st, msg = rs.as("carol", http.MethodPost, "/v1/hosts/h1/open", nil, nil)
	wantStatus(t, "carol opens h1", st, http.StatusForbidden, msg)
	if n := len(rs.configEvents()); n != 1 {
		t.Fatalf("%d config.reloaded events, want 1 (the start's)", n)
	}
	// The running values written out are no change.
	st, msg = rs.reload("bob", "  admins: [carol]\n  cycle_interval: 20ms\n  private_jobs: false\n")
	wantStatus(t, "the reload with the running values", st, http.StatusOK, msg)
	st, msg = rs.as("carol", http.MethodPost, "/v1/hosts/h1/open", nil, nil)
	wantStatus(t, "carol opens h1 after", st, http.StatusOK, msg)
}

// TestReconfigAllowRoot: allow_root_jobs changes at once: an agent of h1
// gets the start of root's first job with allow_root false; once the
// file says allow_root_jobs: true and is reloaded, the start of root's
// next job carries allow_root true; false again, the third's false.
func TestReconfigAllowRoot(t *testing.T) {
	rs := startReconfigServer(t, "  admins: [bob]\n")
	var reg agent.RegisterReply
	if st, msg := rs.call(http.MethodPost, agent.PathRegister, rs.agent, agent.RegisterRequest{Name: "h1"}, &reg); st != http.StatusOK {
		t.Fatalf("register: %d %s", st, msg)
	}
	var seq uint64
	startOf := func(what string) agent.Order {
		t.Helper()
		var rep api.SubmitReply
		job := api.JobRequest{TasksMin: 1, TasksMax: 1, Command: []string{"true"}, Cwd: "/"}
		if st, msg := rs.as("root", http.MethodPost, "/v1/jobs", api.SubmitRequest{Jobs: []api.JobRequest{job}}, &rep); st != http.StatusOK {
			t.Fatalf("%s: submit: %d %s", what, st, msg)
		}
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); { // a hang guard only
			q := url.Values{"name": {"h1"}, "session": {reg.Session}, "after": {fmt.Sprint(seq)}, "wait_ms": {"1000"}}
			var orders agent.OrdersReply
			if st, msg := rs.call(http.MethodGet, agent.PathOrders+"?"+q.Encode(), rs.agent, nil, &orders); st != http.StatusOK {
				t.Fatalf("%s: poll: %d %s", what, st, msg)
			}
			for _, o := range orders.Orders {
				seq = max(seq, o.Seq)
				if o.Kind == agent.KindStart && o.Job == event.JobID(rep.IDs[0]) {
					return o
				}
			}
		}
		t.Fatalf("%s: no start order for job %d", what, rep.IDs[0])
		return agent.Order{}
	}
	if o := startOf("before"); o.AllowRoot {
		t.Fatalf("before the reload: %+v", o)
	}
	st, msg := rs.reload("bob", "  admins: [bob]\n  allow_root_jobs: true\n")
	wantStatus(t, "reload allow_root_jobs: true", st, http.StatusOK, msg)
	if o := startOf("allowed"); !o.AllowRoot {
		t.Fatalf("after allow_root_jobs: true: %+v", o)
	}
	st, msg = rs.reload("bob", "  admins: [bob]\n  allow_root_jobs: false\n")
	wantStatus(t, "reload allow_root_jobs: false", st, http.StatusOK, msg)
	if o := startOf("refused again"); o.AllowRoot {
		t.Fatalf("after allow_root_jobs: false: %+v", o)
	}
}
