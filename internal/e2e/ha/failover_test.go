//go:build linux

// Package ha tests a replicated control plane (docs/ha.md) with real
// processes: three `xce serve --raft` members on loopback, each started
// and killed by the test by its own pid.
package ha

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/xce-sched/xce/internal/api"
	"github.com/xce-sched/xce/internal/client"
	"github.com/xce-sched/xce/internal/server"
	"github.com/xce-sched/xce/internal/state"
	"github.com/xce-sched/xce/internal/store"
	"github.com/xce-sched/xce/internal/testtls"
)

// xceBin is the xce binary TestMain built; skipAll, when set, is why
// every test skips instead.
var xceBin, skipAll string

// EnvBin, when set, is an xce binary to test instead of building one (a
// race-detector build, for instance).
const EnvBin = "XCE_HA_BIN"

func TestMain(m *testing.M) {
	if bin := os.Getenv(EnvBin); bin != "" {
		xceBin = bin
		os.Exit(m.Run())
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		if g := filepath.Join(runtime.GOROOT(), "bin", "go"); fileExists(g) {
			goTool, err = g, nil
		}
	}
	if err != nil {
		skipAll = "the go tool is not installed: these tests need it to build xce"
		os.Exit(m.Run())
	}
	dir, err := os.MkdirTemp("", "xce-ha-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "ha:", err)
		os.Exit(1)
	}
	// Another user runs the binary in TestForward.
	if err := os.Chmod(dir, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, "ha:", err)
		os.Exit(1)
	}
	xceBin = filepath.Join(dir, "xce")
	out, err := exec.Command(goTool, "build", "-o", xceBin, "github.com/xce-sched/xce/cmd/xce").CombinedOutput()
	code := 1
	if err != nil {
		fmt.Fprintf(os.Stderr, "ha: go build: %v\n%s", err, out)
	} else {
		code = m.Run()
	}
	os.RemoveAll(dir)
	os.Exit(code)
}

func fileExists(path string) bool { _, err := os.Stat(path); return err == nil }

// freeAddrs returns n loopback addresses whose ports were free a moment
// ago.
func freeAddrs(t *testing.T, n int) []string {
	t.Helper()
	var out []string
	var ls []net.Listener
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ls = append(ls, l)
		out = append(out, l.Addr().String())
	}
	for _, l := range ls {
		l.Close()
	}
	return out
}

// cluster is three members started by the test.
type cluster struct {
	t          *testing.T
	dir, conf  string
	raft, apis []string
	procs      []*exec.Cmd // nil: not running
	done       []chan struct{}
	// raftArgs, when set, gives member i's raft flags (default: --raft
	// its address --peers all three).
	raftArgs func(i int) []string
	// ca, when set, is the certificate (PEM) of every member's TLS
	// listener, for 127.0.0.1, and key its key: the members serve https
	// (useTLS).
	ca, key string
	// extra are flags every member is started with, after the others.
	extra []string
}

// useTLS makes the members serve TLS with one self-signed certificate
// for 127.0.0.1 (started after).
func (c *cluster) useTLS() {
	c.t.Helper()
	cert, key, _, err := testtls.SelfSigned(c.dir)
	if err != nil {
		c.t.Fatal(err)
	}
	c.ca, c.key = cert, key
}

// url returns member i's TCP address as a client names it.
func (c *cluster) url(i int) string {
	if c.ca != "" {
		return "https://" + c.apis[i]
	}
	return "http://" + c.apis[i]
}

// newCluster starts three members with the configuration text conf.
func newCluster(t *testing.T, confText string) *cluster {
	c := prepare(t, confText)
	for i := range 3 {
		c.start(i)
	}
	return c
}

// prepare returns the cluster newCluster starts, not started.
func prepare(t *testing.T, confText string) *cluster {
	if skipAll != "" {
		t.Skip(skipAll)
	}
	dir := t.TempDir()
	conf := filepath.Join(dir, "cluster.yaml")
	if err := os.WriteFile(conf, []byte(confText), 0o644); err != nil {
		t.Fatal(err)
	}
	addrs := freeAddrs(t, 6)
	c := &cluster{t: t, dir: dir, conf: conf, raft: addrs[:3], apis: addrs[3:], procs: make([]*exec.Cmd, 3), done: make([]chan struct{}, 3)}
	t.Cleanup(func() {
		for i := range c.procs {
			c.kill(i)
		}
	})
	return c
}

