package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/xce-sched/xce/cluster"
	"github.com/xce-sched/xce/internal/api"
	"github.com/xce-sched/xce/internal/client"
	"github.com/xce-sched/xce/internal/daemon"
	"github.com/xce-sched/xce/internal/proctest"
)

// envMain makes this test binary run `xce` with its arguments instead of
// the tests: the agents of TestRemoteAgents are real processes of it.
const envMain = "XCE_CLI_TEST_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(envMain) == "1" {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
		code := Run(ctx, os.Args[1:], os.Stdout, os.Stderr)
		stop()
		os.Exit(code)
	}
	os.Exit(m.Run())
}

// Every wait of these tests is bounded by one of these.
const (
	waitLong  = 20 * time.Second
	waitShort = 10 * time.Second
)

// rig is a server in this process (daemon.Serve over a 3-host
// configuration: h1, h2 and h3, 2 slots each; heartbeat timeout 1s, kill
// grace 2s) and the agent processes the test starts, in a temporary
// directory.
type rig struct {
	t       *testing.T
	dir     string
	data    string
	addr    string // the agents' address, kept across restarts
	cfg     *cluster.Cluster
	srv     *cluster.Server
	cancel  context.CancelFunc
	done    chan error
	log     *proctest.Buffer
	c       *client.Client
	agents  map[string]*agentProc
	leftPID []proctest.Proc // job processes that may outlive their agent
	// With TLS: the server's certificate and key, and the CA file the
	// agents get.
	cert, key, ca string
}

const rigConfig = `hosts:
  - {name: h1, slots: 2}
  - {name: h2, slots: 2}
  - {name: h3, slots: 2}
queues:
  - {name: normal, policy: firstfit}
server:
  heartbeat_timeout: 1s
  kill_grace: 2s
  cycle_interval: 10ms
  allow_root_jobs: true
`

// newRig starts the server; with tls, its listener serves TLS with a
// self-signed certificate (tls[0], tls[1]: certificate and key files).
func newRig(t *testing.T, tls ...string) *rig {
	t.Helper()
	return newRigOf(t, rigConfig, tls...)
}

// newRigOf is newRig over the configuration config.
func newRigOf(t *testing.T, config string, tls ...string) *rig {
	t.Helper()
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		t.Fatalf("PR_SET_CHILD_SUBREAPER: %v", err)
	}
	dir := t.TempDir()
	c, s, err := cluster.ParseConfig("rig.yaml", []byte(config))
	if err != nil {
		t.Fatal(err)
	}
	r := &rig{t: t, dir: dir, data: filepath.Join(dir, "data"), addr: "127.0.0.1:0", cfg: c, srv: s, log: &proctest.Buffer{},
		agents: map[string]*agentProc{}}
	if len(tls) == 2 {
		r.cert, r.key, r.ca = tls[0], tls[1], tls[0]
	}
	t.Cleanup(r.close)
	r.startServer()
	r.c = client.New(filepath.Join(r.data, "xce.sock"))
	return r
}

func (r *rig) startServer() {
	r.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan string, 1)
	r.cancel, r.done = cancel, make(chan error, 1)
	go func() {
		r.done <- daemon.Serve(ctx, daemon.Options{Cluster: r.cfg, Server: r.srv, DataDir: r.data, Listen: r.addr, TLSCert: r.cert, TLSKey: r.key,
			Logf:  func(f string, a ...any) { fmt.Fprintf(r.log, "server: "+f+"\n", a...) },
			Ready: func(_, addr string) { ready <- addr }})
	}()
	select {
	case r.addr = <-ready:
	case err := <-r.done:
		r.t.Fatalf("server: %v", err)
	case <-time.After(waitShort):
		r.t.Fatal("the server was not ready within 10 s")
	}
}

func (r *rig) stopServer() {
	r.t.Helper()
	if r.cancel == nil {
		return
	}
	r.cancel()
	r.cancel = nil
	select {
	case err := <-r.done:
		if err != nil {
			r.t.Errorf("server: %v", err)
		}
	case <-time.After(waitLong):
		r.t.Error("the server did not stop within 20 s")
	}
}

// close stops the agents (they kill their jobs), then the server, then
// kills and reaps whatever recorded job process is left.
func (r *rig) close() {
	for _, a := range r.agents {
		a.stop(r.t)
	}
	r.stopServer()
	for _, p := range r.leftPID {
		p.Kill(waitShort)
	}
	_ = unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0)
	if r.t.Failed() || os.Getenv("XCE_TEST_LOGS") != "" {
		r.t.Logf("server log:\n%s", r.log.String())
		for name, a := range r.agents {
			r.t.Logf("agent %s (pid %d) log:\n%s", name, a.pid, a.out.String())
		}
	}
}

// agentProc is an `xce agent` process of this test binary.
type agentProc struct {
	cmd  *exec.Cmd
	pid  int
	out  *proctest.Buffer
	done chan error // its exit, once
	err  error
	over bool
}

