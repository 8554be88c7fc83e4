package agents

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xce-sched/xce/internal/submit"
	"github.com/xce-sched/xce/sim"
)

// parityConfig is TestParity's cluster: 4 hosts of 4 slots, a 2-unit
// license, a queue of each backfilling policy, and a 2 s heartbeat
// timeout so that a lost host is seen quickly.
const parityConfig = `hosts:
  - {name: h1, slots: 4}
  - {name: h2, slots: 4}
  - {name: h3, slots: 4}
  - {name: h4, slots: 4}
shared: {lic: 2}
queues:
  - {name: normal, priority: 20, policy: easy}
  - {name: cons, priority: 30, policy: conservative}
  - {name: ff, priority: 10, policy: firstfit}
server:
  kill_grace: 1s
  heartbeat_timeout: 2s
  allow_root_jobs: true
`

// parityReconfig is the configuration reloaded halfway: a limit of 10
// slots for root (the jobs' user) and the queues' priorities swapped.
const parityReconfig = `hosts:
  - {name: h1, slots: 4}
  - {name: h2, slots: 4}
  - {name: h3, slots: 4}
  - {name: h4, slots: 4}
shared: {lic: 2}
queues:
  - {name: normal, priority: 30, policy: easy}
  - {name: cons, priority: 20, policy: conservative}
  - {name: ff, priority: 10, policy: firstfit}
limits:
  - {name: root_slots, users: [root], slots: 10}
server:
  kill_grace: 1s
  heartbeat_timeout: 2s
  allow_root_jobs: true
`

// parityPack returns n submit lines of mixed shapes, estimates (-W 1 to
// 4 minutes) and queues, each job sleeping 0 to 0.3 s, from seed.
func parityPack(n int, seed uint64) []string {
	rng := rand.New(rand.NewPCG(seed, 1))
	queues := []string{"normal", "cons", "ff"}
	var lines []string
	for range n {
		args := []string{"-q", queues[rng.IntN(3)], "-W", fmt.Sprint(1 + rng.IntN(4)), "-o", "/dev/null"}
		switch rng.IntN(6) {
		case 0:
			args = append(args, "-n", "4", "-R", "span[ptile=2]")
		case 1:
			args = append(args, "-n", "3", "-R", "span[hosts=1]")
		case 2:
			args = append(args, "-n", "1", "-R", "rusage[lic=1]")
		case 3:
			args = append(args, "-n", fmt.Sprint(2+rng.IntN(7)))
		default:
			args = append(args, "-n", "1")
		}
		args = append(args, "sleep", fmt.Sprintf("0.%d", rng.IntN(4)))
		lines = append(lines, submit.Join(args))
	}
	return lines
}

// TestParity (issue 13): a live server with 4 agents runs 300 jobs of
// mixed shapes and estimates in queues under easy, conservative and
// firstfit, with a kill, a rerunnable job whose host is lost (its agent
// SIGKILLed, then started again) and a reconfiguration among them; `xce
// sim verify` then replays the log with 0 differences over every recorded
// cycle, while the server runs (through its socket) and after it stopped.
// The same log verified under fcfs has differences: the check can fail.
func TestParity(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a server, 4 agents and 300 jobs")
	}
	r := newRig(t, parityConfig, mixedHosts...)

	// A rerunnable job on h4 that runs until h4 is lost, then again.
	rerunID := r.submit("-r", "-R", "select[hname==h4]", "-o", "/dev/null", "--", "sh", "-c", "test -e h4.lost || sleep 60")
	r.await("the rerunnable job runs on h4", waitShort, func() bool { j := r.jobs()[rerunID]; return j.State == "RUN" && j.PID != 0 })
	ids := r.submitPack("pack1", parityPack(150, 1))

	// A kill of a job still pending or running.
	r.xce("", "kill", fmt.Sprint(ids[140]))

	// h4's agent dies: its host is lost, the rerunnable job pends again;
	// the agent comes back and the job runs again, and ends.
	if err := os.WriteFile(filepath.Join(r.work, "h4.lost"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := r.agents["h4"].cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-r.agents["h4"].done
	r.await("h4 unavail", waitShort, func() bool { return r.hosts()["h4"] == "unavail" })
	r.startAgent("h4")
	r.await("h4 ok again", waitShort, func() bool { return r.hosts()["h4"] == "ok" })

	if err := os.WriteFile(filepath.Join(r.dir, "cluster.yaml"), []byte(parityReconfig), 0o644); err != nil {
		t.Fatal(err)
	}
	r.xce("", "reconfig")
	r.submitPack("pack2", parityPack(150, 2))
	r.await("every job ends", waitLong, func() bool { return r.unfinished() == 0 })
	if j := r.jobs()[rerunID]; j.State != "DONE" {
		t.Errorf("the rerunnable job: %+v; want DONE after a second attempt", j)
	}
	if j := r.jobs()[ids[140]]; j.State != "EXIT" {
		t.Errorf("the killed job: %+v; want EXIT", j)
	}

	running := r.verify(0, "sim", "verify", "--data", r.data, "--json")
	r.stopServer()
	stopped := r.verify(0, "sim", "verify", "--data", r.data, "--json")
	for _, rep := range []*sim.VerifyReport{running, stopped} {
		if len(rep.Differences) != 0 || rep.Cycles < 50 || rep.Decisions < rep.Cycles {
			t.Errorf("verify: %d cycles, %d decisions, differences %+v; want 0 differences over 50 or more cycles", rep.Cycles, rep.Decisions, rep.Differences)
		}
	}
	if running.Cycles != stopped.Cycles {
		t.Errorf("verify through the socket checked %d cycles, from the file %d", running.Cycles, stopped.Cycles)
	}
	t.Logf("verify: %d events, %d cycles, %d decisions, no difference", stopped.Events, stopped.Cycles, stopped.Decisions)
	fcfs := r.verify(1, "sim", "verify", "--data", r.data, "--json", "--policy", "fcfs")
	if len(fcfs.Differences) == 0 {
		t.Errorf("verify --policy fcfs: no difference over %d cycles; the check cannot fail", fcfs.Cycles)
	}
	t.Logf("verify --policy fcfs: %d differences, the first %+v", len(fcfs.Differences), fcfs.Differences[0])
}

// verify runs xce with args, which must exit with code want, and decodes
// its JSON report.
func (r *rig) verify(want int, args ...string) *sim.VerifyReport {
	r.tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLong)
	defer cancel()
	cmd := exec.CommandContext(ctx, r.bin, args...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if code := cmd.ProcessState.ExitCode(); code != want {
		r.tb.Fatalf("xce %s: exit %d (%v), want %d\n%s%s", strings.Join(args, " "), code, err, want, out.String(), errb.String())
	}
	var rep sim.VerifyReport
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		r.tb.Fatalf("xce %s: %v\n%s", strings.Join(args, " "), err, out.String())
	}
	return &rep
}