func (c *cluster) data(i int) string { return filepath.Join(c.dir, fmt.Sprint("m", i)) }

// start runs member i (again), its output in its data directory's log.
func (c *cluster) start(i int) {
	c.t.Helper()
	if err := os.MkdirAll(c.data(i), 0o755); err != nil {
		c.t.Fatal(err)
	}
	logf, err := os.OpenFile(filepath.Join(c.dir, fmt.Sprint("m", i, ".log")), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		c.t.Fatal(err)
	}
	defer logf.Close()
	raft := []string{"--raft", c.raft[i], "--peers", strings.Join(c.raft, ",")}
	if c.raftArgs != nil {
		raft = c.raftArgs(i)
	}
	args := append([]string{"serve", "--config", c.conf, "--data", c.data(i), "--listen", c.apis[i]}, raft...)
	if c.ca != "" {
		args = append(args, "--tls-cert", c.ca, "--tls-key", c.key)
	}
	args = append(args, c.extra...)
	cmd := exec.Command(xceBin, args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		c.t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	c.procs[i], c.done[i] = cmd, done
}

// kill sends SIGKILL to member i's process, the one the test started, and
// waits (at most 10 s) until it is reaped.
func (c *cluster) kill(i int) {
	if c.procs[i] == nil {
		return
	}
	_ = c.procs[i].Process.Signal(syscall.SIGKILL)
	select {
	case <-c.done[i]:
	case <-time.After(10 * time.Second):
		c.t.Errorf("member %d (pid %d) did not end", i, c.procs[i].Process.Pid)
	}
	c.procs[i] = nil
}

// stop sends SIGTERM to member i and waits (at most 10 s) for its end.
func (c *cluster) stop(i int) {
	_ = c.procs[i].Process.Signal(syscall.SIGTERM)
	select {
	case <-c.done[i]:
		c.procs[i] = nil
	case <-time.After(10 * time.Second):
		c.t.Errorf("member %d did not stop on SIGTERM", i)
		c.kill(i)
	}
}

func (c *cluster) sockets() string {
	var s []string
	for i := range 3 {
		s = append(s, filepath.Join(c.data(i), "xce.sock"))
	}
	return strings.Join(s, ",")
}

// dial opens a client of every member's socket.
func (c *cluster) dial() *client.Client {
	c.t.Helper()
	cl, err := client.Open(c.sockets(), "")
	if err != nil {
		c.t.Fatal(err)
	}
	return cl
}

// leader waits (at most 15 s) for a member to say it leads, and returns
// its number.
func (c *cluster) leader(cl *client.Client) int {
	c.t.Helper()
	for end := time.Now().Add(15 * time.Second); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		ms, _ := cl.Members(context.Background())
		for _, m := range ms {
			for i, r := range c.raft {
				if m.Role == "leader" && m.Raft == r && c.procs[i] != nil {
					return i
				}
			}
		}
	}
	c.t.Fatal("no leader within 15 s")
	return -1
}

