//go:build linux

package ha

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/xce-sched/xce/internal/api"
	"github.com/xce-sched/xce/internal/client"
	"github.com/xce-sched/xce/internal/event"
	"github.com/xce-sched/xce/internal/store"
)

// EnvKills sets how many times TestChaos kills the leader (default 3, so
// that the test fits the CI's time; 20 for the figures in BENCHMARKS.md).
const EnvKills = "XCE_HA_CHAOS_KILLS"

// chaosConf: four hosts of two slots, a license of three.
const chaosConf = `server:
  allow_root_jobs: true
  cycle_interval: 100ms
  heartbeat_timeout: 10s
hosts:
  - {name: h1, slots: 2}
  - {name: h2, slots: 2}
  - {name: h3, slots: 2}
  - {name: h4, slots: 2}
shared: {lic: 3}
queues:
  - {name: normal, policy: firstfit}
`

// TestChaos runs three members and four agents on loopback under a storm
// of submits and job ends, kills the leader with SIGKILL (restarting it
// each time), then stops the leader with SIGSTOP for longer than the
// election timeout and continues it. Then: every acknowledged job exists
// exactly once with its acknowledged ID, no job started twice (each job
// appends its name to a file when it starts), no host's slots or the
// license were over-committed (folded from the surviving log), every job
// finished, the members' logs agree, and `xce sim verify` finds no
// difference in the leader's. It logs the failover times (kill → the first job started by
// the next leader).
func TestChaos(t *testing.T) {
	kills := 3
	if v := os.Getenv(EnvKills); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("%s=%q: want a count", EnvKills, v)
		}
		kills = n
	}
	c := newCluster(t, chaosConf)
	cl := c.dial()
	first := c.leader(cl)
	tokFile := filepath.Join(c.dir, "agent.token")
	waitFile(t, filepath.Join(c.data(first), "agent.token"), tokFile)
	agents := c.startAgents(tokFile, 4)
	defer agents.stop(t)

	starts := filepath.Join(c.dir, "starts")
	var mu sync.Mutex
	acked := map[int64]string{}
	unsure := 0
	stop := make(chan struct{})
	stormDone := make(chan struct{})
	go func() {
		defer close(stormDone)
		for n := 0; ; n++ {
			select {
			case <-stop:
				return
			case <-time.After(40 * time.Millisecond):
			}
			name := fmt.Sprintf("j%d", n)
			req := api.JobRequest{Name: name, TasksMin: 1, TasksMax: 1, Cwd: "/",
				Command: []string{"/bin/sh", "-c", fmt.Sprintf("echo %s >> %s; sleep 0.%d", name, starts, 1+n%4)}}
			if n%3 == 0 {
				req.ResReq = "rusage[lic=1]"
			}
			ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
			rep, err := cl.Submit(ctx, []api.JobRequest{req})
			cancel()
			mu.Lock()
			if err != nil {
				unsure++ // not acknowledged: it may or may not exist
				if unsure <= 5 {
					t.Logf("submit %s not acknowledged: %v", name, err)
				}
			} else {
				acked[rep.IDs[0]] = name
			}
			mu.Unlock()
		}
	}()

	var killedAt []int64
	time.Sleep(2 * time.Second)
	for range kills {
		l := c.leader(cl)
		killedAt = append(killedAt, time.Now().UnixNano())
		c.kill(l)
		c.leader(cl)
		time.Sleep(500 * time.Millisecond)
		c.start(l)
		c.caughtUp(cl)
		time.Sleep(time.Second)
	}
	// SIGSTOP the leader for three times the election timeout, then on.
	l := c.leader(cl)
	if err := c.procs[l].Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	time.Sleep(3 * time.Second)
	if err := c.procs[l].Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	c.caughtUp(cl)
	time.Sleep(time.Second)
	close(stop)
	<-stormDone

	// Every job finishes (bounded).
	var jobs []api.JobInfo
	var err error
	for end := time.Now().Add(90 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		jobs, err = cl.Jobs(context.Background(), "all", true, nil)
		if err == nil && !slices.ContainsFunc(jobs, func(j api.JobInfo) bool { return j.State == "PEND" || j.State == "RUN" }) {
			break
		}
		if time.Now().After(end) {
			t.Fatalf("jobs not finished after 90 s: %v", err)
		}
	}
	names := map[string]int{}
	for _, j := range jobs {
		names[j.Name]++
		if j.State != "DONE" {
			t.Errorf("job %d (%s) is %s, want DONE", j.ID, j.Name, j.State)
		}
	}
	byID := map[int64]string{}
	for _, j := range jobs {
		byID[j.ID] = j.Name
	}
	for id, name := range acked {
		if byID[id] != name || names[name] != 1 {
			t.Errorf("acknowledged job %d (%s): found as %q, %d times", id, name, byID[id], names[name])
		}
	}
	data, err := os.ReadFile(starts)
	if err != nil {
		t.Fatal(err)
	}
	started := map[string]int{}
	for _, line := range strings.Fields(string(data)) {
		started[line]++
	}
	for name, n := range started {
		if n != 1 || names[name] != 1 {
			t.Errorf("job %s started %d times (in the log %d times)", name, n, names[name])
		}
	}
	if len(started) != len(jobs) {
		t.Errorf("%d jobs started, %d jobs", len(started), len(jobs))
	}
	agents.stop(t)
	time.Sleep(500 * time.Millisecond) // the last events reach every member
	// The followers stop first: the leader, stopped last, has no quorum
	// left to elect another, which would add its own start to the logs.
	l = c.leader(cl)
	for i := range 3 {
		if i != l {
			c.stop(i)
		}
	}
	c.stop(l)
	logs := make([][]event.Event, 3)
	for i := range 3 {
		logs[i] = readLog(t, filepath.Join(c.data(i), "events.db"))
	}
	// The logs agree; one may lack the last few events (a follower that
	// stopped before it heard they were committed), which the leader's
	// has.
	for i := range 3 {
		n := min(len(logs[i]), len(logs[l]))
		a, _ := json.Marshal(logs[l][:n])
		b, _ := json.Marshal(logs[i][:n])
		if string(a) != string(b) || len(logs[i]) > len(logs[l]) || len(logs[l])-len(logs[i]) > 2 {
			t.Errorf("member %d's log (%d events) is not the leader's (%d)", i, len(logs[i]), len(logs[l]))
		}
	}
	logs[0] = logs[l]
	checkCommitted(t, logs[0], map[string]int{"h1": 2, "h2": 2, "h3": 2, "h4": 2}, 3)
	out, err := exec.Command(xceBin, "sim", "verify", "--data", c.data(l)).CombinedOutput()
	if err != nil {
		t.Errorf("xce sim verify: %v\n%s", err, out)
	}
	var fails []float64
	for _, at := range killedAt {
		for _, e := range logs[0] {
			if e.Type == event.CycleDecided && e.At > at && len(e.Cycle.Started) > 0 {
				fails = append(fails, float64(e.At-at)/1e9)
				break
			}
		}
	}
	slices.Sort(fails)
	t.Logf("%d jobs (%d acknowledged, %d submits not acknowledged), %d events; %d kills", len(jobs), len(acked), unsure, len(logs[0]), kills)
	if len(fails) > 0 {
		t.Logf("failover (kill → next leader starts a job), s: p50 %.2f p99 %.2f max %.2f, all %.2f",
			fails[len(fails)/2], fails[min(len(fails)-1, len(fails)*99/100)], fails[len(fails)-1], fails)
	}
	t.Logf("sim verify: %s", strings.TrimSpace(lastLine(string(out))))
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	return s[strings.LastIndexByte(s, '\n')+1:]
}

