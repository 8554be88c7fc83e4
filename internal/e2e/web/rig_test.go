package web

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
	"os/user"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/xce-sched/xce/internal/api"
	"github.com/xce-sched/xce/internal/proctest"
)

// Every wait is bounded by one of these: generous, since CI runs these
// tests under -race beside other packages on 2 cores.
const (
	waitShort = 20 * time.Second
	waitLong  = 2 * time.Minute
)

var (
	binDir    string
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

var errNoGo = errors.New("the go tool is not available")

// xce returns an xce binary built once from this module (under the race
// detector when the tests are); it skips tb without a go tool.
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
		if binDir, err = os.MkdirTemp("", "xce-e2e-web-"); err != nil {
			buildErr = err
			return
		}
		xceBin = filepath.Join(binDir, "xce")
		args := []string{"build", "-o", xceBin}
		if raceEnabled {
			args = append(args, "-race")
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

// proc is a child process of a test: the server or an agent.
type proc struct {
	name string
	cmd  *exec.Cmd
	rec  proctest.Proc
	out  *proctest.Buffer
	done chan struct{}
	err  error
}

// stop sends p SIGTERM and waits up to d for it to exit, then kills it.
func (p *proc) stop(tb testing.TB, d time.Duration) {
	select {
	case <-p.done:
		return
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(d):
		tb.Errorf("%s (pid %d) still runs %v after SIGTERM: killed", p.name, p.cmd.Process.Pid, d)
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// rig is an `xce serve --config` on loopback, its agents, and the
// commands run against it, in a temporary directory.
type rig struct {
	tb     testing.TB
	bin    string
	dir    string
	data   string
	work   string
	sock   string
	addr   string // the TCP listener: agents, users with tokens, browsers
	me     string // the user the tests run as: an administrator here
	server *proc
	agents []*proc
	jobs   []proctest.Proc // job processes seen, ended at the close if left
	closed bool
}

var servingRE = regexp.MustCompile(`^xce: serving on (\S+), agents on (\S+)$`)

// newRig writes config (its `server:` section gets the test's user as
// an administrator and lets root's jobs run), starts the server on it
// and an agent for each of hosts, and waits until they are ok.
func newRig(tb testing.TB, config string, hosts ...string) *rig {
	tb.Helper()
	bin := xce(tb)
	u, err := user.Current()
	if err != nil {
		tb.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "xce-web-")
	if err != nil {
		tb.Fatal(err)
	}
	// Other users' commands read the binary and the work directory.
	if err := os.Chmod(dir, 0o755); err != nil {
		tb.Fatal(err)
	}
	r := &rig{tb: tb, bin: bin, dir: dir, data: filepath.Join(dir, "data"), work: filepath.Join(dir, "work"), me: u.Username}
	tb.Cleanup(r.close)
	if err := os.MkdirAll(r.work, 0o777); err != nil {
		tb.Fatal(err)
	}
	_ = os.Chmod(r.work, 0o777)
	config += fmt.Sprintf("server:\n  admins: [%q]\n  allow_root_jobs: true\n", u.Username)
	cfg := filepath.Join(dir, "cluster.yaml")
	if err := os.WriteFile(cfg, []byte(config), 0o644); err != nil {
		tb.Fatal(err)
	}
	r.startServer(cfg)
	for _, h := range hosts {
		r.startAgent(h)
	}
	r.await("every agent's host ok", waitShort, func() bool {
		var rep api.HostsReply
		r.jsonOut(&rep, "hosts", "--json")
		ok := map[string]bool{}
		for _, h := range rep.Hosts {
			ok[h.Name] = h.Status == "ok"
		}
		for _, h := range hosts {
			if !ok[h] {
				return false
			}
		}
		return true
	})
	return r
}

func (r *rig) start(name string, args ...string) *proc {
	r.tb.Helper()
	p := &proc{name: name, out: &proctest.Buffer{}, done: make(chan struct{})}
	p.cmd = exec.Command(r.bin, args...)
	p.cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "GORACE=atexit_sleep_ms=0"}
	return p
}

// startServer starts the server on cfg, with its TCP listener on a free
// loopback port, and reads the socket and the address it says it serves.
func (r *rig) startServer(cfg string) {
	r.tb.Helper()
	p := r.start("server", "serve", "--config", cfg, "--data", r.data, "--listen", "127.0.0.1:0")
	stderr, err := p.cmd.StderrPipe()
	if err != nil {
		r.tb.Fatal(err)
	}
	p.cmd.Stdout = p.out
	if err := p.cmd.Start(); err != nil {
		r.tb.Fatal(err)
	}
	p.rec, _ = proctest.Record(p.cmd.Process.Pid)
	r.server = p
	ready := make(chan []string, 1)
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			fmt.Fprintln(p.out, sc.Text())
			if m := servingRE.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case ready <- m[1:]:
				default:
				}
			}
		}
		_, _ = io.Copy(p.out, stderr)
	}()
	go func() {
		<-copied
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
}

// startAgent starts the agent of host name.
func (r *rig) startAgent(name string) {
	r.tb.Helper()
	p := r.start("agent "+name, "agent", "--server", r.addr, "--name", name,
		"--token-file", filepath.Join(r.data, "agent.token"), "--dir", filepath.Join(r.dir, "agent-"+name))
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	if err := p.cmd.Start(); err != nil {
		r.tb.Fatal(err)
	}
	p.rec, _ = proctest.Record(p.cmd.Process.Pid)
	go func() { p.err = p.cmd.Wait(); close(p.done) }()
	r.agents = append(r.agents, p)
}