// TestFailover submits jobs through the members' sockets (the client
// finds the leader), kills the leader with SIGKILL three times and
// restarts it, and checks that every acknowledged job exists exactly once
// with the ID it was acknowledged with, on every member: each one's local
// copy of the log folds to the same jobs. A token issued before the kills
// lists them over TCP after. A follower lists them too, and forwards a
// submit to the leader.
func TestFailover(t *testing.T) {
	c := newCluster(t, "hosts:\n  - {name: h1, slots: 4}\nqueues:\n  - {name: normal, policy: firstfit}\n")
	cl := c.dial()
	// A token issued through the first leader, presented over TCP to
	// whichever member leads later (the signing key is replicated).
	tok, err := cl.Token(context.Background(), "root", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	tokFile := filepath.Join(c.dir, "token")
	if err := os.WriteFile(tokFile, []byte(tok.Token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var urls []string
	for _, a := range c.apis {
		urls = append(urls, "http://"+a)
	}
	tcp, err := client.Open(strings.Join(urls, ","), tokFile)
	if err != nil {
		t.Fatal(err)
	}
	acked := map[int64]string{} // job ID → its name
	submit := func(round int) {
		for k := range 4 {
			name := fmt.Sprintf("r%d-%d", round, k)
			ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
			rep, err := cl.Submit(ctx, []api.JobRequest{{Name: name, TasksMin: 1, TasksMax: 1, Command: []string{"/bin/true"}, Cwd: "/"}})
			cancel()
			if err != nil {
				t.Fatalf("submit %s: %v", name, err)
			}
			acked[rep.IDs[0]] = name
		}
	}
	const kills = 3
	for round := range kills {
		c.leader(cl)
		submit(round)
		l := c.leader(cl)
		c.kill(l)
		submit(round + 100) // through the next leader
		c.start(l)
	}
	c.leader(cl)
	// The TCP client may ask a follower, whose state may be a moment
	// behind (docs/ha.md): it catches up.
	var jobs []api.JobInfo
	for end := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		jobs, err = tcp.Jobs(context.Background(), "all", true, nil)
		if err == nil && len(jobs) == 8*kills || time.Now().After(end) {
			break
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) != 8*kills || len(acked) != 8*kills {
		t.Fatalf("%d jobs, %d acknowledged, want %d", len(jobs), len(acked), 8*kills)
	}
	for _, j := range jobs {
		if acked[j.ID] != j.Name {
			t.Errorf("job %d is %q, acknowledged as %q", j.ID, j.Name, acked[j.ID])
		}
	}
	// A follower answers reads from its replicated state, and refuses
	// writes.
	l := c.leader(cl)
	f := (l + 1) % 3
	fc, err := client.Open(filepath.Join(c.data(f), "xce.sock"), "")
	if err != nil {
		t.Fatal(err)
	}
	var fjobs []api.JobInfo
	for end := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		fjobs, err = fc.Jobs(context.Background(), "all", true, nil)
		if err == nil && len(fjobs) == len(jobs) || time.Now().After(end) {
			break
		}
	}
	if err != nil || len(fjobs) != len(jobs) {
		t.Fatalf("follower %d's jobs: %d, %v; want %d", f, len(fjobs), err, len(jobs))
	}
	for i := range jobs {
		if fjobs[i].ID != jobs[i].ID || fjobs[i].Name != jobs[i].Name {
			t.Fatalf("follower %d's job %d: %+v, the leader's %+v", f, i, fjobs[i], jobs[i])
		}
	}
	// A submit through the follower goes to the leader: acknowledged with
	// the next ID, and listed by the follower at once (it waited to have
	// applied it before answering).
	rep, err := fc.Submit(context.Background(), []api.JobRequest{{Name: "via-follower", TasksMin: 1, TasksMax: 1, Command: []string{"/bin/true"}, Cwd: "/"}})
	if err != nil || len(rep.IDs) != 1 || rep.IDs[0] != int64(8*kills+1) {
		t.Fatalf("a submit through follower %d: %+v, %v; want job %d", f, rep, err, 8*kills+1)
	}
	if js, err := fc.Jobs(context.Background(), "all", true, []int64{rep.IDs[0]}); err != nil || len(js) != 1 || js[0].Name != "via-follower" {
		t.Fatalf("the follower lists its forwarded job as %+v, %v", js, err)
	}
	acked[rep.IDs[0]] = "via-follower"
	// Every member's copy of the log, once all caught up, folds to the
	// same jobs.
	time.Sleep(time.Second)
	for i := range 3 {
		c.stop(i)
	}
	var want []string
	for i := range 3 {
		log, err := store.Open(filepath.Join(c.data(i), "events.db"), store.Options{})
		if err != nil {
			t.Fatal(err)
		}
		st, err := server.Recover(log)
		log.Close()
		if err != nil {
			t.Fatalf("member %d: %v", i, err)
		}
		var names []string
		for _, j := range st.Jobs {
			if j.State != state.Pend {
				t.Errorf("member %d: job %d is %s, want PEND (no agent runs)", i, j.Job, j.State)
			}
			names = append(names, j.Name)
		}
		if len(names) != len(acked) {
			t.Errorf("member %d holds %d jobs, want %d", i, len(names), len(acked))
		}
		if i == 0 {
			want = names
		} else if fmt.Sprint(names) != fmt.Sprint(want) {
			t.Errorf("member %d's jobs %v, member 0's %v", i, names, want)
		}
	}
}