// checkCommitted folds the log's placements and ends and fails the test
// when a host's slots or the license were ever over-committed.
func checkCommitted(t *testing.T, log []event.Event, slots map[string]int, lic float64) {
	t.Helper()
	held := map[event.JobID]event.Placement{}
	used := map[string]int{}
	var licUsed float64
	for _, e := range log {
		switch e.Type {
		case event.CycleDecided:
			for _, p := range e.Cycle.Started {
				held[p.Job] = p
				for _, h := range p.Hosts {
					used[h.Host] += h.Slots
					if used[h.Host] > slots[h.Host] {
						t.Errorf("event %d: host %s holds %d slots of %d", e.Index, h.Host, used[h.Host], slots[h.Host])
					}
				}
				licUsed += p.Shared["lic"]
				if licUsed > lic {
					t.Errorf("event %d: %v licenses held of %v", e.Index, licUsed, lic)
				}
			}
		case event.JobFinished:
			p, ok := held[e.Finished.Job]
			if !ok {
				continue
			}
			delete(held, e.Finished.Job)
			for _, h := range p.Hosts {
				used[h.Host] -= h.Slots
			}
			licUsed -= p.Shared["lic"]
		}
	}
}

// readLog returns every event of the store at path.
func readLog(t *testing.T, path string) []event.Event {
	t.Helper()
	s, err := store.Open(path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var out []event.Event
	if err := s.Read(1, func(e event.Event) error { out = append(out, e); return nil }); err != nil {
		t.Fatal(err)
	}
	return out
}

// waitFile waits (at most 15 s) for src to exist and copies it to dst
// (mode 0600).
func waitFile(t *testing.T, src, dst string) {
	t.Helper()
	for end := time.Now().Add(15 * time.Second); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		if data, err := os.ReadFile(src); err == nil && len(data) > 0 {
			if err := os.WriteFile(dst, data, 0o600); err != nil {
				t.Fatal(err)
			}
			return
		}
	}
	t.Fatalf("%s did not appear", src)
}

