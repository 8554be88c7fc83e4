package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/xce-sched/xce/internal/api"
	"github.com/xce-sched/xce/internal/proctest"
)

// runner runs an xce command: exit code, standard output, standard error.
type runner = func(args ...string) (int, string, string)

// devJobs returns `xce jobs -a --json [args...]`'s jobs, through run.
func devJobs(t *testing.T, run runner, args ...string) []api.JobInfo {
	t.Helper()
	_, out, _ := run(append([]string{"jobs", "-a", "--json"}, args...)...)
	var rep api.JobsReply
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	return rep.Jobs
}

// awaitJobs polls devJobs until ok holds of the jobs, and returns them;
// it fails t after timeout.
func awaitJobs(t *testing.T, run runner, what string, timeout time.Duration, ok func([]api.JobInfo) bool) []api.JobInfo {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		js := devJobs(t, run)
		if ok(js) {
			return js
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v: %+v", what, timeout, js)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// serveDev runs `xce serve --dev` in this process, in a temporary
// directory that becomes the working directory, with XCE_SERVER set to its
// socket; it returns the directory and a runner of xce commands (exit
// code, standard output, standard error). The server stops, and is
// checked to stop cleanly, when the test ends.
func serveDev(t *testing.T) (dir string, run runner) {
	return serveIn(t, func(ctx context.Context, data string, errOut *bytes.Buffer) int {
		return Run(ctx, []string{"serve", "--dev", "--data", data}, &bytes.Buffer{}, errOut)
	})
}

// serveIn is serveDev with the server that serve runs (until ctx ends,
// with its data directory data, writing errors to errOut; it returns the
// exit code).
func serveIn(t *testing.T, serve func(ctx context.Context, data string, errOut *bytes.Buffer) int) (dir string, run runner) {
	dir = t.TempDir()
	data := filepath.Join(dir, "data")
	socket := filepath.Join(data, "xce.sock")
	t.Setenv("XCE_SERVER", socket)
	t.Chdir(dir)
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan int, 1)
	var serveErr bytes.Buffer
	go func() { served <- serve(ctx, data, &serveErr) }()
	t.Cleanup(func() {
		cancel()
		select {
		case code := <-served:
			if code != ExitOK {
				t.Errorf("serve exited %d: %s", code, serveErr.String())
			}
		case <-time.After(15 * time.Second):
			t.Error("serve did not stop within 15 s")
		}
	})
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := os.Stat(socket); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no socket after 10 s: %s", serveErr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	return dir, func(args ...string) (int, string, string) {
		var out, errb bytes.Buffer
		code := Run(context.Background(), args, &out, &errb)
		return code, out.String(), errb.String()
	}
}

