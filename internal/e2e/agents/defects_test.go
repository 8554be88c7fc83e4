package agents

import (
	"testing"
	"time"

	"github.com/xce-sched/xce/internal/agent"
	"github.com/xce-sched/xce/internal/event"
)

// known reports a breach of a promise this package found (both defects
// it found are fixed: each is an error now).
func known(tb testing.TB, format string, args ...any) {
	tb.Helper()
	tb.Errorf("defect: "+format, args...)
}

// oneSlot is a cluster of one host of one slot.
const oneSlot = `hosts:
  - {name: h1, slots: 1}
queues:
  - {name: normal, policy: firstfit}
server:
  kill_grace: 1s
  allow_root_jobs: true
`

// TestStartReported (defect 1, fixed): every attempt's start is in the
// log, with its pid, however soon it ends. The agent used to report a
// start only while the attempt still ran when it sent its reports: an
// attempt that had already ended was reported by its end alone, so the
// log had no job.started for it and the job's pid was 0.
func TestStartReported(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a server and an agent")
	}
	r := newRig(t, oneSlot, "h1")
	var ids []int64
	for range 20 {
		ids = append(ids, r.submit("-o", "/dev/null", "--", "true"))
	}
	r.await("20 jobs end", waitLong, func() bool { return r.unfinished() == 0 })
	infos := r.jobs()
	v := foldLog(r.events(), map[string]int{"h1": 1}, nil)
	for _, e := range v.errs {
		t.Error(e)
	}
	missing := 0
	for _, id := range ids {
		as := v.attempts[id]
		if j := infos[id]; j.State != "DONE" || len(as) != 1 || as[0].fin == nil || as[0].fin.ExitCode != 0 {
			t.Fatalf("job %d: %+v, %d attempts; want DONE once", id, j, len(as))
		}
		if as[0].started != 1 || infos[id].PID != as[0].pid || as[0].pid == 0 {
			missing++
		}
	}
	if missing > 0 {
		known(t, "defect 1: %d of 20 `true` jobs have no job.started event (pid 0)", missing)
	}
}

// TestStopPlacesNothing (defect 2): an agent that stops (SIGTERM) kills
// its job, reports its end and leaves; a job pending for that host must
// not be lost meanwhile. Job 1 (sleep 30) runs on the one slot of h1,
// job 2 pends for it; the agent's stop ends job 1 EXIT 130, SIGINT, "its
// agent stopped" (docs/daemon.md). Job 2 must still pend, and run once
// the agent is back. Before the fix, the end of job 1 freed the slot
// before the agent left, a cycle placed job 2 on h1, and the leave ended
// it EXIT -1, "its agent stopped", without its ever having run; now the
// agent drains its host first (a draining leave: no new placement).
func TestStopPlacesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a server and an agent")
	}
	r := newRig(t, oneSlot, "h1")
	j1 := r.submit("-o", "/dev/null", "--", "sleep", "30")
	j2 := r.submit("-o", "/dev/null", "--", "true")
	r.await("job 1 runs", waitShort, func() bool { return r.jobs()[j1].PID != 0 })
	r.record(r.jobs()[j1].PID)
	time.Sleep(100 * time.Millisecond) // a cycle has left job 2 pending
	if j := r.jobs()[j2]; j.State != "PEND" {
		t.Fatalf("job 2: %+v; want PEND behind job 1", j)
	}
	if !r.agents["h1"].stop(t, waitShort) {
		t.Errorf("agent h1 stopped: %v; want exit 0", r.agents["h1"].err)
	}
	if j := r.jobs()[j1]; j.State != "EXIT" || j.ExitCode != 130 || j.Signal != "SIGINT" || j.EndReason != agent.ReasonAgentStopped {
		t.Errorf("job 1: %+v; want EXIT 130, SIGINT, its agent stopped", j)
	}
	j := r.jobs()[j2]
	switch {
	case j.State == "EXIT" && j.ExitCode == -1 && j.EndReason == agent.ReasonAgentStopped && j.PID == 0:
		known(t, "defect 2: job 2, pending while h1's agent stopped, ended %s %d %q without running", j.State, j.ExitCode, j.EndReason)
		return
	case j.State != "PEND":
		t.Fatalf("job 2 after h1's agent stopped: %+v; want PEND", j)
	}
	r.startAgent("h1")
	r.await("job 2 ends", waitShort, func() bool { return r.unfinished() == 0 })
	if j := r.jobs()[j2]; j.State != "DONE" {
		t.Errorf("job 2: %+v; want DONE once h1's agent is back", j)
	}
	for _, e := range r.events() {
		if e.Type == event.CycleDecided {
			for _, p := range e.Cycle.Started {
				if p.Job == j2 && p.Attempt != 1 {
					t.Errorf("job 2 placed as attempt %d, want once", p.Attempt)
				}
			}
		}
	}
}
