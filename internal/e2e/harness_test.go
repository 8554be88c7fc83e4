//go:build linux

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/xce-sched/xce/internal/api"
	"github.com/xce-sched/xce/internal/event"
	"github.com/xce-sched/xce/internal/proctest"
	"github.com/xce-sched/xce/internal/state"
	"github.com/xce-sched/xce/internal/store"
)

// xceBin is the xce binary TestMain built; skipAll, when set, is why
// every test skips instead.
var xceBin, skipAll string

// envBin, when set, is an xce binary to test instead of building one.
const envBin = "XCE_E2E_BIN"

func TestMain(m *testing.M) { os.Exit(testMain(m)) }

func testMain(m *testing.M) int {
	if bin := os.Getenv(envBin); bin != "" {
		xceBin = bin
		return runTests(m)
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		if g := filepath.Join(runtime.GOROOT(), "bin", "go"); fileExists(g) {
			goTool, err = g, nil
		}
	}
	if err != nil {
		skipAll = "the go tool is not installed: the end-to-end tests need it to build xce"
		return m.Run()
	}
	dir, err := os.MkdirTemp("", "xce-e2e-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	// Other users run the binary in the security tests.
	if err := os.Chmod(dir, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	xceBin = filepath.Join(dir, "xce")
	args := []string{"build", "-o", xceBin}
	if raceBuild {
		args = append(args, "-race")
	}
	build := exec.Command(goTool, append(args, "github.com/xce-sched/xce/cmd/xce")...)
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "e2e: go build: %v\n%s", err, out)
		return 1
	}
	return runTests(m)
}

// runTests runs the tests as the subreaper of what they start: the jobs a
// killed server leaves behind are reparented to this process rather than
// to init, so they can be found, ended and reaped.
func runTests(m *testing.M) int {
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		fmt.Fprintln(os.Stderr, "e2e: PR_SET_CHILD_SUBREAPER:", err)
		return 1
	}
	code := m.Run()
	if left := endOrphans(5 * time.Second); len(left) > 0 {
		fmt.Fprintf(os.Stderr, "e2e: processes %v did not end\n", left)
		code = 1
	}
	return code
}

func needBinary(t *testing.T) {
	t.Helper()
	if skipAll != "" {
		t.Skip(skipAll)
	}
}

// knownDefect skips a regression test of a known defect unless
// XCE_E2E_KNOWN_DEFECTS=1.

func fileExists(path string) bool { _, err := os.Stat(path); return err == nil }

// The processes this test binary started and has not reaped yet. A
// process that is this binary's child but not in pids is an orphan
// reparented to it (the subreaper), which endOrphans may reap.
var children = struct {
	sync.Mutex
	pids map[int]bool
}{pids: map[int]bool{}}

// child is a started process; done is closed once it is reaped.
type child struct {
	cmd  *exec.Cmd
	pid  int
	done chan struct{}
	err  error // Wait's
}

func spawn(cmd *exec.Cmd) (*child, error) {
	children.Lock()
	defer children.Unlock()
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	c := &child{cmd: cmd, pid: cmd.Process.Pid, done: make(chan struct{})}
	children.pids[c.pid] = true
	go func() {
		c.err = cmd.Wait()
		children.Lock()
		delete(children.pids, c.pid)
		children.Unlock()
		close(c.done)
	}()
	return c, nil
}

// signalWait sends sig to c (unless it is nil) and waits up to d for it
// to be reaped; at the deadline it sends SIGKILL and waits again.
func (c *child) signalWait(sig syscall.Signal, d time.Duration) bool {
	if sig != 0 {
		_ = unix.Kill(c.pid, sig)
	}
	select {
	case <-c.done:
		return true
	case <-time.After(d):
		_ = unix.Kill(c.pid, unix.SIGKILL)
		<-c.done
		return false
	}
}

// result is how an xce command ended.
type result struct {
	code        int
	out, errOut string
}

func (r result) String() string {
	return fmt.Sprintf("exit %d, stdout %q, stderr %q", r.code, r.out, r.errOut)
}

// client runs xce commands: with env only, in dir, as cred (nil: as the
// test).
type client struct {
	env  []string
	dir  string
	cred *syscall.Credential
}

