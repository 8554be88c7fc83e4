package agents

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/xce-sched/xce/internal/agent"
	"github.com/xce-sched/xce/internal/api"
	"github.com/xce-sched/xce/internal/event"
	"github.com/xce-sched/xce/internal/proctest"
	"github.com/xce-sched/xce/internal/submit"
)

// The cluster of TestMixedJobs: 4 hosts of 4 slots, a 2-unit license,
// a kill grace of 1 s.
const mixedConfig = `hosts:
  - {name: h1, slots: 4}
  - {name: h2, slots: 4}
  - {name: h3, slots: 4}
  - {name: h4, slots: 4}
shared: {lic: 2}
queues:
  - {name: normal, policy: firstfit}
server:
  kill_grace: 1s
  allow_root_jobs: true
`

var (
	mixedHosts = []string{"h1", "h2", "h3", "h4"}
	mixedLimit = map[string]int{"h1": 4, "h2": 4, "h3": 4, "h4": 4, "lic": 2}
	killGrace  = time.Second
)

// The shapes of TestMixedJobs' jobs.
const (
	single   = "single"     // -n 1
	ptile    = "ptile"      // -n 4 -R span[ptile=2]: 2 slots on each of 2 hosts
	hostsOne = "hosts=1"    // -n 3 -R span[hosts=1]: 3 slots on one host
	license  = "license"    // -n 1 -R rusage[lic=1]
	failing  = "failing"    // -n 1, exits 1..9
	notFound = "not found"  // -n 1, a command that does not exist: 127
	rerun    = "rerunnable" // -n 2 -r
	// The sentinels, jobs 0 and 1, on h4, run until h4's agent has been
	// stopped (until the file h4.stopped exists): the stop kills the
	// first; the second, rerunnable, runs again and ends.
	sentinel   = "sentinel"   // -n 1 -R select[hname==h4]
	sentinelRe = "sentinel-r" // -n 1 -R select[hname==h4] -r
)

// mixedJob is a job of TestMixedJobs: its shape and what it must give.
type mixedJob struct {
	i     int // its index, 0..499
	shape string
	tasks int
	args  []string // xce submit's options
	cmd   []string
	code  int // the exit code it must end with
	id    int64
}

// mixedJobs makes the n jobs of TestMixedJobs. Every job but the "not
// found" ones runs
//
//	trap 'echo end $(NS); exit 130' INT TERM; t=$(NS); echo start $t $XCE_JOBID $$ $LSB_MCPU_HOSTS;
//	echo out-I XCE_HOSTS=$XCE_HOSTS; echo err-I >&2; sleep 0.0D; t=$(NS); echo end $t; exit CODE
//
// (NS: `date +%s%N`; a time is taken before its line is written, so
// that a signal during `date` runs the trap before a line without the
// time is written), so its output file -o out/%J.out records when it
// started and ended, its job ID, its pid and its hosts; stderr shares the
// file. By i mod 10: 0, 6 single; 1 ptile; 2, 7 license; 3 hosts=1; 4
// failing (exit 1 + i/10 mod 9); 5, 9 rerunnable; 8 not found for even
// i/10, else ptile; but jobs 0 and 1 are the sentinels. The sleep D is 1
// + 7i mod 9 hundredths of a second; a sentinel waits for h4.stopped
// instead.
func mixedJobs(n int) []mixedJob {
	jobs := make([]mixedJob, n)
	for i := range jobs {
		j := mixedJob{i: i, shape: single, tasks: 1}
		switch i % 10 {
		case 1:
			j.shape, j.tasks, j.args = ptile, 4, []string{"-R", "span[ptile=2]"}
		case 2, 7:
			j.shape, j.args = license, []string{"-R", "rusage[lic=1]"}
		case 3:
			j.shape, j.tasks, j.args = hostsOne, 3, []string{"-R", "span[hosts=1]"}
		case 4:
			j.shape, j.code = failing, 1+(i/10)%9
		case 5, 9:
			j.shape, j.tasks, j.args = rerun, 2, []string{"-r"}
		case 8:
			if (i/10)%2 == 0 {
				j.shape, j.code = notFound, 127
			} else {
				j.shape, j.tasks, j.args = ptile, 4, []string{"-R", "span[ptile=2]"}
			}
		}
		switch i {
		case 0:
			j.shape, j.tasks, j.args = sentinel, 1, []string{"-R", "select[hname==h4]"}
		case 1:
			j.shape, j.tasks, j.args = sentinelRe, 1, []string{"-R", "select[hname==h4]", "-r"}
		}
		j.args = append([]string{"-n", strconv.Itoa(j.tasks), "-o", "out/%J.out"}, j.args...)
		wait := fmt.Sprintf("sleep 0.0%d", 1+(7*i)%9)
		if i < 2 {
			wait = "while [ ! -e h4.stopped ]; do sleep 0.02; done"
		}
		if j.shape == notFound {
			j.cmd = []string{fmt.Sprintf("/nonexistent/xce-e2e-%d", i)}
		} else {
			j.cmd = []string{"sh", "-c", fmt.Sprintf(`trap 'echo end $(date +%%s%%N); exit 130' INT TERM; `+
				`t=$(date +%%s%%N); echo start $t $XCE_JOBID $$ $LSB_MCPU_HOSTS; echo out-%d XCE_HOSTS=$XCE_HOSTS; echo err-%d >&2; `+
				`%s; t=$(date +%%s%%N); echo end $t; exit %d`, i, i, wait, j.code)}
		}
		jobs[i] = j
	}
	return jobs
}