// runAgent starts `xce agent` with args after the server's address.
func (r *rig) runAgent(args ...string) *agentProc {
	r.t.Helper()
	server := []string{"agent", "--server", r.addr}
	if r.ca != "" {
		server = []string{"agent", "--server", "https://" + r.addr, "--ca", r.ca}
	}
	cmd := exec.Command(os.Args[0], append(server, args...)...)
	cmd.Env = append(os.Environ(), envMain+"=1")
	a := &agentProc{cmd: cmd, out: &proctest.Buffer{}, done: make(chan error, 1)}
	cmd.Stdout, cmd.Stderr = a.out, a.out
	if err := cmd.Start(); err != nil {
		r.t.Fatal(err)
	}
	a.pid = cmd.Process.Pid
	go func() { a.done <- cmd.Wait() }()
	return a
}

// startAgent starts the agent of host name (its directory is dir/agent-NAME).
func (r *rig) startAgent(name string) *agentProc {
	r.t.Helper()
	if old := r.agents[name]; old != nil {
		old.stop(r.t)
	}
	a := r.runAgent("--name", name, "--token-file", filepath.Join(r.data, "agent.token"), "--dir", filepath.Join(r.dir, "agent-"+name))
	r.agents[name] = a
	return a
}

// wait waits up to d for the agent to exit and returns its error.
func (a *agentProc) wait(t *testing.T, d time.Duration) error {
	t.Helper()
	if a.over {
		return a.err
	}
	select {
	case a.err = <-a.done:
		a.over = true
		return a.err
	case <-time.After(d):
		t.Fatalf("agent %d still runs after %v", a.pid, d)
		return nil
	}
}

// stop stops the agent with SIGTERM (it kills its jobs, with the server's
// 2 s grace), and with SIGKILL if it is still there after 20 s.
func (a *agentProc) stop(t *testing.T) {
	if a.over {
		return
	}
	_ = a.cmd.Process.Signal(syscall.SIGCONT) // in case the test stopped it
	_ = a.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case a.err = <-a.done:
	case <-time.After(waitLong):
		t.Errorf("agent %d did not stop within 20 s of SIGTERM", a.pid)
		_ = a.cmd.Process.Kill()
		a.err = <-a.done
	}
	a.over = true
}

// await polls cond every 20 ms until it holds, for at most d.
func (r *rig) await(what string, d time.Duration, cond func() bool) {
	r.t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			r.t.Fatalf("%s: not within %v", what, d)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (r *rig) jobs() map[int64]api.JobInfo {
	r.t.Helper()
	js, err := r.c.Jobs(context.Background(), "all", true, nil)
	if err != nil {
		r.t.Fatal(err)
	}
	out := map[int64]api.JobInfo{}
	for _, j := range js {
		out[j.ID] = j
	}
	return out
}

func (r *rig) hosts() map[string]string {
	r.t.Helper()
	hs, err := r.c.Hosts(context.Background())
	if err != nil {
		r.t.Fatal(err)
	}
	out := map[string]string{}
	for _, h := range hs {
		out[h.Name] = h.Status
	}
	return out
}

// submit submits one job running cmd with tasks slots, -R resreq, -o
// out (in the test directory), rerunnable with rerun.
func (r *rig) submit(tasks int, resreq, out string, rerun bool, cmd ...string) int64 {
	r.t.Helper()
	rep, err := r.c.Submit(context.Background(), []api.JobRequest{{TasksMin: tasks, TasksMax: tasks, ResReq: resreq,
		Command: cmd, Cwd: r.dir, Env: []string{"PATH=" + os.Getenv("PATH")}, Stdout: out, Rerunnable: rerun}})
	if err != nil {
		r.t.Fatal(err)
	}
	return rep.IDs[0]
}

// ended waits for job id to end and returns it.
func (r *rig) ended(id int64) api.JobInfo {
	r.t.Helper()
	var j api.JobInfo
	r.await(fmt.Sprintf("job %d ends", id), waitLong, func() bool {
		j = r.jobs()[id]
		return j.State == "DONE" || j.State == "EXIT"
	})
	return j
}

// running waits for job id to run (its start reported) and returns it.
func (r *rig) running(id int64) api.JobInfo {
	r.t.Helper()
	var j api.JobInfo
	r.await(fmt.Sprintf("job %d runs", id), waitLong, func() bool {
		j = r.jobs()[id]
		return j.State == "RUN" && j.PID != 0
	})
	return j
}

func (r *rig) read(name string) string {
	b, _ := os.ReadFile(filepath.Join(r.dir, name))
	return string(b)
}

// record records a job's process, so that the test kills it if it is
// left.
func (r *rig) record(pid int) proctest.Proc {
	r.t.Helper()
	p, err := proctest.Record(pid)
	if err != nil {
		r.t.Fatalf("pid %d: %v", pid, err)
	}
	r.leftPID = append(r.leftPID, p)
	return p
}

// agentCall sends one request of the agent protocol with token and
// returns the status and the body.
func (r *rig) agentCall(method, path, token string, in any) (int, string) {
	r.t.Helper()
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			r.t.Fatal(err)
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, "http://"+r.addr+path, body)
	if err != nil {
		r.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := (&http.Client{Timeout: waitShort}).Do(req)
	if err != nil {
		r.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, strings.TrimSpace(string(b))
}

var tokenRE = regexp.MustCompile(`^[0-9a-f]{64}\n$`)

// exitCode is a process's exit code from its Wait error (-1: no exit).
func exitCode(err error) int {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	if err == nil {
		return 0
	}
	return -1
}