// clientEnv is the environment of the commands: nothing of the test's
// own but PATH, so jobs inherit a known environment.
func clientEnv(socket, home, mark string) []string {
	path := os.Getenv("PATH")
	if path == "" {
		path = "/usr/bin:/bin"
	}
	// GORACE: a binary built with -race otherwise sleeps 1 s at exit.
	return []string{"PATH=" + path, "HOME=" + home, "LANG=C", "XCE_SERVER=" + socket, "XCE_E2E_MARK=" + mark, "GORACE=atexit_sleep_ms=0"}
}

// run runs `xce args...`, bounded at 20 s (then killed: exit -1).
func (c client) run(args ...string) result {
	cmd := exec.Command(xceBin, args...)
	cmd.Env, cmd.Dir = c.env, c.dir
	if c.cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: c.cred}
	}
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	p, err := spawn(cmd)
	if err != nil {
		return result{code: -1, errOut: err.Error()}
	}
	if !p.signalWait(0, 20*time.Second) {
		return result{code: -1, out: out.String(), errOut: errOut.String() + " (killed after 20 s)"}
	}
	code := 0
	var ee *exec.ExitError
	if errors.As(p.err, &ee) {
		code = ee.ExitCode()
	} else if p.err != nil {
		code = -1
	}
	return result{code: code, out: out.String(), errOut: errOut.String()}
}

// jobs returns every job (`xce jobs -a -u all --json`).
func (c client) jobs(t *testing.T) []api.JobInfo {
	t.Helper()
	r := c.run("jobs", "-a", "-u", "all", "--json")
	var rep api.JobsReply
	if r.code != 0 {
		t.Fatalf("xce jobs: %v", r)
	}
	if err := json.Unmarshal([]byte(r.out), &rep); err != nil {
		t.Fatalf("xce jobs: %v: %s", err, r.out)
	}
	return rep.Jobs
}

// await polls the jobs until ok says yes, for at most d.
func (c client) await(t *testing.T, what string, d time.Duration, ok func([]api.JobInfo) bool) []api.JobInfo {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		js := c.jobs(t)
		if ok(js) {
			return js
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v: %+v", what, d, js)
		}
		time.Sleep(30 * time.Millisecond)
	}
}

// server is a running `xce serve --dev --data DATA`.
type server struct {
	data, socket string
	p            *child
	stderr       *proctest.Buffer
}

// startServer starts a dev server on data and waits (at most 15 s) until
// it says it serves, which it does once its host is registered and the
// jobs an earlier run left running are ended. The server is killed at
// the end of the test if still running.
func startServer(t *testing.T, data, dir string, env []string) *server {
	t.Helper()
	s := spawnServer(t, data, dir, env)
	deadline := time.After(15 * time.Second)
	for !strings.Contains(s.stderr.String(), "xce: serving on ") {
		select {
		case <-s.p.done:
			t.Fatalf("xce serve exited (%v): %s", s.p.err, s.stderr.String())
		case <-deadline:
			t.Fatalf("xce serve is not serving after 15 s: %s", s.stderr.String())
		case <-time.After(5 * time.Millisecond):
		}
	}
	return s
}

// spawnServer starts a dev server on data and returns at once.
func spawnServer(t *testing.T, data, dir string, env []string) *server {
	t.Helper()
	cmd := exec.Command(xceBin, "serve", "--dev", "--data", data)
	s := &server{data: data, socket: filepath.Join(data, "xce.sock"), stderr: &proctest.Buffer{}}
	cmd.Env, cmd.Dir, cmd.Stderr = env, dir, s.stderr
	p, err := spawn(cmd)
	if err != nil {
		t.Fatal(err)
	}
	s.p = p
	t.Cleanup(func() { s.p.signalWait(unix.SIGKILL, 10*time.Second) })
	return s
}

// kill9 kills the server with SIGKILL and waits until it is reaped.
func (s *server) kill9(t *testing.T) {
	t.Helper()
	if !s.p.signalWait(unix.SIGKILL, 10*time.Second) {
		t.Fatalf("server %d not reaped 10 s after SIGKILL", s.p.pid)
	}
	s.checkRaces(t)
}

// checkRaces fails the test if the server (built with -race) reported a
// data race.
func (s *server) checkRaces(t *testing.T) {
	t.Helper()
	if out := s.stderr.String(); strings.Contains(out, "WARNING: DATA RACE") {
		t.Errorf("the server met a data race:\n%s", out)
	}
}