// The job script TestMixedJobs kills: its shell, a child shell and two
// sleeps, all ignoring SIGINT and SIGTERM; each writes its pid to
// kill.pids.
const killScript = `#BSUB -R "select[hname==h1]"
#BSUB -o kill.out
trap '' INT TERM
echo $$ >> kill.pids
sh -c 'sleep 60 & echo $! >> kill.pids; echo $$ >> kill.pids; wait' &
sleep 60 &
echo $! >> kill.pids
wait
`

// TestMixedJobs is the end-to-end test of issue 12: `xce serve` and 4
// `xce agent` processes (h1..h4, 4 slots each, a 2-unit license) on this
// machine run 500 jobs of mixed shapes (mixedJobs) submitted through
// `xce submit` (-pack files and single submits). Meanwhile:
//
//   - a job script whose processes ignore SIGINT and SIGTERM is killed
//     with `xce kill`: its 4 processes are all gone after kill_grace (1 s)
//     and within a margin of 2 s more; it ends EXIT 137, SIGKILL, killed;
//   - h4's agent is stopped (SIGTERM) once the sentinels (jobs 1 and 2)
//     run there and 50 jobs have ended, and started again: sentinel 1
//     ends EXIT 130 (its trap), "its agent stopped", as does any other
//     job h4 ran then; sentinel 2 and any other rerunnable job h4 ran
//     then run again, and end as they must.
//
// Then every job has ended as it must (DONE, or EXIT with its exit code),
// its output file holds exactly what its command printed in each attempt
// (its ID, pid, hosts), and from the jobs' own start and end records no
// host ever ran more than 4 slots at once and no more than 2 license
// jobs ran at once. The event log, read after the server stopped, says
// the same of every placement, and that no attempt started twice.
//
// It takes about 10 s on 2 cores; under -race, whose test binary builds
// xce with -race too, about 40 s.
func TestMixedJobs(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a server, 4 agents and 500 jobs for about 10 s")
	}
	begin := time.Now()
	r := newRig(t, mixedConfig, mixedHosts...)
	t.Logf("server and 4 agents up in %v", time.Since(begin).Round(time.Millisecond))

	// Submit packs of 120 jobs, stopping h4's agent after the first and
	// submitting the kill script after the second, then 20 jobs one by one.
	jobs := mixedJobs(500)
	started := time.Now()
	var ids []int64
	var killID int64
	for p := range 4 {
		var lines []string
		for _, j := range jobs[p*120 : (p+1)*120] {
			lines = append(lines, submit.Join(append(slices.Clone(j.args), j.cmd...)))
		}
		ids = append(ids, r.submitPack(fmt.Sprintf("pack%d", p), lines)...)
		if p == 0 {
			r.stopAgentTest("h4", 50)
		}
		if p == 1 {
			if err := os.WriteFile(filepath.Join(r.work, "kill.sh"), []byte(killScript), 0o644); err != nil {
				t.Fatal(err)
			}
			killID = r.submit("kill.sh")
		}
	}
	for _, j := range jobs[480:] {
		ids = append(ids, r.submit(append(append(slices.Clone(j.args), "--"), j.cmd...)...))
	}
	for i := range jobs {
		jobs[i].id = ids[i]
		want := int64(i + 1)
		if i >= 240 {
			want++ // after the kill script's
		}
		if ids[i] != want {
			t.Fatalf("job %d has ID %d, want %d", i, ids[i], want)
		}
	}
	if killID != 241 {
		t.Fatalf("the kill script has ID %d, want 241", killID)
	}
	t.Logf("500 jobs submitted, h4's agent stopped and started again, in %v", time.Since(started).Round(time.Millisecond))

	r.killTest(killID)

	r.await("every job ends", waitLong, func() bool { return r.unfinished() == 0 })
	t.Logf("every job ended %v after the first submit", time.Since(started).Round(time.Millisecond))
	infos := r.jobs()
	evs := r.events()
	checkMixed(t, r, jobs, infos, evs)
	if j := infos[killID]; j.State != "EXIT" || j.ExitCode != 137 || j.Signal != "SIGKILL" || j.EndReason != agent.ReasonKilled ||
		!maps.Equal(j.Hosts, map[string]int{"h1": 1}) {
		t.Errorf("the killed job: %+v; want EXIT 137, SIGKILL, killed, on h1", j)
	}
	t.Logf("TestMixedJobs took %v", time.Since(begin).Round(time.Millisecond))
}

