package agents

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/xce-sched/xce/internal/api"
	"github.com/xce-sched/xce/internal/client"
	"github.com/xce-sched/xce/internal/event"
	"github.com/xce-sched/xce/internal/proctest"
	"github.com/xce-sched/xce/internal/store"
)

// Every wait of these tests is bounded by one of these: generous, since
// CI runs them under -race beside other packages' tests on 2 cores
// (TestMixedJobs' 500 jobs take about 30 s there, 6 s alone without it).
const (
	waitShort = 15 * time.Second
	waitLong  = 3 * time.Minute
)

var (
	binDir    string // the temporary directory of the xce binary
	buildOnce sync.Once
	xceBin    string
	buildErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		_ = os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// xce returns the path of an xce binary built once from this module's
// cmd/xce; it skips tb when the go tool is not there.
func xce(tb testing.TB) string {
	tb.Helper()
	buildOnce.Do(func() {
		gotool, err := exec.LookPath("go")
		if err != nil {
			if gotool, err = exec.LookPath(filepath.Join(runtime.GOROOT(), "bin", "go")); err != nil {
				buildErr = fmt.Errorf("%w: %w", errNoGo, err)
				return
			}
		}
		if binDir, err = os.MkdirTemp("", "xce-e2e-agents-"); err != nil {
			buildErr = err
			return
		}
		xceBin = filepath.Join(binDir, "xce")
		args := []string{"build", "-o", xceBin}
		if raceEnabled {
			args = append(args, "-race") // the server and the agents under the race detector too
		}
		cmd := exec.Command(gotool, append(args, "github.com/xce-sched/xce/cmd/xce")...)
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if errors.Is(buildErr, errNoGo) {
		tb.Skipf("no go tool to build xce with: %v", buildErr)
	}
	if buildErr != nil {
		tb.Fatal(buildErr)
	}
	return xceBin
}

var errNoGo = errors.New("the go tool is not available")

// rig is an `xce serve` process and its `xce agent` processes, all
// children of the test, in a temporary directory: DIR/data holds the
// server's data, DIR/agent-NAME each agent's directory, DIR/work the
// jobs' working directory (their submit directory). With
// XCE_E2E_AGENT_DIRS set, the agents' directories are in a temporary
// directory there instead (/dev/shm: the agents' journals on tmpfs).
type rig struct {
	tb        testing.TB
	bin       string
	dir       string
	agentBase string // where the agents' directories are
	data      string
	work      string
	sock      string
	addr      string // the agents' address
	server    *proc
	agents    map[string]*proc
	order     []string // agent names, in start order
	c         *client.Client
	pids      []proctest.Proc // job processes that may outlive their agents
	// When the test sent an agent SIGTERM, and when it had exited (Unix
	// nanoseconds).
	stopAt, stoppedAt int64
	logged, closed    bool
}

// proc is a child process of the test: the server or an agent.
type proc struct {
	name string
	cmd  *exec.Cmd
	out  *proctest.Buffer
	done chan struct{} // closed once it has exited
	err  error         // its Wait error, after done
}

// newRig writes config, starts `xce serve` on it and an agent for each
// of hosts, and waits until every host is ok. The test is made a child
// subreaper, so that a job's processes orphaned by a kill come back to
// it and can be reaped and checked.
func newRig(tb testing.TB, config string, hosts ...string) *rig {
	tb.Helper()
	bin := xce(tb)
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		tb.Fatalf("PR_SET_CHILD_SUBREAPER: %v", err)
	}
	dir := tb.TempDir()
	r := &rig{tb: tb, bin: bin, dir: dir, agentBase: dir, data: filepath.Join(dir, "data"), work: filepath.Join(dir, "work"), agents: map[string]*proc{}}
	tb.Cleanup(r.close)
	if base := os.Getenv("XCE_E2E_AGENT_DIRS"); base != "" {
		var err error
		if r.agentBase, err = os.MkdirTemp(base, "xce-e2e-agents-"); err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(func() { _ = os.RemoveAll(r.agentBase) })
	}
	if err := os.MkdirAll(filepath.Join(r.work, "out"), 0o755); err != nil {
		tb.Fatal(err)
	}
	cfg := filepath.Join(dir, "cluster.yaml")
	if err := os.WriteFile(cfg, []byte(config), 0o644); err != nil {
		tb.Fatal(err)
	}
	r.startServer(cfg)
	r.c = client.New(r.sock)
	for _, h := range hosts {
		r.startAgent(h)
	}
	r.await("every host ok", waitShort, func() bool {
		hs := r.hosts()
		for _, h := range hosts {
			if hs[h] != "ok" {
				return false
			}
		}
		return true
	})
	return r
}

var servingRE = regexp.MustCompile(`^xce: serving on (\S+), agents on (\S+)$`)

// startServer starts `xce serve --config cfg --data DATA --listen
// 127.0.0.1:0` and reads the socket and the agents' address from its
// "serving on" line.
func (r *rig) startServer(cfg string) {
	r.tb.Helper()
	p := &proc{name: "server", out: &proctest.Buffer{}, done: make(chan struct{})}
	p.cmd = exec.Command(r.bin, "serve", "--config", cfg, "--data", r.data, "--listen", "127.0.0.1:0")
	p.cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
	stderr, err := p.cmd.StderrPipe()
	if err != nil {
		r.tb.Fatal(err)
	}
	p.cmd.Stdout = p.out
	if err := p.cmd.Start(); err != nil {
		r.tb.Fatal(err)
	}
	r.server = p
	ready := make(chan []string, 1)
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			line := sc.Text()
			fmt.Fprintln(p.out, line)
			if m := servingRE.FindStringSubmatch(line); m != nil {
				select {
				case ready <- m[1:]:
				default:
				}
			}
		}
		_, _ = io.Copy(p.out, stderr)
	}()
	go func() {
		<-copied // Wait closes the pipe: read it all first
		p.err = p.cmd.Wait()
		close(p.done)
	}()
	select {
	case m := <-ready:
		r.sock, r.addr = m[0], m[1]
	case <-p.done:
		r.tb.Fatalf("xce serve exited: %v\n%s", p.err, p.out.String())
	case <-time.After(waitShort):
		r.tb.Fatalf("xce serve not serving within %v:\n%s", waitShort, p.out.String())
	}
	if want := filepath.Join(r.data, "xce.sock"); r.sock != want {
		r.tb.Fatalf("serving on %s, want %s", r.sock, want)
	}
}