// TestServeDev runs `xce serve --dev` in this process and uses it as a
// user would: a 1-slot command that prints, a failing one, a long one
// killed with `xce kill`; `xce jobs -a --json` shows DONE, EXIT with exit
// code 3, and EXIT killed; a submit with an unknown resource exits 2 and
// stores nothing; the server stops cleanly when its context ends.
func TestServeDev(t *testing.T) {
	dir, run := serveDev(t)
	for _, args := range [][]string{
		{"submit", "-o", "out.%J", "--", "echo", "hello"},
		{"submit", "--", "sh", "-c", "exit 3"},
		{"submit", "--", "sleep", "60"},
	} {
		if code, out, errs := run(args...); code != ExitOK || !strings.HasSuffix(out, "is submitted to queue <normal>.\n") {
			t.Fatalf("%v: exit %d, %q %q", args, code, out, errs)
		}
	}
	if code, _, errs := run("submit", "-R", "rusage[gpu=1]", "--", "true"); code != ExitUsage || !strings.Contains(errs, `unknown resource "gpu"`) {
		t.Errorf("unknown resource: exit %d, %q", code, errs)
	}
	// A pack is taken all or none: a line the server refuses (an unknown
	// resource) stores nothing, not even the good lines before it.
	pack := filepath.Join(dir, "jobs.pack")
	if err := os.WriteFile(pack, []byte("-n 1 true\n-R rusage[gpu=1] true\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errs := run("submit", "-pack", pack); code != ExitUsage || !strings.Contains(errs, `unknown resource "gpu"`) {
		t.Errorf("bad pack: exit %d, %q", code, errs)
	}
	await := func(what string, ok func([]api.JobInfo) bool) []api.JobInfo {
		return awaitJobs(t, run, what, 15*time.Second, ok)
	}
	await("jobs 1 and 2 end, job 3 runs", func(js []api.JobInfo) bool {
		return len(js) == 3 && js[0].State == "DONE" && js[1].State == "EXIT" && js[2].PID != 0
	})
	if err := os.WriteFile(pack, []byte("true\n-J second sh -c 'exit 0'\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, out, errs := run("submit", "--json", "-pack", pack); code != ExitOK || strings.Join(strings.Fields(out), "") != `{"ids":[4,5]}` {
		t.Errorf("good pack: exit %d, %q %q", code, out, errs)
	}
	await("the pack's jobs end", func(js []api.JobInfo) bool { return len(js) == 5 && js[3].State == "DONE" && js[4].State == "DONE" })
	if code, out, errs := run("kill", "3"); code != ExitOK || out != "Job <3> is being terminated\n" {
		t.Errorf("kill: exit %d, %q %q", code, out, errs)
	}
	js := await("job 3 ends", func(js []api.JobInfo) bool { return js[2].State == "EXIT" })
	if js[1].ExitCode != 3 || js[2].EndReason != "killed" {
		t.Errorf("jobs %+v: want exit code 3 for job 2 and job 3 killed", js)
	}
	if code, _, _ := run("kill", "3"); code != ExitFailure {
		t.Errorf("killing an ended job: exit %d, want %d", code, ExitFailure)
	}
	if out, err := os.ReadFile(filepath.Join(dir, "out.1")); err != nil || string(out) != "hello\n" {
		t.Errorf("job 1's output %q (%v)", out, err)
	}
	if code, out, _ := run("hosts", "--json"); code != ExitOK || !strings.Contains(out, `"status": "ok"`) {
		t.Errorf("hosts: exit %d, %s", code, out)
	}
	_, hist, _ := run("history", "1")
	for _, want := range []string{"Job <1>:", "submitted by ", "dispatched by cycle ", "started on ", "attempt 1 ended, exit code 0"} {
		if !strings.Contains(hist, want) {
			t.Errorf("history 1 lacks %q:\n%s", want, hist)
		}
	}
	if code, out, _ := run("queues", "--json"); code != ExitOK || !strings.Contains(out, `"name": "normal"`) || !strings.Contains(out, `"pend": 0`) {
		t.Errorf("queues: exit %d, %s", code, out)
	}

	// A closed host takes no new job (the only one: NoHostMatch); opened
	// again, the job runs. The test runs as its user; only root and the
	// administrators may close a host.
	host, _ := os.Hostname()
	if os.Getuid() != 0 {
		if code, _, _ := run("host", "close", host); code != ExitFailure {
			t.Errorf("host close by a non-administrator: exit %d, want %d", code, ExitFailure)
		}
		return
	}
	if code, out, errs := run("token", "create", "--user", "root", "--ttl", "1h"); code != ExitOK || strings.Count(out, ".") != 2 {
		t.Errorf("token create: exit %d, %q %q", code, out, errs)
	}
	if code, _, errs := run("token", "create", "--user", "root", "--ttl", "9000h"); code != ExitUsage || !strings.Contains(errs, "at most") {
		t.Errorf("token create for too long: exit %d, %q", code, errs)
	}
	if code, _, _ := run("token", "create", "--user", "no-such-user-xce"); code != ExitUsage {
		t.Errorf("token create for an unknown user: exit %d, want %d", code, ExitUsage)
	}
	if code, out, errs := run("host", "close", host); code != ExitOK {
		t.Fatalf("host close: exit %d, %q %q", code, out, errs)
	}
	if code, _, _ := run("host", "close", "no-such-host"); code != ExitFailure {
		t.Errorf("closing an unknown host: exit %d, want %d", code, ExitFailure)
	}
	run("submit", "--", "true")
	await("job 6 pends on the closed host", func(js []api.JobInfo) bool {
		return len(js) == 6 && js[5].State == "PEND" && js[5].Reason == "NoHostMatch"
	})
	want := "Job <6>, user <root>, queue <normal>: PENDING REASON: NoHostMatch\n    closed: 1 host\n"
	if code, out, _ := run("jobs", "-p"); code != ExitOK || out != want {
		t.Errorf("jobs -p: exit %d, %q, want %q", code, out, want)
	}
	if _, out, _ := run("jobs", "-l", "6"); !strings.Contains(out, "Status <PEND>") || !strings.Contains(out, "PENDING REASON: NoHostMatch") {
		t.Errorf("jobs -l 6:\n%s", out)
	}
	run("host", "open", host)
	await("job 6 runs once the host is open", func(js []api.JobInfo) bool { return js[5].State == "DONE" })
}

// TestReconfig runs `xce serve --config FILE --data DIR` (no agent: its
// host stays unavail) and reloads its configuration: a second queue
// appears and a job submitted to it is taken; a file with an error is
// refused with exit 2 and changes nothing. Root only (an administrator).
func TestReconfig(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("reconfig needs an administrator: run as root")
	}
	dir := t.TempDir()
	config := filepath.Join(dir, "cluster.yaml")
	write := func(text string) {
		if err := os.WriteFile(config, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("hosts: [{name: h1, slots: 4}]\nqueues: [{name: normal}]\nserver: {private_jobs: true}\n")
	data := filepath.Join(dir, "data")
	t.Setenv("XCE_SERVER", filepath.Join(data, "xce.sock"))
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan int, 1)
	var serveErr proctest.Buffer
	go func() {
		served <- Run(ctx, []string{"serve", "--config", config, "--data", data, "--listen", "127.0.0.1:0"}, &bytes.Buffer{}, &serveErr)
	}()
	defer func() {
		cancel()
		if code := <-served; code != ExitOK {
			t.Errorf("serve exited %d: %s", code, serveErr.String())
		}
	}()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := os.Stat(filepath.Join(data, "xce.sock")); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no socket: %s", serveErr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	run := func(args ...string) (int, string, string) {
		var out, errb bytes.Buffer
		code := Run(context.Background(), args, &out, &errb)
		return code, out.String(), errb.String()
	}
	if code, _, errs := run("submit", "-q", "long", "--", "true"); code != ExitUsage || !strings.Contains(errs, `queue "long" does not exist`) {
		t.Errorf("submit to a queue not yet configured: exit %d, %q", code, errs)
	}
	write("hosts: [{name: h1, slots: 4}]\nqueues: [{name: normal}, {name: long}]\nlimits: [{name: L, per_user: all, slots: 2}]\nserver: {private_jobs: true}\n")
	if code, out, errs := run("reconfig"); code != ExitOK || out != "Configuration reloaded\n" {
		t.Fatalf("reconfig: exit %d, %q %q", code, out, errs)
	}
	if code, out, errs := run("submit", "-q", "long", "--", "true"); code != ExitOK || out != "Job <1> is submitted to queue <long>.\n" {
		t.Errorf("submit to the new queue: exit %d, %q %q", code, out, errs)
	}
	// The live limits, once a cycle has considered job 1 (it pends: the
	// host is unavail): L's instance for root, with nothing used.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if _, out, _ := run("jobs", "-u", "all", "--json"); strings.Contains(out, `"reason": "NoHostMatch"`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("job 1 was not considered within 10 s")
		}
	}
	want := "NAME  USERS  QUEUES  HOSTS  PROJECTS  USED/MAX\nL     root   -       -      -         slots=0/2\n"
	if code, out, errs := run("limits"); code != ExitOK || out != want {
		t.Errorf("limits: exit %d, %q %q, want %q", code, out, errs, want)
	}
	write("hosts: [{name: h1, slots: 4}\n")
	if code, _, errs := run("reconfig"); code != ExitUsage || !strings.Contains(errs, "cluster.yaml:") {
		t.Errorf("reconfig of a broken file: exit %d, %q", code, errs)
	}
	if code, out, _ := run("queues", "--json"); code != ExitOK || !strings.Contains(out, `"name": "long"`) {
		t.Errorf("queues after a refused reload: %s", out)
	}

	// A client over TCP with a token acts as the token's user; without
	// one, or with a forged one, it is refused.
	var addr string
	for deadline := time.Now().Add(10 * time.Second); addr == ""; time.Sleep(10 * time.Millisecond) {
		if _, a, ok := strings.Cut(serveErr.String(), "agents on "); ok {
			a, _, _ = strings.Cut(a, "\n") // the line that says where the dashboard is follows
			addr = strings.TrimSpace(a)
		}
		if time.Now().After(deadline) {
			t.Fatalf("no TCP address in %q", serveErr.String())
		}
	}
	_, token, _ := run("token", "create", "--user", "root", "--ttl", "10m")
	t.Setenv("XCE_SERVER", "http://"+addr)
	t.Setenv("XCE_TOKEN", strings.TrimSpace(token))
	if code, out, errs := run("submit", "-q", "long", "--", "true"); code != ExitOK || out != "Job <2> is submitted to queue <long>.\n" {
		t.Errorf("submit over TCP: exit %d, %q %q", code, out, errs)
	}
	if code, out, _ := run("jobs", "-u", "root", "--json"); code != ExitOK || !strings.Contains(out, `"id": 2`) {
		t.Errorf("jobs over TCP: exit %d, %s", code, out)
	}
	t.Setenv("XCE_TOKEN", strings.TrimSpace(token)+"x")
	if code, _, errs := run("jobs"); code != ExitFailure || !strings.Contains(errs, "bad or expired token") {
		t.Errorf("a forged token: exit %d, %q", code, errs)
	}
	t.Setenv("XCE_TOKEN", "")
	if code, _, errs := run("jobs"); code != ExitFailure || !strings.Contains(errs, "needs a token") {
		t.Errorf("no token: exit %d, %q", code, errs)
	}

	// private_jobs: nobody (not an administrator) sees none of root's jobs.
	t.Setenv("XCE_SERVER", filepath.Join(data, "xce.sock"))
	_, nobody, _ := run("token", "create", "--user", "nobody", "--ttl", "10m")
	t.Setenv("XCE_SERVER", "http://"+addr)
	t.Setenv("XCE_TOKEN", strings.TrimSpace(nobody))
	if code, out, errs := run("jobs", "-a", "--json"); code != ExitOK || strings.Join(strings.Fields(out), "") != `{"jobs":[]}` {
		t.Errorf("nobody's jobs: exit %d, %q %q", code, out, errs)
	}
	if code, _, errs := run("jobs", "-u", "root"); code != ExitFailure || !strings.Contains(errs, "private") {
		t.Errorf("nobody asking for root's jobs: exit %d, %q", code, errs)
	}
	for _, args := range [][]string{{"jobs", "1"}, {"history", "1"}} {
		if code, _, errs := run(args...); code != ExitFailure || !strings.Contains(errs, "job 1 does not exist") {
			t.Errorf("nobody: %v: exit %d, %q", args, code, errs)
		}
	}
	if code, _, errs := run("kill", "1"); code != ExitFailure || !strings.Contains(errs, "only its owner") {
		t.Errorf("nobody killing root's job: exit %d, %q", code, errs)
	}
}