// close stops the agents (they kill their jobs) and the server, ends
// the job processes recorded if any is left, removes the directory, and
// logs the processes' output if the test failed.
func (r *rig) close() {
	if r.closed {
		return
	}
	r.closed = true
	for _, a := range r.agents {
		a.stop(r.tb, waitShort)
	}
	if r.server != nil {
		r.server.stop(r.tb, waitShort)
	}
	for _, p := range r.jobs {
		p.Kill(waitShort)
	}
	if r.tb.Failed() || os.Getenv("XCE_TEST_LOGS") != "" {
		if r.server != nil {
			r.tb.Logf("server log:\n%s", r.server.out.String())
		}
		for _, a := range r.agents {
			r.tb.Logf("%s log:\n%s", a.name, a.out.String())
		}
	}
	if err := os.RemoveAll(r.dir); err != nil {
		r.tb.Error(err)
	}
}

// run runs `xce args...` in the work directory with env added (the
// socket by default), bounded by waitShort; it returns the exit code and
// the output.
func (r *rig) run(env []string, args ...string) (int, string, string) {
	r.tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitShort)
	defer cancel()
	cmd := exec.CommandContext(ctx, r.bin, args...)
	cmd.Dir = r.work
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "XCE_SERVER=" + r.sock, "GORACE=atexit_sleep_ms=0"}, env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		return ee.ExitCode(), out.String(), errb.String()
	case err != nil:
		r.tb.Fatalf("xce %s: %v", strings.Join(args, " "), err)
	}
	return 0, out.String(), errb.String()
}

// xce runs `xce args...` on the socket, as the test's user; it must exit 0.
func (r *rig) xce(args ...string) string {
	r.tb.Helper()
	code, out, errOut := r.run(nil, args...)
	if code != 0 {
		r.tb.Fatalf("xce %s: exit %d: %s%s", strings.Join(args, " "), code, out, errOut)
	}
	return out
}

// as runs `xce args...` over TCP with token, as the user it names.
func (r *rig) as(token string, args ...string) string {
	r.tb.Helper()
	code, out, errOut := r.run([]string{"XCE_SERVER=http://" + r.addr, "XCE_TOKEN=" + token}, args...)
	if code != 0 {
		r.tb.Fatalf("xce %s (with a token): exit %d: %s%s", strings.Join(args, " "), code, out, errOut)
	}
	return out
}

func (r *rig) jsonOut(v any, args ...string) {
	r.tb.Helper()
	if err := json.Unmarshal([]byte(r.xce(args...)), v); err != nil {
		r.tb.Fatalf("xce %s: %v", strings.Join(args, " "), err)
	}
}

// token makes a token for user (`xce token create`, as an administrator).
func (r *rig) token(user string) string {
	r.tb.Helper()
	return strings.TrimSpace(r.xce("token", "create", "--user", user))
}

// submit submits a job with args (through env's server) and returns its ID.
var submittedRE = regexp.MustCompile(`^Job <(\d+)> is submitted`)

func (r *rig) submit(token string, args ...string) string {
	r.tb.Helper()
	var out string
	if token == "" {
		out = r.xce(append([]string{"submit"}, args...)...)
	} else {
		out = r.as(token, append([]string{"submit"}, args...)...)
	}
	m := submittedRE.FindStringSubmatch(out)
	if m == nil {
		r.tb.Fatalf("xce submit %q: %q", args, out)
	}
	return m[1]
}

// job returns job id (`xce jobs -a --json ID`).
func (r *rig) job(id string) api.JobInfo {
	r.tb.Helper()
	var rep api.JobsReply
	r.jsonOut(&rep, "jobs", "-a", "-u", "all", "--json", id)
	if len(rep.Jobs) != 1 {
		r.tb.Fatalf("job %s: %+v", id, rep.Jobs)
	}
	return rep.Jobs[0]
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

// running waits until job id runs with its process started, and records
// that process to end it at the close if it is left.
func (r *rig) running(id string) api.JobInfo {
	r.tb.Helper()
	var j api.JobInfo
	r.await("job "+id+" runs", waitShort, func() bool { j = r.job(id); return j.State == "RUN" && j.PID > 0 })
	if p, err := proctest.Record(j.PID); err == nil {
		r.jobs = append(r.jobs, p)
	}
	return j
}

// others returns two accounts of this machine that are neither root, nor
// the test's user, nor administrators here: the users the dashboard is
// tried as (tokens name them; they run nothing). It skips tb when the
// machine has fewer.
func others(tb testing.TB, me string) (string, string) {
	tb.Helper()
	var out []string
	for _, name := range []string{"nobody", "daemon", "bin", "sys", "games", "man", "lp", "mail"} {
		u, err := user.Lookup(name)
		if err != nil || u.Uid == "0" || name == me {
			continue
		}
		out = append(out, name)
		if len(out) == 2 {
			return out[0], out[1]
		}
	}
	tb.Skipf("this machine has fewer than two accounts among nobody, daemon, bin, sys, games, man, lp, mail to use as dashboard users: %v", out)
	return "", ""
}