// startAgent starts the agent of host name (directory DIR/agent-NAME).
func (r *rig) startAgent(name string) *proc {
	r.tb.Helper()
	p := &proc{name: "agent " + name, out: &proctest.Buffer{}, done: make(chan struct{})}
	p.cmd = exec.Command(r.bin, "agent", "--server", r.addr, "--name", name, "--token-file", filepath.Join(r.data, "agent.token"),
		"--dir", filepath.Join(r.agentBase, "agent-"+name))
	p.cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	if err := p.cmd.Start(); err != nil {
		r.tb.Fatal(err)
	}
	go func() { p.err = p.cmd.Wait(); close(p.done) }()
	if old := r.agents[name]; old != nil {
		r.order = append(r.order, name+" (earlier run)")
		r.agents[name+" (earlier run)"] = old
	}
	r.agents[name] = p
	r.order = append(r.order, name)
	return p
}

// stop sends p SIGTERM and waits for it to exit, up to d; then SIGKILL.
// It returns whether it exited by itself, with status 0.
func (p *proc) stop(tb testing.TB, d time.Duration) bool {
	select {
	case <-p.done:
		return p.err == nil
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
		return p.err == nil
	case <-time.After(d):
		tb.Errorf("%s (pid %d) still runs %v after SIGTERM: killed", p.name, p.cmd.Process.Pid, d)
		_ = p.cmd.Process.Kill()
		<-p.done
		return false
	}
}

// stopServer stops the server (SIGTERM), which must exit 0.
func (r *rig) stopServer() {
	r.tb.Helper()
	if !r.server.stop(r.tb, waitShort) {
		r.tb.Errorf("xce serve: %v", r.server.err)
	}
}

// close stops the agents (they kill their jobs), then the server, kills
// and reaps what is left of the recorded job processes, and logs the
// processes' output when the test failed (or XCE_TEST_LOGS is set).
func (r *rig) close() {
	if r.closed {
		return
	}
	r.closed = true
	for _, name := range r.order {
		r.agents[name].stop(r.tb, waitShort)
	}
	if r.server != nil {
		r.server.stop(r.tb, waitShort)
	}
	for _, p := range r.pids {
		p.Kill(waitShort)
	}
	_ = unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0)
	r.logs()
}

// logs logs the processes' output once, when the test failed or
// XCE_TEST_LOGS is set.
func (r *rig) logs() {
	if r.logged || (!r.tb.Failed() && os.Getenv("XCE_TEST_LOGS") == "") {
		return
	}
	r.logged = true
	if r.server != nil {
		r.tb.Logf("server log:\n%s", tail(r.server.out.String(), 200))
	}
	for _, name := range r.order {
		r.tb.Logf("agent %s log:\n%s", name, tail(r.agents[name].out.String(), 100))
	}
}

// tail returns the last n lines of s.
func tail(s string, n int) string {
	lines := strings.SplitAfter(s, "\n")
	if len(lines) > n {
		lines = append([]string{fmt.Sprintf("[%d lines]\n", len(lines)-n)}, lines[len(lines)-n:]...)
	}
	return strings.Join(lines, "")
}

