//go:build linux

package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/xce-sched/xce/internal/api"
)

// Test users and the supplementary group user 1 is given; each is made
// when missing and removed at the end only if this test made it.
const (
	testUser1, testUser2, testGroup = "xcee2e1", "xcee2e2", "xcee2eg"
)

// testAccount is a user of the machine the tests run commands as.
type testAccount struct {
	name     string
	uid, gid uint32
	groups   []uint32 // every group of the user: primary, supplementary, sorted
}

// tool runs an account tool (useradd, ...), retrying while another
// process holds the user database's lock.
func tool(t *testing.T, name string, args ...string) {
	t.Helper()
	var out []byte
	var err error
	for range 10 {
		if out, err = exec.Command(name, args...).CombinedOutput(); err == nil {
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("%s %q: %v: %s", name, args, err, out)
}

// ensureGroup makes group name unless it exists (then removed at the end).
func ensureGroup(t *testing.T, name string) uint32 {
	t.Helper()
	if _, err := user.LookupGroup(name); err != nil {
		tool(t, "groupadd", name)
		t.Cleanup(func() { tool(t, "groupdel", name) })
	}
	g, err := user.LookupGroup(name)
	if err != nil {
		t.Fatal(err)
	}
	id, _ := strconv.ParseUint(g.Gid, 10, 32)
	return uint32(id)
}

// ensureUser makes user name, with a group of its own and the
// supplementary groups given, unless it exists (then removed at the end).
func ensureUser(t *testing.T, name string, groups ...string) testAccount {
	t.Helper()
	if _, err := user.Lookup(name); err != nil {
		args := []string{"--no-create-home", "--shell", "/usr/sbin/nologin", "--user-group"}
		if len(groups) > 0 {
			args = append(args, "--groups", strings.Join(groups, ","))
		}
		tool(t, "useradd", append(args, name)...)
		t.Cleanup(func() { tool(t, "userdel", name) })
	}
	u, err := user.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	gids, err := u.GroupIds()
	if err != nil {
		t.Fatal(err)
	}
	uid, _ := strconv.ParseUint(u.Uid, 10, 32)
	gid, _ := strconv.ParseUint(u.Gid, 10, 32)
	a := testAccount{name: name, uid: uint32(uid), gid: uint32(gid), groups: []uint32{uint32(gid)}}
	for _, g := range gids {
		n, _ := strconv.ParseUint(g, 10, 32)
		if !slices.Contains(a.groups, uint32(n)) {
			a.groups = append(a.groups, uint32(n))
		}
	}
	slices.Sort(a.groups)
	return a
}

// home makes a directory owned by a, mode 0700, under dir.
func (a testAccount) home(t *testing.T, dir string) string {
	t.Helper()
	h := filepath.Join(dir, a.name)
	if err := os.Mkdir(h, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(h, int(a.uid), int(a.gid)); err != nil {
		t.Fatal(err)
	}
	return h
}

// client runs xce as a, in its home, with the groups a login gives it.
func (a testAccount) client(socket, home string) client {
	return client{env: clientEnv(socket, home, "sec"), dir: home,
		cred: &syscall.Credential{Uid: a.uid, Gid: a.gid, Groups: a.groups}}
}

// TestSecurity runs a dev server as root and xce as two unprivileged test
// users (made with useradd when missing). It proves that a user's job runs
// with that user's uid and groups (the job's `id -u` and `id -G`, the
// owner of its output, /proc of the running job); that a user cannot kill
// another user's job (exit 1, "only its owner or an administrator", the job
// runs on) while its owner and root can; that a user cannot close or open
// a host; that a user cannot have a job write into another user's
// directory or through a symbolic link to a file it may not write; and
// that the event log is readable by root only. Then rawRequests.
func TestSecurity(t *testing.T) {
	needBinary(t)
	if os.Geteuid() != 0 {
		t.Skip("the security tests need root: they make two test users and run xce as them")
	}
	gid := ensureGroup(t, testGroup)
	u1 := ensureUser(t, testUser1, testGroup)
	u2 := ensureUser(t, testUser2)
	if !slices.Contains(u1.groups, gid) || slices.Contains(u1.groups, 0) || u1.uid == 0 || u2.uid == 0 {
		t.Fatalf("test users: %+v, %+v; want user 1 in group %s (%d), neither root", u1, u2, testGroup, gid)
	}
	dir := tempDir(t)
	data := filepath.Join(dir, "data")
	socket := filepath.Join(data, "xce.sock")
	home1, home2 := u1.home(t, dir), u2.home(t, dir)
	rootEnv := clientEnv(socket, dir, "sec")
	t.Cleanup(func() { endOrphans(5 * time.Second) })
	srv := startServer(t, data, dir, rootEnv)
	root, c1, c2 := client{env: rootEnv, dir: dir}, u1.client(socket, home1), u2.client(socket, home2)
	host, _ := os.Hostname()

	// Job 1, user 1's: who it runs as.
	c1.submitJSON(t, "-o", "id.%J", "--", "sh", "-c", "id -u; id -G")
	js := root.await(t, "job 1 ends", 15*time.Second, func(js []api.JobInfo) bool { return len(js) == 1 && js[0].State != "PEND" && js[0].State != "RUN" })
	if j := js[0]; j.State != "DONE" || j.User != testUser1 {
		t.Errorf("job 1: %s, user %q; want DONE, %q", j.State, j.User, testUser1)
	}
	out, err := os.ReadFile(filepath.Join(home1, "id.1"))
	if lines := strings.Fields(string(out)); err != nil || len(lines) < 2 || lines[0] != fmt.Sprint(u1.uid) || !sameGroups(lines[1:], u1.groups) {
		t.Errorf("job 1 printed %q (%v); want uid %d, groups %v", out, err, u1.uid, u1.groups)
	}
	if fi, err := os.Stat(filepath.Join(home1, "id.1")); err != nil || fi.Sys().(*syscall.Stat_t).Uid != u1.uid {
		t.Errorf("job 1's output is not user 1's: %v", err)
	}

	// Job 2, user 1's, runs on: user 2 may not kill it, user 1 may.
	c1.submitJSON(t, "--", "sleep", "30")
	js = root.await(t, "job 2 runs", 15*time.Second, func(js []api.JobInfo) bool { return len(js) == 2 && js[1].PID != 0 })
	pid := js[1].PID
	if status := procStatus(pid); status["Uid"] != ids(u1.uid, 4) || status["Gid"] != ids(u1.gid, 4) || !sameGroups(strings.Fields(status["Groups"]), u1.groups) {
		t.Errorf("job 2's process %d: Uid %q, Gid %q, Groups %q; want %d and %d everywhere, groups %v",
			pid, status["Uid"], status["Gid"], status["Groups"], u1.uid, u1.gid, u1.groups)
	}
	want := fmt.Sprintf("xce: job <2>: job 2 is %s's: only its owner or an administrator may kill it\nxce: not every job was killed\n", testUser1)
	if r := c2.run("kill", "2"); r.code != 1 || r.out != "" || r.errOut != want {
		t.Errorf("user 2 kills user 1's job: %v; want exit 1 and %q", r, want)
	}
	time.Sleep(300 * time.Millisecond)
	if js = root.jobs(t); js[1].State != "RUN" || js[1].PID != pid || !alive(pid) {
		t.Errorf("job 2 after user 2's kill: %s, pid %d (alive %v); want RUN, pid %d", js[1].State, js[1].PID, alive(pid), pid)
	}
	if r := c1.run("kill", "2"); r.code != 0 || r.out != "Job <2> is being terminated\n" {
		t.Errorf("user 1 kills its job: %v", r)
	}
	js = root.await(t, "job 2 ends", 15*time.Second, func(js []api.JobInfo) bool { return js[1].State == "EXIT" })
	if j := js[1]; j.EndReason != "killed" || j.Signal != "SIGINT" || j.ExitCode != 130 {
		t.Errorf("job 2 killed: exit %d, %q, %q; want 130, SIGINT, killed", j.ExitCode, j.Signal, j.EndReason)
	}
	checkKilledBy(t, root, 2, testUser1)

	// Job 3, user 2's, killed by root (an administrator).
	c2.submitJSON(t, "--", "sleep", "30")
	root.await(t, "job 3 runs", 15*time.Second, func(js []api.JobInfo) bool { return len(js) == 3 && js[2].PID != 0 })
	if r := root.run("kill", "3"); r.code != 0 || r.out != "Job <3> is being terminated\n" {
		t.Errorf("root kills user 2's job: %v", r)
	}
	js = root.await(t, "job 3 ends", 15*time.Second, func(js []api.JobInfo) bool { return js[2].State == "EXIT" })
	if js[2].EndReason != "killed" {
		t.Errorf("job 3: %q, want killed", js[2].EndReason)
	}
	checkKilledBy(t, root, 3, "root")

	// Hosts are the administrators'.
	for _, verb := range []string{"close", "open"} {
		if r := c1.run("host", verb, host); r.code != 1 || r.errOut != "xce: only an administrator may close or open a host\n" {
			t.Errorf("user 1: host %s: %v; want exit 1, refused", verb, r)
		}
	}
	if r := root.run("hosts", "--json"); r.code != 0 || !strings.Contains(r.out, `"status": "ok"`) {
		t.Errorf("hosts after user 1's close: %v; want ok", r)
	}

	// Output files are opened as the user: not in user 2's directory, not
	// through a link to root's file. Jobs 4 and 5 never start.
	target := filepath.Join(dir, "root-file")
	if err := os.WriteFile(target, []byte("root\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, filepath.Join(home1, "link")); err != nil {
		t.Fatal(err)
	}
	c1.submitJSON(t, "-o", filepath.Join(home2, "stolen"), "--", "echo", "pwned")
	c1.submitJSON(t, "-o", "link", "--", "echo", "pwned")
	js = root.await(t, "jobs 4 and 5 end", 15*time.Second, func(js []api.JobInfo) bool {
		return len(js) == 5 && js[3].State == "EXIT" && js[4].State == "EXIT"
	})
	for _, j := range js[3:] {
		if j.ExitCode != -1 || !strings.HasPrefix(j.EndReason, "not started: ") || !strings.Contains(j.EndReason, "permission denied") {
			t.Errorf("job %d: exit %d, %q; want -1, not started: permission denied", j.ID, j.ExitCode, j.EndReason)
		}
	}
	if _, err := os.Lstat(filepath.Join(home2, "stolen")); err == nil {
		t.Error("user 1's job created a file in user 2's directory")
	}
	if b, _ := os.ReadFile(target); string(b) != "root\n" {
		t.Errorf("root's file now holds %q", b)
	}
	if fi, err := os.Stat(filepath.Join(data, "events.db")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("events.db (users' commands and environments): %v, %v; want mode 0600", fi.Mode(), err)
	}
	srv.stop(t)
}

// TestRawRequests sends the requests the CLI never sends straight to the
// socket (net/http, as the test's user), while a job runs, and proves
// that each is refused with its status and a JSON error and that none
// changes the jobs, hosts or queues: a malformed body 400, an unknown
// field (a forged "uid") 400, a body of exactly 8 MiB 400 (read whole,
// then refused as "no job"), a JSON value over 8 MiB 413, a bad job ID
// 400, an unknown route 404.
func TestRawRequests(t *testing.T) {
	needBinary(t)
	dir := tempDir(t)
	data := filepath.Join(dir, "data")
	socket := filepath.Join(data, "xce.sock")
	env := clientEnv(socket, dir, "raw")
	t.Cleanup(func() { endOrphans(5 * time.Second) })
	srv := startServer(t, data, dir, env)
	c := client{env: env, dir: dir}
	c.submitJSON(t, "--", "sleep", "30")
	c.await(t, "job 1 runs", 15*time.Second, func(js []api.JobInfo) bool { return len(js) == 1 && js[0].PID != 0 })
	hc := unixHTTP(socket)
	snapshot := func() string {
		var all []string
		for _, p := range []string{"/v1/jobs?user=all&all=1", "/v1/hosts", "/v1/queues"} {
			code, _, body := do(t, hc, "GET", p, nil)
			if code != 200 {
				t.Fatalf("GET %s: %d %s", p, code, body)
			}
			all = append(all, body)
		}
		return strings.Join(all, "")
	}
	before := snapshot()
	pad := func(s string, n int) []byte { return append([]byte(s), bytes.Repeat([]byte(" "), n-len(s))...) }
	for _, c := range []struct {
		what, method, path string
		body               []byte
		status             int
		msg                string // in the JSON error
	}{
		{"malformed body", "POST", "/v1/jobs", []byte(`{"jobs": [`), 400, "body: "},
		{"unknown field", "POST", "/v1/jobs", []byte(`{"jobs": [{"command": ["id"], "cwd": "/", "tasks_min": 1, "tasks_max": 1, "uid": 0}]}`), 400, `unknown field "uid"`},
		{"8 MiB", "POST", "/v1/jobs", pad(`{"jobs": []}`, api.MaxBody), 400, "no job"},
		{"a value over 8 MiB", "POST", "/v1/jobs", []byte(`{"jobs": [{"name": "` + strings.Repeat("a", api.MaxBody) + `"}]}`), 413, "the body is over 8388608 bytes"},
		{"bad job ID", "POST", "/v1/jobs/x/kill", nil, 400, `bad job ID "x"`},
	} {
		code, ctype, body := do(t, hc, c.method, c.path, c.body)
		var e struct{ Error string }
		if code != c.status || ctype != "application/json" || json.Unmarshal([]byte(body), &e) != nil || !strings.Contains(e.Error, c.msg) {
			t.Errorf("%s: %d %q %q; want %d, a JSON error with %q", c.what, code, ctype, body, c.status, c.msg)
		}
	}
	if code, _, body := do(t, hc, "GET", "/v1/nothing", nil); code != 404 {
		t.Errorf("unknown route: %d %q; want 404", code, body)
	}
	if after := snapshot(); after != before {
		t.Errorf("the refused requests changed the state:\n%s\n%s", before, after)
	}
	srv.stop(t)
}

// unixHTTP is an HTTP client of the socket.
func unixHTTP(socket string) *http.Client {
	return &http.Client{Timeout: 20 * time.Second, Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", socket)
		}}}
}

// do sends one request and returns the status, content type and body.
func do(t *testing.T, hc *http.Client, method, path string, body []byte) (int, string, string) {
	t.Helper()
	req, err := http.NewRequest(method, "http://xce"+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Content-Type"), string(b)
}

// checkKilledBy checks that job id's history says it was killed by by.
func checkKilledBy(t *testing.T, c client, id int64, by string) {
	t.Helper()
	r := c.run("history", "--json", strconv.FormatInt(id, 10))
	var h api.HistoryReply
	if r.code != 0 || json.Unmarshal([]byte(r.out), &h) != nil {
		t.Fatalf("history %d: %v", id, r)
	}
	if !slices.ContainsFunc(h.Events, func(e api.HistoryEvent) bool { return e.Type == "job.killed" && e.What == "killed by "+by }) {
		t.Errorf("job %d's history lacks %q: %+v", id, "killed by "+by, h.Events)
	}
}

// procStatus returns the fields of /proc/PID/status, tabs as spaces.
func procStatus(pid int) map[string]string {
	m := map[string]string{}
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return m
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), ":"); ok {
			m[k] = strings.Join(strings.Fields(v), " ")
		}
	}
	return m
}

// ids is id n times, as /proc/PID/status writes Uid and Gid.
func ids(id uint32, n int) string {
	return strings.TrimSpace(strings.Repeat(fmt.Sprint(id)+" ", n))
}

// sameGroups says whether the group IDs written in words are groups.
func sameGroups(words []string, groups []uint32) bool {
	var got []uint32
	for _, w := range words {
		n, err := strconv.ParseUint(w, 10, 32)
		if err != nil {
			return false
		}
		if !slices.Contains(got, uint32(n)) {
			got = append(got, uint32(n))
		}
	}
	slices.Sort(got)
	return slices.Equal(got, groups)
}