// killTest waits for job id (killScript) to have written its 4 pids,
// kills it with `xce kill` and checks that its processes are all gone
// after kill_grace and before kill_grace + 2 s.
func (r *rig) killTest(id int64) {
	t := r.tb
	t.Helper()
	var pids []proctest.Proc
	r.await("the kill script's 4 pids", waitLong, func() bool {
		b, _ := os.ReadFile(filepath.Join(r.work, "kill.pids"))
		return strings.Count(string(b), "\n") == 4
	})
	b, _ := os.ReadFile(filepath.Join(r.work, "kill.pids"))
	for _, f := range strings.Fields(string(b)) {
		pid, err := strconv.Atoi(f)
		if err != nil {
			t.Fatalf("kill.pids: %q", b)
		}
		pids = append(pids, r.record(pid))
	}
	// Its agent reports its start (pid) after starting it.
	r.await("the kill script's start reported", waitShort, func() bool { return r.jobs()[id].PID != 0 })
	if j := r.jobs()[id]; j.State != "RUN" || j.PID != pids[0].PID {
		t.Fatalf("the kill script: %+v; want RUN with pid %d", j, pids[0].PID)
	}
	killed := time.Now()
	if out := r.xce("", "kill", strconv.FormatInt(id, 10)); out != fmt.Sprintf("Job <%d> is being terminated\n", id) {
		t.Errorf("xce kill: %q", out)
	}
	var took, tookGroup time.Duration
	r.await("the kill script's processes gone", killGrace+waitShort, func() bool {
		for _, p := range pids {
			if !p.Gone() {
				return false
			}
		}
		took = time.Since(killed)
		return true
	})
	// The group leader may still be a zombie that its agent reaps once
	// it has seen the group empty: then the group is empty.
	r.await("the kill script's process group empty", waitShort, func() bool {
		tookGroup = time.Since(killed)
		return unix.Kill(-pids[0].PID, 0) == unix.ESRCH
	})
	t.Logf("xce kill: the job's 4 processes (ignoring SIGINT and SIGTERM) dead %v after it, the process group empty after %v (kill_grace %v)",
		took.Round(time.Millisecond), tookGroup.Round(time.Millisecond), killGrace)
	if took < killGrace || tookGroup > killGrace+2*time.Second {
		t.Errorf("the killed job's processes were dead %v after xce kill, its group empty after %v; want after kill_grace (%v), within 2 s more", took, tookGroup, killGrace)
	}
}