// cpu returns the CPU time (user and system) the server, the agents
// themselves and their jobs (the children they reaped) have taken so
// far, from /proc/PID/stat.
func (r *rig) cpu() (server, agents, jobs time.Duration) {
	read := func(p *proc) (self, children time.Duration) {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.cmd.Process.Pid))
		if err != nil {
			return 0, 0
		}
		s := string(b)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:]) // f[0] is field 3
		tick := func(i int) time.Duration {
			n, _ := strconv.ParseInt(f[i-3], 10, 64)
			return time.Duration(n) * time.Second / 100 // USER_HZ
		}
		return tick(14) + tick(15), tick(16) + tick(17)
	}
	server, _ = read(r.server)
	for _, name := range r.order {
		self, children := read(r.agents[name])
		agents += self
		jobs += children
	}
	return server, agents, jobs
}

// await polls cond every 20 ms until it holds, for at most d.
func (r *rig) await(what string, d time.Duration, cond func() bool) {
	r.tb.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			r.tb.Fatalf("%s: not within %v", what, d)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (r *rig) hosts() map[string]string {
	r.tb.Helper()
	hs, err := r.c.Hosts(context.Background())
	if err != nil {
		r.tb.Fatal(err)
	}
	out := map[string]string{}
	for _, h := range hs {
		out[h.Name] = h.Status
	}
	return out
}

// jobs returns every job, by ID.
func (r *rig) jobs() map[int64]api.JobInfo {
	r.tb.Helper()
	js, err := r.c.Jobs(context.Background(), "all", true, nil)
	if err != nil {
		r.tb.Fatal(err)
	}
	out := make(map[int64]api.JobInfo, len(js))
	for _, j := range js {
		out[j.ID] = j
	}
	return out
}

// unfinished returns the number of pending and running jobs (from the
// queues: cheaper for the server than listing the jobs).
func (r *rig) unfinished() int {
	r.tb.Helper()
	qs, err := r.c.Queues(context.Background())
	if err != nil {
		r.tb.Fatal(err)
	}
	n := 0
	for _, q := range qs {
		n += q.Pend + q.Run
	}
	return n
}

// xce runs the xce command with args in the work directory, with
// XCE_SERVER set to the server's socket, and returns its stdout; it
// fails the test unless the command exits 0 within waitShort.
func (r *rig) xce(stdin string, args ...string) string {
	r.tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitShort)
	defer cancel()
	cmd := exec.CommandContext(ctx, r.bin, args...)
	cmd.Dir = r.work
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "XCE_SERVER=" + r.sock}
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		r.tb.Fatalf("xce %s: %v\n%s%s", strings.Join(args, " "), err, out.String(), errb.String())
	}
	return out.String()
}

// submitPack submits the pack file's lines with `xce submit --json
// -pack` and returns the jobs' IDs.
func (r *rig) submitPack(name string, lines []string) []int64 {
	r.tb.Helper()
	file := filepath.Join(r.dir, name)
	if err := os.WriteFile(file, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		r.tb.Fatal(err)
	}
	var rep struct {
		IDs []int64 `json:"ids"`
	}
	out := r.xce("", "submit", "--json", "-pack", file)
	if err := json.Unmarshal([]byte(out), &rep); err != nil || len(rep.IDs) != len(lines) {
		r.tb.Fatalf("xce submit -pack %s: %q (%v); want %d ids", name, out, err, len(lines))
	}
	return rep.IDs
}

// submit submits one job with `xce submit --json ARGS...` and returns
// its ID; the queue must be normal.
func (r *rig) submit(args ...string) int64 {
	r.tb.Helper()
	var rep struct {
		ID    int64  `json:"id"`
		Queue string `json:"queue"`
	}
	out := r.xce("", append([]string{"submit", "--json"}, args...)...)
	if err := json.Unmarshal([]byte(out), &rep); err != nil || rep.ID < 1 || rep.Queue != "normal" {
		r.tb.Fatalf("xce submit %v: %q (%v)", args, out, err)
	}
	return rep.ID
}

// events stops the server and returns its whole event log.
func (r *rig) events() []event.Event {
	r.tb.Helper()
	r.stopServer()
	log, err := store.Open(filepath.Join(r.data, "events.db"), store.Options{})
	if err != nil {
		r.tb.Fatal(err)
	}
	defer log.Close()
	var evs []event.Event
	if err := log.Read(1, func(e event.Event) error { evs = append(evs, e); return nil }); err != nil {
		r.tb.Fatal(err)
	}
	return evs
}

// record records a job's process (its pid and start time), so that the
// rig kills it at the end if it is still there.
func (r *rig) record(pid int) proctest.Proc {
	r.tb.Helper()
	p, err := proctest.Record(pid)
	if err != nil {
		r.tb.Fatalf("pid %d: %v", pid, err)
	}
	r.pids = append(r.pids, p)
	return p
}
