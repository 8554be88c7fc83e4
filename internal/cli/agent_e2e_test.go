package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/xce-sched/xce/internal/agent"
	"github.com/xce-sched/xce/internal/testtls"
)

// TestRemoteAgents runs a server in this process and `xce agent`
// processes (this test binary) for hosts h1 and h2, on loopback, and
// checks, in order:
//
//   - the agent token: DATA/agent.token, 64 hex digits, mode 0600; an
//     agent with another token is refused (401) and exits 1, as is one
//     for a host the configuration does not have (404); the TCP
//     listener answers 401 to the users' routes;
//   - jobs run on the right hosts, as children of that host's agent:
//     DONE, EXIT 3; a 2-host job runs its command once, on its first
//     host (h1), with both hosts in XCE_HOSTS; a kill through h2's
//     agent ends its job EXIT 130, SIGINT, "killed";
//   - the server restarts while a job runs: the agents register again,
//     the job keeps its process and is not started again, then ends DONE;
//   - h2's agent is killed (SIGKILL): h2 is unavail within the heartbeat
//     timeout and a margin; its job ends EXIT "host lost", its
//     rerunnable job pends and runs again, on h1; the agent restarted
//     kills what its first run left and h2 is ok again;
//   - h1's agent is stopped (SIGSTOP) past the heartbeat timeout: its
//     job ends EXIT "host lost"; resumed (SIGCONT), the agent registers
//     again listing the job, and kills it on the server's order;
//   - h2's agent stops (SIGTERM): it kills its jobs, which end EXIT "its
//     agent stopped" or run again elsewhere (rerunnable), and h2 is
//     unavail at once.
//
// The timings are logged.
func TestRemoteAgents(t *testing.T) {
	if testing.Short() {
		t.Skip("runs agent processes for about 15 s")
	}
	r := newRig(t)
	ctx := context.Background()
	begin := time.Now()

	// The token and the refusals.
	tokFile := filepath.Join(r.data, "agent.token")
	fi, err := os.Stat(tokFile)
	if err != nil || fi.Mode().Perm() != 0o600 || !tokenRE.MatchString(r.read(filepath.Join("data", "agent.token"))) {
		t.Fatalf("agent token: %v, mode %v, %q", err, fi.Mode(), r.read(filepath.Join("data", "agent.token")))
	}
	token := strings.TrimSpace(r.read(filepath.Join("data", "agent.token")))
	bad := filepath.Join(r.dir, "bad.token")
	if err := os.WriteFile(bad, []byte(strings.Repeat("0", 64)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		msg  string
	}{
		{[]string{"--name", "h1", "--token-file", bad, "--dir", filepath.Join(r.dir, "bad")}, "401 no or wrong agent token"},
		{[]string{"--name", "h9", "--token-file", tokFile, "--dir", filepath.Join(r.dir, "h9")}, `404 host "h9": not a host of the cluster's configuration`},
	} {
		a := r.runAgent(c.args...)
		if err := a.wait(t, waitShort); exitCode(err) != ExitFailure || !strings.Contains(a.out.String(), c.msg) {
			t.Errorf("agent %v: %v, output %q; want exit 1 and %q", c.args, err, a.out.String(), c.msg)
		}
	}
	// The agent token is not a user's token: a user route refuses it.
	if status, body := r.agentCall("GET", "/v1/jobs", token, nil); status != 401 || !strings.Contains(body, "bad or expired token") {
		t.Errorf("GET /v1/jobs on the TCP listener with the agent token: %d %s", status, body)
	}

	// Jobs on the right hosts.
	a1, a2 := r.startAgent("h1"), r.startAgent("h2")
	r.await("h1 and h2 ok", waitShort, func() bool { h := r.hosts(); return h["h1"] == "ok" && h["h2"] == "ok" })
	t.Logf("agents registered %v after the start", time.Since(begin).Round(time.Millisecond))
	j1 := r.submit(1, "select[hname==h1]", "j1.out", false, "sh", "-c", "echo $PPID $XCE_HOSTS")
	j2 := r.submit(1, "select[hname==h2]", "j2.out", false, "sh", "-c", "echo $PPID $XCE_HOSTS; exit 3")
	j3 := r.submit(2, "span[ptile=1]", "j3.out", false, "sh", "-c", "echo $PPID $XCE_HOSTS")
	if j := r.ended(j1); j.State != "DONE" || j.ExitCode != 0 || !reflect.DeepEqual(j.Hosts, map[string]int{"h1": 1}) {
		t.Errorf("job 1: %+v; want DONE on h1", j)
	}
	if j := r.ended(j2); j.State != "EXIT" || j.ExitCode != 3 || j.EndReason != "" || !reflect.DeepEqual(j.Hosts, map[string]int{"h2": 1}) {
		t.Errorf("job 2: %+v; want EXIT 3 on h2", j)
	}
	if j := r.ended(j3); j.State != "DONE" || !reflect.DeepEqual(j.Hosts, map[string]int{"h1": 1, "h2": 1}) {
		t.Errorf("job 3: %+v; want DONE on h1 and h2", j)
	}
	for name, want := range map[string]string{"j1.out": fmt.Sprintf("%d h1\n", a1.pid), "j2.out": fmt.Sprintf("%d h2\n", a2.pid),
		"j3.out": fmt.Sprintf("%d h1 h2\n", a1.pid)} {
		if got := r.read(name); got != want {
			t.Errorf("%s: %q, want %q (the agent's pid and XCE_HOSTS)", name, got, want)
		}
	}
	j4 := r.submit(1, "select[hname==h2]", "j4.out", false, "sleep", "60")
	r.record(r.running(j4).PID)
	if err := r.c.Kill(ctx, j4); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	if j := r.ended(j4); j.State != "EXIT" || j.ExitCode != 130 || j.Signal != "SIGINT" || j.EndReason != "killed" {
		t.Errorf("job 4: %+v; want EXIT 130 SIGINT killed", j)
	}
	t.Logf("a kill through h2's agent took %v", time.Since(killed).Round(time.Millisecond))

	// The server restarts while job 5 runs.
	j5 := r.submit(1, "select[hname==h1]", "j5.out", false, "sh", "-c", "echo $$ >> j5.out; while [ ! -e go5 ]; do sleep 0.05; done")
	p5 := r.running(j5).PID
	r.record(p5)
	r.stopServer()
	restarted := time.Now()
	r.startServer()
	r.await("both agents registered again", waitShort, func() bool {
		return strings.Count(a1.out.String(), "registered as h1") == 2 && strings.Count(a2.out.String(), "registered as h2") == 2
	})
	t.Logf("the agents registered again %v after the server restarted", time.Since(restarted).Round(time.Millisecond))
	if j := r.jobs()[j5]; j.State != "RUN" || j.PID != p5 || r.hosts()["h1"] != "ok" {
		t.Errorf("job 5 after the server restarted: %+v (hosts %v); want RUN, pid %d, on h1 ok", j, r.hosts(), p5)
	}
	if err := os.WriteFile(filepath.Join(r.dir, "go5"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if j := r.ended(j5); j.State != "DONE" || j.PID != p5 {
		t.Errorf("job 5: %+v; want DONE, pid %d", j, p5)
	}
	if got, want := r.read("j5.out"), fmt.Sprintf("%d\n", p5); got != want {
		t.Errorf("j5.out: %q, want %q: started once", got, want)
	}

	// h2's agent is killed.
	j6 := r.submit(1, "select[hname==h2]", "j6.out", false, "sleep", "60")
	j7 := r.submit(1, "{select[hname==h2]} || {select[hname==h1]}", "j7.out", true, "sh", "-c", "echo $$ $PPID >> j7.out; exec sleep 60")
	p6, p7 := r.record(r.running(j6).PID), r.record(r.running(j7).PID)
	if j := r.jobs()[j7]; !reflect.DeepEqual(j.Hosts, map[string]int{"h2": 1}) {
		t.Fatalf("job 7 runs on %v, want h2", j.Hosts)
	}
	firstA2 := a2.pid
	if err := a2.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	lost := time.Now()
	_ = a2.wait(t, waitShort)
	r.await("h2 unavail", waitShort, func() bool { return r.hosts()["h2"] == "unavail" })
	took := time.Since(lost)
	t.Logf("h2 unavail %v after its agent was killed (heartbeat timeout 1s)", took.Round(time.Millisecond))
	if took > 3*time.Second {
		t.Errorf("h2 unavail after %v: want within the heartbeat timeout (1s) and a margin", took)
	}
	if j := r.ended(j6); j.State != "EXIT" || j.EndReason != agent.ReasonHostLost || j.ExitCode != -1 {
		t.Errorf("job 6: %+v; want EXIT, host lost", j)
	}
	j := r.running(j7)
	if !reflect.DeepEqual(j.Hosts, map[string]int{"h1": 1}) || j.PID == p7.PID {
		t.Errorf("job 7 after h2 was lost: %+v; want it running again on h1", j)
	}
	p7b := r.record(j.PID)
	if p6.Gone() || p7.Gone() {
		t.Errorf("the killed agent's jobs (pids %d, %d) died with it; they are expected to outlive it", p6.PID, p7.PID)
	}
	a2 = r.startAgent("h2")
	r.await("h2 ok again", waitShort, func() bool { return r.hosts()["h2"] == "ok" })
	r.await("the first run's jobs killed", waitShort, func() bool { return p6.Gone() && p7.Gone() })
	if !strings.Contains(a2.out.String(), "ended 2 jobs an earlier run of this agent left") {
		t.Errorf("the restarted agent's log: %q", a2.out.String())
	}
	want7 := fmt.Sprintf("%d %d\n%d %d\n", p7.PID, firstA2, p7b.PID, a1.pid)
	js := r.jobs()
	if js[j6].State != "EXIT" || js[j6].EndReason != agent.ReasonHostLost || js[j7].State != "RUN" || js[j7].PID != p7b.PID {
		t.Errorf("after the agent came back: job 6 %+v, job 7 %+v", js[j6], js[j7])
	}
	if err := r.c.Kill(ctx, j7); err != nil {
		t.Fatal(err)
	}
	if j := r.ended(j7); j.State != "EXIT" || j.EndReason != "killed" {
		t.Errorf("job 7: %+v; want EXIT killed", j)
	}
	if got := r.read("j7.out"); got != want7 {
		t.Errorf("j7.out: %q, want %q (attempt 1 on h2, attempt 2 on h1)", got, want7)
	}

	// h1's agent stops answering (SIGSTOP) while job 8 runs: h1 is lost
	// and job 8 ends; when the agent goes on (SIGCONT) it registers with
	// job 8, which the server no longer runs: the agent kills it.
	j8 := r.submit(1, "select[hname==h1]", "j8.out", false, "sleep", "60")
	p8 := r.record(r.running(j8).PID)
	if err := syscall.Kill(a1.pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	r.await("h1 unavail", waitShort, func() bool { return r.hosts()["h1"] == "unavail" })
	if j := r.ended(j8); j.State != "EXIT" || j.EndReason != agent.ReasonHostLost {
		t.Errorf("job 8: %+v; want EXIT, host lost", j)
	}
	if p8.Gone() {
		t.Errorf("job 8's process %d died while its agent was stopped", p8.PID)
	}
	if err := syscall.Kill(a1.pid, syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	resumed := time.Now()
	r.await("h1 ok again", waitShort, func() bool { return r.hosts()["h1"] == "ok" })
	r.await("job 8's process killed by its agent", waitShort, func() bool { return p8.Gone() })
	t.Logf("the resumed agent killed the job the server had ended %v after SIGCONT", time.Since(resumed).Round(time.Millisecond))
	if !strings.Contains(a1.out.String(), "registered as h1: 1 jobs running") {
		t.Errorf("h1's agent did not register again with job 8: %q", a1.out.String())
	}
	if j := r.jobs()[j8]; j.State != "EXIT" || j.EndReason != agent.ReasonHostLost {
		t.Errorf("job 8 after its agent killed it: %+v; want EXIT, host lost still", j)
	}

	// h2's agent stops (SIGTERM) while jobs 9 and 10 run there: it kills
	// them, reports them lost, and leaves: h2 is unavail as soon as the
	// agent has exited; job 9 ends EXIT 130, SIGINT, "its agent stopped";
	// job 10, rerunnable, runs again on h1.
	j9 := r.submit(1, "select[hname==h2]", "j9.out", false, "sleep", "60")
	j10 := r.submit(1, "{select[hname==h2]} || {select[hname==h1]}", "j10.out", true, "sleep", "60")
	p9, p10 := r.record(r.running(j9).PID), r.record(r.running(j10).PID)
	a2.stop(t)
	if exitCode(a2.err) != 0 || r.hosts()["h2"] != "unavail" {
		t.Errorf("h2's agent stopped: %v; h2 %s, want unavail at once", a2.err, r.hosts()["h2"])
	}
	if !p9.Gone() || !p10.Gone() {
		t.Errorf("jobs 9 and 10 (pids %d, %d) outlived their agent's stop", p9.PID, p10.PID)
	}
	if j := r.ended(j9); j.State != "EXIT" || j.ExitCode != 130 || j.Signal != "SIGINT" || j.EndReason != agent.ReasonAgentStopped {
		t.Errorf("job 9: %+v; want EXIT 130 SIGINT, its agent stopped", j)
	}
	if j := r.running(j10); !reflect.DeepEqual(j.Hosts, map[string]int{"h1": 1}) || j.PID == p10.PID {
		t.Errorf("job 10: %+v; want it running again on h1", j)
	}
	t.Logf("TestRemoteAgents took %v", time.Since(begin).Round(time.Millisecond))
}

// TestAgentReports speaks the agent protocol by hand as the agent of h3:
// it registers, takes its start order, and reports the start and the end;
// each report repeated, and an end for the same attempt with another exit
// code, is answered applied: false and changes nothing.
func TestAgentReports(t *testing.T) {
	r := newRig(t)
	token := strings.TrimSpace(r.read(filepath.Join("data", "agent.token")))
	status, body := r.agentCall("POST", agent.PathRegister, token, agent.RegisterRequest{Name: "h3"})
	var reg agent.RegisterReply
	if status != 200 || json.Unmarshal([]byte(body), &reg) != nil {
		t.Fatalf("register: %d %s", status, body)
	}
	id := r.submit(1, "select[hname==h3]", "", false, "true")
	var orders agent.OrdersReply
	r.await("a start order", waitShort, func() bool {
		status, body = r.agentCall("GET", agent.PathOrders+"?name=h3&session="+reg.Session+"&after=0&wait_ms=5000", token, nil)
		if status != 200 || json.Unmarshal([]byte(body), &orders) != nil {
			t.Fatalf("poll: %d %s", status, body)
		}
		return len(orders.Orders) > 0
	})
	if len(orders.Orders) != 1 {
		t.Fatalf("orders %+v, want one", orders.Orders)
	}
	if o := orders.Orders[0]; o.Seq != 1 || o.Kind != agent.KindStart || o.Job != id || o.Attempt != 1 || o.Hosts[0].Host != "h3" || !o.AllowRoot ||
		o.Submit == nil || !reflect.DeepEqual(o.Submit.Command, []string{"true"}) {
		t.Errorf("order %+v", o)
	}
	report := func(rep agent.Report, applied bool) {
		t.Helper()
		rep.Job, rep.Attempt = id, 1
		req := agent.ReportRequest{Name: "h3", Session: reg.Session, Reports: []agent.Report{rep}}
		status, body := r.agentCall("POST", agent.PathReport, token, req)
		if want := fmt.Sprintf(`{"applied":[%v]}`, applied); status != 200 || body != want {
			t.Errorf("report %+v: %d %s, want 200 %s", rep, status, body, want)
		}
	}
	report(agent.Report{Kind: agent.KindStarted, PID: 4242}, true)
	report(agent.Report{Kind: agent.KindStarted, PID: 4242}, false)
	report(agent.Report{Kind: agent.KindStarted, PID: 999}, false)
	if j := r.jobs()[id]; j.State != "RUN" || j.PID != 4242 {
		t.Errorf("job after its start: %+v", j)
	}
	report(agent.Report{Kind: agent.KindFinished, ExitCode: 0}, true)
	report(agent.Report{Kind: agent.KindFinished, ExitCode: 0}, false)
	report(agent.Report{Kind: agent.KindFinished, ExitCode: 9, Signal: "SIGKILL"}, false)
	report(agent.Report{Kind: agent.KindStarted, PID: 4242}, false)
	if j := r.jobs()[id]; j.State != "DONE" || j.ExitCode != 0 || j.Signal != "" || j.PID != 4242 {
		t.Errorf("job after repeated reports: %+v; want DONE, exit code 0", j)
	}
	// The start order is gone with the start: a poll has nothing.
	status, body = r.agentCall("GET", agent.PathOrders+"?name=h3&session="+reg.Session+"&after=0&wait_ms=0", token, nil)
	if status != 200 || body != `{"orders":[]}` {
		t.Errorf("poll after the reports: %d %s", status, body)
	}
	// One request may carry a start and the end of the same attempt (a
	// short job): both are taken, in order, and a repeat of either is not.
	id2 := r.submit(1, "select[hname==h3]", "", false, "false")
	r.await("a start order for the second job", waitShort, func() bool { return r.jobs()[id2].State == "RUN" })
	both := agent.ReportRequest{Name: "h3", Session: reg.Session, Reports: []agent.Report{
		{Kind: agent.KindStarted, Job: id2, Attempt: 1, PID: 4343},
		{Kind: agent.KindFinished, Job: id2, Attempt: 1, ExitCode: 1},
		{Kind: agent.KindStarted, Job: id2, Attempt: 1, PID: 4343},
	}}
	if status, body := r.agentCall("POST", agent.PathReport, token, both); status != 200 || body != `{"applied":[true,true,false]}` {
		t.Errorf("a start and an end in one request: %d %s, want [true,true,false]", status, body)
	}
	if j := r.jobs()[id2]; j.State != "EXIT" || j.ExitCode != 1 || j.PID != 4343 {
		t.Errorf("second job: %+v; want EXIT, exit code 1, pid 4343", j)
	}
}

// TestAgentTLS: `xce serve` refuses a listener on every interface
// without TLS; with a certificate and its key, an agent given the
// certificate as its CA registers over https.
func TestAgentTLS(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "c.yaml")
	if err := os.WriteFile(cfg, []byte(rigConfig), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	code := Run(context.Background(), []string{"serve", "--config", cfg, "--data", filepath.Join(dir, "d"), "--listen", "0.0.0.0:0"}, &out, &errb)
	if code != ExitFailure || !strings.Contains(errb.String(), "not a loopback address: TLS is required (--tls-cert and --tls-key)") {
		t.Errorf("serve --listen 0.0.0.0:0: exit %d, %q", code, errb.String())
	}
	cert, key, _, err := testtls.SelfSigned(dir)
	if err != nil {
		t.Fatal(err)
	}
	r := newRig(t, cert, key)
	r.startAgent("h1")
	r.await("h1 ok over TLS", waitShort, func() bool { return r.hosts()["h1"] == "ok" })
	if id := r.submit(1, "select[hname==h1]", "tls.out", false, "echo", "tls"); r.ended(id).State != "DONE" || r.read("tls.out") != "tls\n" {
		t.Errorf("job over TLS: %+v, output %q", r.jobs()[id], r.read("tls.out"))
	}
}