// caughtUp waits (at most 20 s) until every running member answers and
// they all have the same last raft index, under one leader.
func (c *cluster) caughtUp(cl *client.Client) {
	c.t.Helper()
	for end := time.Now().Add(20 * time.Second); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		ms, err := cl.Members(context.Background())
		if err != nil || len(ms) != 3 {
			continue
		}
		leaders := 0
		for _, m := range ms {
			if m.Role == "leader" {
				leaders++
			}
		}
		if leaders == 1 && ms[0].LastIndex > 0 && ms[0].LastIndex+50 > ms[1].LastIndex && ms[1].LastIndex+50 > ms[0].LastIndex &&
			ms[2].LastIndex+50 > ms[0].LastIndex && ms[0].LastIndex+50 > ms[2].LastIndex {
			return
		}
	}
	c.t.Fatal("the members did not catch up within 20 s")
}

// agents are the agent processes a test started.
type agents struct {
	cmds []*exec.Cmd
	done []chan struct{}
}

// startAgents starts n agents, of hosts h1..hn, on every member's address.
func (c *cluster) startAgents(tokFile string, n int) *agents {
	var urls []string
	for i := range c.apis {
		urls = append(urls, c.url(i))
	}
	a := &agents{}
	for i := 1; i <= n; i++ {
		name := fmt.Sprint("h", i)
		logf, err := os.Create(filepath.Join(c.dir, name+".log"))
		if err != nil {
			c.t.Fatal(err)
		}
		args := []string{"agent", "--token-file", tokFile, "--server", strings.Join(urls, ","), "--name", name,
			"--dir", filepath.Join(c.dir, "agent-"+name)}
		if c.ca != "" {
			args = append(args, "--ca", c.ca)
		}
		cmd := exec.Command(xceBin, args...)
		cmd.Stdout, cmd.Stderr = logf, logf
		err = cmd.Start()
		logf.Close()
		if err != nil {
			c.t.Fatal(err)
		}
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		a.cmds, a.done = append(a.cmds, cmd), append(a.done, done)
	}
	return a
}

// stop sends SIGTERM to each agent the test started, and SIGKILL to one
// that has not ended 10 s later.
func (a *agents) stop(t *testing.T) {
	for i, cmd := range a.cmds {
		if cmd == nil {
			continue
		}
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-a.done[i]:
		case <-time.After(10 * time.Second):
			t.Errorf("agent pid %d did not stop on SIGTERM", cmd.Process.Pid)
			_ = cmd.Process.Signal(syscall.SIGKILL)
			<-a.done[i]
		}
		a.cmds[i] = nil
	}
}