// stop stops the server with SIGTERM, as an operator would, and checks
// that it exits 0 within 20 s.
func (s *server) stop(t *testing.T) {
	t.Helper()
	if !s.p.signalWait(unix.SIGTERM, 20*time.Second) {
		t.Fatalf("server %d did not stop within 20 s of SIGTERM: %s", s.p.pid, s.stderr.String())
	}
	if s.p.err != nil {
		t.Errorf("server exited: %v: %s", s.p.err, s.stderr.String())
	}
	s.checkRaces(t)
}

// readLog reads the event log of a stopped server: every event, and the
// state they fold into (state.Apply checks each event against the job's
// life: a second start of an attempt, for one, is refused).
func readLog(t *testing.T, data string) (*state.State, []event.Event) {
	t.Helper()
	s, err := store.Open(filepath.Join(data, "events.db"), store.Options{LockTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	st := state.New()
	var evs []event.Event
	err = s.Read(1, func(e event.Event) error {
		evs = append(evs, e)
		return st.Apply(e)
	})
	if err != nil {
		t.Fatalf("the event log does not fold: %v", err)
	}
	return st, evs
}

// proc is a process as /proc shows it.
type proc struct {
	pid, ppid int
	state     byte  // R, S, Z, ...
	job       int64 // XCE_JOBID in its environment (jobProcesses)
}

// stat reads /proc/PID/stat.
func stat(pid int) (proc, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return proc{}, false
	}
	i := bytes.LastIndexByte(b, ')')
	f := strings.Fields(string(b[i+1:]))
	if i < 0 || len(f) < 2 {
		return proc{}, false
	}
	ppid, _ := strconv.Atoi(f[1])
	return proc{pid: pid, ppid: ppid, state: f[0][0]}, true
}

func pids() []int {
	ents, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range ents {
		if pid, err := strconv.Atoi(e.Name()); err == nil {
			out = append(out, pid)
		}
	}
	return out
}

// jobProcesses returns the live processes of jobs submitted with mark:
// those whose environment holds XCE_E2E_MARK=mark and XCE_JOBID.
func jobProcesses(mark string) []proc {
	var out []proc
	for _, pid := range pids() {
		env, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
		if err != nil || !bytes.Contains(env, []byte("\x00XCE_E2E_MARK="+mark+"\x00")) {
			continue
		}
		var job int64
		for _, kv := range bytes.Split(env, []byte{0}) {
			if v, ok := strings.CutPrefix(string(kv), "XCE_JOBID="); ok {
				job, _ = strconv.ParseInt(v, 10, 64)
			}
		}
		if p, ok := stat(pid); ok && job > 0 && p.state != 'Z' {
			p.job = job
			out = append(out, p)
		}
	}
	return out
}

// reapOrphans reaps the orphans reparented to this process that have
// exited, and returns those still running.
func reapOrphans() []int {
	children.Lock()
	defer children.Unlock()
	var running []int
	me := os.Getpid()
	for _, pid := range pids() {
		p, ok := stat(pid)
		if !ok || p.ppid != me || children.pids[pid] {
			continue
		}
		if p.state == 'Z' {
			var ws unix.WaitStatus
			_, _ = unix.Wait4(pid, &ws, unix.WNOHANG, nil)
			continue
		}
		running = append(running, pid)
	}
	return running
}

// endOrphans kills (SIGKILL, with their process groups) and reaps the
// orphans: the processes of jobs whose server was killed. It returns those
// still there after d.
func endOrphans(d time.Duration) []int {
	deadline := time.Now().Add(d)
	for {
		left := reapOrphans()
		if len(left) == 0 || time.Now().After(deadline) {
			return left
		}
		for _, pid := range left {
			_ = unix.Kill(-pid, unix.SIGKILL) // a job's leader leads its group
			_ = unix.Kill(pid, unix.SIGKILL)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// alive says whether pid is a process that has not exited.
func alive(pid int) bool {
	p, ok := stat(pid)
	return ok && p.state != 'Z'
}

// tempDir returns a new directory that every user may enter (the test
// users must reach the socket), removed at the end of the test.
func tempDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "xce-e2e-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := os.RemoveAll(dir); err != nil {
			t.Error(err)
		}
	})
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// withTimeout is a context for raw requests.
func withTimeout() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), 20*time.Second)
}