// stopAgentTest waits for the sentinels (jobs 1 and 2) to run on host
// and for n jobs to have ended, then stops host's agent (SIGTERM): it
// must exit 0 and leave the host unavail at once. Then it lets the
// sentinels end (h4.stopped) and starts the agent again.
func (r *rig) stopAgentTest(host string, n int) {
	t := r.tb
	t.Helper()
	for _, id := range []string{"1", "2"} {
		r.await("sentinel job "+id+" runs", waitLong, func() bool {
			b, _ := os.ReadFile(filepath.Join(r.work, "out", id+".out"))
			return strings.Contains(string(b), "err-")
		})
	}
	total := len(r.jobs())
	r.await(fmt.Sprintf("%d jobs end", n), waitLong, func() bool { return total-r.unfinished() >= n })
	stopped := time.Now()
	r.stopAt = stopped.UnixNano()
	if !r.agents[host].stop(t, waitShort) {
		t.Errorf("agent %s stopped: %v; want exit 0", host, r.agents[host].err)
	}
	if s := r.hosts()[host]; s != "unavail" {
		t.Errorf("%s is %s once its agent stopped, want unavail", host, s)
	}
	r.stoppedAt = time.Now().UnixNano()
	t.Logf("agent %s stopped in %v, after %d jobs ended", host, time.Since(stopped).Round(time.Millisecond), total-r.unfinished())
	if err := os.WriteFile(filepath.Join(r.work, host+".stopped"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	r.startAgent(host)
	r.await(host+" ok again", waitShort, func() bool { return r.hosts()[host] == "ok" })
}

// checkMixed checks TestMixedJobs' jobs from the API (infos), the event
// log (evs) and their output files.
func checkMixed(t *testing.T, r *rig, jobs []mixedJob, infos map[int64]api.JobInfo, evs []event.Event) {
	t.Helper()
	v := foldLog(evs, map[string]int{"h1": 4, "h2": 4, "h3": 4, "h4": 4}, map[string]float64{"lic": 2})
	var errs, defects []string
	errorf := func(format string, args ...any) { errs = append(errs, fmt.Sprintf(format, args...)) }
	var ivs []interval
	stopped, requeued, unreported := 0, 0, 0
	for _, j := range jobs {
		as, info := v.attempts[j.id], infos[j.id]
		if len(as) == 0 {
			errorf("job %d (%s): never placed", j.id, j.shape)
			continue
		}
		last, ran := as[len(as)-1], 0
		rerunnable := j.shape == rerun || j.shape == sentinelRe
		for _, a := range as {
			switch {
			case a.fin == nil:
				errorf("job %d attempt %d: no end in the log", j.id, a.n)
				continue
			case a.fin.Reason == agent.ReasonAgentStopped && a.place.Hosts[0].Host != "h4":
				errorf("job %d attempt %d: ended %q on %s, whose agent did not stop", j.id, a.n, a.fin.Reason, a.place.Hosts[0].Host)
			case neverRan(a):
				defects = append(defects, fmt.Sprintf("defect 2: job %d (%s) attempt %d, placed on h4 %.1f ms after its agent was sent SIGTERM (which took %.1f ms to exit), ended %+v without running: %s",
					j.id, j.shape, a.n, float64(a.placedAt-r.stopAt)/1e6, float64(r.stoppedAt-r.stopAt)/1e6, *a.fin, describe(as)))
			case a.started == 0 && a.fin.Reason == "":
				unreported++ // defect 1
			case a.started != 1 && a.fin.Reason != agent.ReasonAgentStopped:
				errorf("job %d attempt %d: started %d times, want once", j.id, a.n, a.started)
			}
			unstarted := a.started == 0 && a.fin.Requeued && a.fin.Reason == agent.ReasonAgentStopped
			ran += boolInt(!neverRan(a) && !unstarted)
			if a != last && (!a.fin.Requeued || a.fin.Reason != agent.ReasonAgentStopped || !rerunnable && !unstarted) {
				errorf("job %d (%s) attempt %d of %d: ended %+v; only rerunnable jobs whose agent stopped, and attempts it never started, run again: %s", j.id, j.shape, a.n, len(as), a.fin, describe(as))
			}
			requeued += boolInt(a != last)
			checkShape(errorf, j, a)
		}
		if last.fin == nil {
			continue
		}
		want := outcome{State: "DONE", ExitCode: j.code, PID: last.pid}
		if j.code != 0 {
			want.State = "EXIT"
		}
		switch {
		case j.shape == sentinel && (last.fin.Reason != agent.ReasonAgentStopped || last.fin.ExitCode != 130 || last.fin.Signal != ""):
			errorf("job %d (sentinel): ended %+v; want exit code 130 (its trap), its agent stopped", j.id, last.fin)
		case j.shape == sentinelRe && ran != 2:
			errorf("job %d (rerunnable sentinel): ran %d times, want 2: %s", j.id, ran, describe(as))
		}
		if last.fin.Reason == agent.ReasonAgentStopped && !rerunnable {
			// Killed by its agent's stop: SIGINT and SIGTERM, caught by
			// its trap (exit 130) or before the trap was set (a signal);
			// or never run (defect 2).
			stopped++
			want = outcome{State: "EXIT", ExitCode: last.fin.ExitCode, Signal: last.fin.Signal, EndReason: agent.ReasonAgentStopped, PID: last.pid}
			if !neverRan(last) && !(last.fin.ExitCode == 130 && last.fin.Signal == "") && last.fin.Signal != "SIGINT" && last.fin.Signal != "SIGTERM" {
				errorf("job %d: ended by its agent's stop with exit code %d, signal %q: %s", j.id, last.fin.ExitCode, last.fin.Signal, describe(as))
			}
		}
		got := outcome{State: info.State, ExitCode: info.ExitCode, Signal: info.Signal, EndReason: info.EndReason, PID: info.PID}
		if got != want {
			errorf("job %d (%s, attempt %d): %+v; want %+v", j.id, j.shape, last.n, got, want)
		}
		ivs = append(ivs, checkOutput(errorf, r, j, as, ran)...)
	}
	most, serrs := sweep(ivs, mixedLimit)
	errs = append(errs, serrs...)
	errs = append(v.errs, errs...)
	t.Logf("jobs' own records: %d intervals; at most %v at once (limits %v)", len(ivs), most, mixedLimit)
	t.Logf("event log: %d events; at most %v at once", len(evs), v.maxUse)
	t.Logf("h4's agent stop ended %d jobs and requeued %d attempts", stopped, requeued)
	if unreported > 0 {
		defects = append(defects, fmt.Sprintf("defect 1: %d attempts that ended by themselves have no job.started event in the log (their agent reported only their end)", unreported))
	}
	for _, d := range defects {
		known(t, "%s", d)
	}
	for i, e := range errs {
		if i == 30 {
			t.Errorf("... and %d more", len(errs)-30)
			break
		}
		t.Error(e)
	}
	// The sweeps could not fail if the jobs never filled a host or the
	// license: they must have.
	for name, l := range mixedLimit {
		if most[name] != l {
			t.Errorf("%s: at most %d used at once by the jobs' records; the test wants it full (%d) at some time", name, most[name], l)
		}
	}
}

// neverRan reports whether attempt a was ended by its host's agent's
// leave without having been given to the agent: it was placed on the
// host after the agent had reported its jobs' ends (defect 2).
func neverRan(a *attempt) bool {
	// An attempt placed just before its agent stopped, which it never
	// started, is requeued (docs/daemon.md): the job runs later.
	return a.fin != nil && a.fin.Reason == agent.ReasonAgentStopped && a.fin.ExitCode == -1 && a.started == 0 && !a.fin.Requeued
}

// outcome is how a job ended, as the API tells it.
type outcome struct {
	State     string
	ExitCode  int
	Signal    string
	EndReason string
	PID       int
}

// checkShape checks attempt a's placement against job j's shape.
func checkShape(errorf func(string, ...any), j mixedJob, a *attempt) {
	total := 0
	for _, h := range a.place.Hosts {
		total += h.Slots
	}
	hs := a.place.Hosts
	ok := total == j.tasks
	switch j.shape {
	case ptile:
		ok = ok && len(hs) == 2 && hs[0].Slots == 2 && hs[1].Slots == 2
	case hostsOne:
		ok = ok && len(hs) == 1
	}
	wantLic := map[string]float64(nil)
	if j.shape == license {
		wantLic = map[string]float64{"lic": 1}
	}
	if !ok || !maps.Equal(a.place.Shared, wantLic) {
		errorf("job %d (%s, -n %d) attempt %d placed on %+v, shared %v", j.id, j.shape, j.tasks, a.n, hs, a.place.Shared)
	}
}

// checkOutput checks job j's output file against its attempts in the
// log (ran of them ran), and returns the intervals its records give. An
// attempt that ended by itself printed exactly its start line (its job
// ID, the pid the log has for it, its placement), out-I with XCE_HOSTS,
// err-I and its end line; one its agent's stop ended printed nothing, or
// its trap's end line alone, or its start line and a prefix of the
// rest, then its trap's end line (dash may print Terminated, and run the
// trap twice, once per signal).
func checkOutput(errorf func(string, ...any), r *rig, j mixedJob, as []*attempt, ran int) []interval {
	b, err := os.ReadFile(filepath.Join(r.work, "out", strconv.FormatInt(j.id, 10)+".out"))
	if errors.Is(err, fs.ErrNotExist) && ran == 0 {
		return nil
	}
	if err != nil {
		errorf("job %d: %v", j.id, err)
		return nil
	}
	pre, recs := parseOutput(string(b))
	if j.shape == notFound {
		if last := as[len(as)-1]; last.fin != nil && last.fin.Reason == agent.ReasonAgentStopped {
			return nil // it may have been killed before its shell said anything
		}
		if len(pre) != 1 || len(recs) != 0 || !strings.Contains(pre[0], j.cmd[0]) || len(as) != 1 {
			errorf("job %d (not found): output %q; want one line naming %s", j.id, b, j.cmd[0])
		}
		return nil
	}
	// An attempt its agent's stop ended while it took its start time
	// printed only its trap's end line.
	cutEarly := as[0].fin != nil && as[0].fin.Reason == agent.ReasonAgentStopped && !neverRan(as[0]) &&
		!slices.ContainsFunc(pre, func(l string) bool { return !strings.HasPrefix(l, "end ") && l != "Terminated" })
	if len(pre) != 0 && !cutEarly {
		errorf("job %d: output %q before its first start line", j.id, pre)
	}
	var ivs []interval
	next := 0 // the next attempt a record may be of
	for _, rec := range recs {
		k := slices.IndexFunc(as[next:], func(a *attempt) bool { return a.pid == rec.pid })
		if k < 0 {
			// An attempt whose start the log lacks (defect 1).
			k = slices.IndexFunc(as[next:], func(a *attempt) bool { return a.started == 0 && !neverRan(a) })
		}
		if k < 0 {
			errorf("job %d: a record of pid %d, not an attempt's after attempt %d (output %q)", j.id, rec.pid, next, b)
			continue
		}
		a := as[next+k]
		next += k + 1
		want := []string{fmt.Sprintf("out-%d XCE_HOSTS=%s", j.i, xceHosts(a.place)), fmt.Sprintf("err-%d", j.i)}
		body, ends := rec.lines, 0
		for len(body) > 0 && strings.HasPrefix(body[len(body)-1], "end ") {
			body, ends = body[:len(body)-1], ends+1
		}
		good := ends == 1 && rec.start >= 0 && slices.Equal(body, want)
		if a.fin != nil && a.fin.Reason == agent.ReasonAgentStopped {
			// dash prints "Terminated", and a signal during the trap's
			// `date` leaves an "end" line without its time.
			body = slices.DeleteFunc(slices.Clone(body), func(l string) bool { return l == "Terminated" || l == "end" })
			good = ends >= 1 && ends <= 2 && rec.start >= 0 && slices.Equal(body, want[:min(len(body), 2)])
		}
		if !good || rec.jobID != strconv.FormatInt(j.id, 10) || rec.mcpu != mcpuHosts(a.place) {
			errorf("job %d attempt %d: output start %d id %s hosts %q, then %q; want id %d, hosts %q, then %q and an end line",
				j.id, a.n, rec.start, rec.jobID, rec.mcpu, rec.lines, j.id, mcpuHosts(a.place), want)
		}
		use, err := parseMCPU(rec.mcpu)
		if err != nil {
			errorf("job %d attempt %d: %v", j.id, a.n, err)
			continue
		}
		if j.shape == license {
			use["lic"] = 1
		}
		if end := rec.end(); rec.start >= 0 && end >= 0 {
			ivs = append(ivs, interval{job: j.id, start: rec.start, end: end, use: use})
		}
	}
	if last := as[len(as)-1]; last.fin != nil && last.fin.Reason != agent.ReasonAgentStopped && (len(recs) == 0 || (recs[len(recs)-1].pid != last.pid && last.started > 0)) {
		errorf("job %d: no record of its last attempt (%d, pid %d): output %q", j.id, last.n, last.pid, b)
	}
	return ivs
}

// describe says where and when each attempt ran and how it ended.
func describe(as []*attempt) string {
	var out []string
	for _, a := range as {
		out = append(out, fmt.Sprintf("attempt %d placed at %d on %v, started %d times (pid %d) at %d, ended at %d: %+v",
			a.n, a.placedAt, a.place.Hosts, a.started, a.pid, a.startAt, a.finAt, a.fin))
	}
	return strings.Join(out, "; ")
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
