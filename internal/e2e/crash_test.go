//go:build linux

package e2e

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/xce-sched/xce/internal/api"
	"github.com/xce-sched/xce/internal/event"
	"github.com/xce-sched/xce/internal/state"
)

// lostReason is the end reason of a job a dev server's earlier run left
// running (internal/daemon.devStart).
const lostReason = "lost when the server restarted"

// Storm parameters: kills, submitting clients, how long a server lives
// before it is killed and how long it stays down.
const (
	stormKills   = 22
	stormClients = 3
	minUp, maxUp = 300 * time.Millisecond, 1200 * time.Millisecond
	maxDown      = 150 * time.Millisecond
	// Every fourth restart is killed too, at most maxEarly after it began.
	maxEarly = 100 * time.Millisecond
)

// submission is one `xce submit` of the storm: the job's name (unique),
// its command line, whether it is rerunnable (-r), and how the command
// ended.
type submission struct {
	name, line string
	rerun      bool
	r          result
	id         int64 // the acknowledged ID (exit 0)
}

// death is what the log held when the server was killed: its last index
// and the jobs it showed running; and the job processes still alive once
// the killed server was reaped.
type death struct {
	last      uint64
	running   []attempt
	survivors []proc
}

func seed(t *testing.T) uint64 {
	s := uint64(time.Now().UnixNano())
	if v := os.Getenv("XCE_E2E_SEED"); v != "" {
		s, _ = strconv.ParseUint(v, 10, 64)
	}
	t.Logf("seed %d (XCE_E2E_SEED=%d repeats the random choices)", s, s)
	return s
}

// TestCrashStorm kills the dev server with SIGKILL at random moments
// (stormKills times) while clients submit short jobs and jobs run, and
// restarts it on the same data directory each time. It proves that:
//   - every acknowledged submit exists, under its ID, with the name and
//     command submitted; IDs are dense (1..N) and no submit is stored
//     twice;
//   - a submit that fails exits 1, and one refused because no server
//     listened stored nothing;
//   - the log folds (state.Apply's checks hold: no attempt started twice,
//     no finish of an attempt not running) and no job was placed, started
//     or finished more than once; no job's output shows two runs;
//   - every job ends DONE (exit 0), or EXIT "lost when the server
//     restarted" (exit -1); the jobs ended lost after a restart are
//     exactly those the log showed running when the server was killed.
//
// Two defects it found are fixed and checked strictly: the processes of
// the jobs that ran when the server was killed outlived it
// (TestRegressionJobOutlivesKilledServer), and a job the restarted server
// placed before it had ended the earlier run's jobs was ended "lost" too
// (TestRegressionRestartLosesNewJob).
func TestCrashStorm(t *testing.T) {
	needBinary(t)
	const strict = true
	sd := seed(t)
	rng := rand.New(rand.NewPCG(sd, 0))
	dir := tempDir(t)
	data := filepath.Join(dir, "data")
	mark := strconv.FormatUint(sd, 36)
	env := clientEnv(filepath.Join(data, "xce.sock"), dir, mark)
	t.Cleanup(func() {
		if left := endOrphans(5 * time.Second); len(left) > 0 {
			t.Errorf("processes %v did not end", left)
		}
	})
	start := time.Now()
	srv := startServer(t, data, dir, env)
	c := client{env: env, dir: dir}

	var mu sync.Mutex
	var subs []submission
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range stormClients {
		wrng := rand.New(rand.NewPCG(sd, uint64(w)+1))
		wg.Go(func() {
			for seq := 0; ; seq++ {
				select {
				case <-stop:
					return
				default:
				}
				s := submission{name: fmt.Sprintf("c%d.%d", w, seq), line: fmt.Sprintf("echo ran; sleep 0.0%d", 1+wrng.IntN(5)),
					rerun: wrng.IntN(4) == 0}
				args := []string{"submit", "--json", "-J", s.name}
				if s.rerun {
					args = append(args, "-r")
				}
				s.r = c.run(append(args, "--", "sh", "-c", s.line)...)
				if s.r.code == 0 {
					var ack struct {
						ID    int64  `json:"id"`
						Queue string `json:"queue"`
					}
					if err := json.Unmarshal([]byte(s.r.out), &ack); err != nil || ack.ID < 1 || ack.Queue != "normal" {
						t.Errorf("submit %s: acknowledged %v (%v)", s.name, s.r, err)
					}
					s.id = ack.ID
				}
				mu.Lock()
				subs = append(subs, s)
				mu.Unlock()
				time.Sleep(time.Duration(20+wrng.IntN(60)) * time.Millisecond)
			}
		})
	}

	var deaths []death
	kill := func() {
		srv.kill9(t)
		d := death{survivors: jobProcesses(mark)}
		st, _ := readLog(t, data)
		d.last = st.Index
		for _, j := range st.Jobs {
			if j.State == state.Run {
				d.running = append(d.running, attempt{j.Job, j.Attempt})
			}
		}
		deaths = append(deaths, d)
		time.Sleep(time.Duration(rng.Int64N(int64(maxDown))))
	}
	for k := range stormKills {
		time.Sleep(minUp + time.Duration(rng.Int64N(int64(maxUp-minUp))))
		kill()
		if k%4 == 3 {
			// Killed again while it starts: recovering, ending the
			// earlier run's jobs, or in its first cycles.
			srv = spawnServer(t, data, dir, env)
			time.Sleep(time.Duration(rng.Int64N(int64(maxEarly))))
			kill()
		}
		srv = startServer(t, data, dir, env)
		reapOrphans()
	}
	close(stop)
	wg.Wait()
	stormTime := time.Since(start)
	final := c.await(t, "every job ends", 40*time.Second, func(js []api.JobInfo) bool {
		return !slices.ContainsFunc(js, func(j api.JobInfo) bool { return j.State == "PEND" || j.State == "RUN" })
	})
	srv.stop(t)
	// Every job process is gone: those a killed server left were killed
	// by the next start (its running files), the others ended or were
	// killed by the final stop.
	if left := jobProcesses(mark); len(left) > 0 {
		t.Errorf("job processes %v run on after the final stop", left)
	}
	st, evs := readLog(t, data)

	checkSubmissions(t, subs, final, st)
	lost := checkLog(t, evs, st)
	known := checkDeaths(t, deaths, lost, evs)
	checkOutputs(t, dir, st)
	// A log of restarts after kill -9 replays with the decisions it
	// recorded (issue 13): each start rebuilt the scheduler where its
	// server.started event says.
	if r := c.run("sim", "verify", "--data", data); r.code != 0 || !strings.Contains(r.out, "\ndifferences         0\n") {
		t.Errorf("xce sim verify on the storm's log: %v", r)
	} else {
		t.Logf("xce sim verify on the storm's log:\n%s", r.out)
	}

	var survivors []int64 // jobs with a process alive after their server's death
	hits := 0             // kills while the log showed jobs running
	for _, d := range deaths {
		if len(d.running) > 0 {
			hits++
		}
		for _, p := range d.survivors {
			if !slices.Contains(survivors, p.job) {
				survivors = append(survivors, p.job)
			}
		}
	}
	acked, failed := 0, 0
	for _, s := range subs {
		if s.r.code == 0 {
			acked++
		} else {
			failed++
		}
	}
	t.Logf("%d kills (%d while jobs ran) in %v; %d submits acknowledged, %d failed; %d jobs, %d attempts ended lost; %v in all",
		len(deaths), hits, stormTime.Round(time.Millisecond), acked, failed, len(final), len(lost), time.Since(start).Round(time.Millisecond))
	if hits == 0 {
		t.Error("no kill came while a job ran")
	}
	if len(survivors) > 0 {
		// Expected: a SIGKILLed server cannot end its jobs; its next
		// start kills what is left (TestRegressionJobOutlivesKilledServer).
		t.Logf("the processes of jobs %v ran on between their server's death and its next start", survivors)
	}
	if len(known) > 0 {
		msg := fmt.Sprintf("known defect: jobs %v were placed by a restarted server, then ended %q by it", known, lostReason)
		if strict {
			t.Error(msg)
		} else {
			t.Log(msg)
		}
	}
}

// checkSubmissions checks the submits against the jobs: each
// acknowledged ID is the job submitted, with its name and command; IDs are
// dense; a job nobody was told of comes from a submit that failed after it
// reached a server; a failed submit exits 1.
func checkSubmissions(t *testing.T, subs []submission, jobs []api.JobInfo, st *state.State) {
	t.Helper()
	if len(jobs) != len(st.Jobs) {
		t.Errorf("xce jobs shows %d jobs, the log %d", len(jobs), len(st.Jobs))
	}
	byName := map[string]int64{}
	for i, j := range jobs {
		if j.ID != int64(i)+1 {
			t.Errorf("job %d is listed at position %d: IDs are not dense", j.ID, i+1)
		}
		if _, dup := byName[j.Name]; dup {
			t.Errorf("submit %s was stored twice", j.Name)
		}
		byName[j.Name] = j.ID
	}
	told := map[int64]bool{}
	unacked, refusals, cut := 0, 0, 0
	var cutMsgs []string
	for _, s := range subs {
		id, stored := byName[s.name]
		switch {
		case s.r.code == 0:
			if told[s.id] {
				t.Errorf("submit %s: ID %d was acknowledged twice", s.name, s.id)
			}
			told[s.id] = true
			if !stored || id != s.id {
				t.Errorf("submit %s: acknowledged as job %d, but that job is %d", s.name, s.id, id)
				continue
			}
			if j := jobs[id-1]; !slices.Equal(j.Command, []string{"sh", "-c", s.line}) || st.Job(id).Rerunnable != s.rerun {
				t.Errorf("job %d: command %q, rerunnable %v; submitted %q, %v", id, j.Command, st.Job(id).Rerunnable, s.line, s.rerun)
			}
		case s.r.code != 1 || s.r.out != "" || !strings.HasPrefix(s.r.errOut, "xce: "):
			t.Errorf("submit %s failed: %v; want exit 1, an error and no ID", s.name, s.r)
		case refused(s.r):
			refusals++
			if stored {
				t.Errorf("submit %s reached no server (%v) but is job %d", s.name, s.r, id)
			}
		default:
			if cut++; !slices.Contains(cutMsgs, s.r.errOut) && len(cutMsgs) < 3 {
				cutMsgs = append(cutMsgs, s.r.errOut)
			}
			if stored {
				unacked++ // the server died after storing it, before answering
			}
		}
	}
	if refusals == 0 {
		t.Error("no submit was made while the server was down")
	}
	t.Logf("failed submits: %d found no server listening, %d lost their server during the request %q", refusals, cut, cutMsgs)
	for _, j := range jobs {
		if !told[j.ID] && !slices.ContainsFunc(subs, func(s submission) bool { return s.name == j.Name && s.r.code == 1 }) {
			t.Errorf("job %d (%s) was stored but no submit of it failed or was acknowledged", j.ID, j.Name)
		}
	}
	if unacked > 0 {
		t.Logf("%d jobs were stored by a server killed before it answered their submit (the submit exited 1)", unacked)
	}
}

// attempt names one attempt of a job.
type attempt struct {
	job int64
	n   int
}

// refused says whether a submit failed because no server listened on
// the socket: the request was never sent.
func refused(r result) bool {
	return strings.Contains(r.errOut, "connect: connection refused") || strings.Contains(r.errOut, "connect: no such file or directory")
}

// checkLog checks each job's life in the log and its end: every attempt
// placed once, started at most once, finished once; a job not rerunnable
// has one attempt and ends DONE (exit 0) or EXIT -1 lost; a rerunnable
// one is requeued by every lost attempt and ends DONE. It returns the
// index of every finish with the lost reason.
func checkLog(t *testing.T, evs []event.Event, st *state.State) map[attempt]uint64 {
	t.Helper()
	placed, started, finished := map[attempt]int{}, map[attempt]int{}, map[attempt]int{}
	lost := map[attempt]uint64{}
	for _, e := range evs {
		switch e.Type {
		case event.CycleDecided:
			for _, p := range e.Cycle.Started {
				placed[attempt{p.Job, p.Attempt}]++
			}
		case event.JobStarted:
			started[attempt{e.Started.Job, e.Started.Attempt}]++
		case event.JobFinished:
			f := e.Finished
			a := attempt{f.Job, f.Attempt}
			finished[a]++
			if f.Reason == lostReason {
				lost[a] = e.Index
				if f.Requeued != st.Job(f.Job).Rerunnable || f.ExitCode != -1 || f.Signal != "" {
					t.Errorf("event %d: attempt %d of job %d ended lost with exit %d, signal %q, requeued %v; want exit -1, requeued when rerunnable",
						e.Index, f.Attempt, f.Job, f.ExitCode, f.Signal, f.Requeued)
				}
			}
		}
	}
	for _, j := range st.Jobs {
		if j.Attempt < 1 || (!j.Rerunnable && j.Attempt != 1) {
			t.Errorf("job %d (rerunnable %v): %d attempts", j.Job, j.Rerunnable, j.Attempt)
		}
		for n := 1; n <= j.Attempt; n++ {
			a := attempt{j.Job, n}
			if placed[a] != 1 || started[a] > 1 || finished[a] != 1 {
				t.Errorf("job %d attempt %d: placed %d times, started %d, finished %d; want 1, at most 1, 1", j.Job, n, placed[a], started[a], finished[a])
			}
			if _, ok := lost[a]; n < j.Attempt && !ok {
				t.Errorf("job %d attempt %d was followed by another but did not end lost", j.Job, n)
			}
		}
		switch {
		case j.State == state.Done && j.ExitCode == 0 && j.Signal == "" && j.EndReason == "":
		case !j.Rerunnable && j.State == state.Exit && j.ExitCode == -1 && j.Signal == "" && j.EndReason == lostReason:
		default:
			t.Errorf("job %d (rerunnable %v) ended %s, exit %d, signal %q, reason %q; want DONE, or (not rerunnable) EXIT -1 %q",
				j.Job, j.Rerunnable, j.State, j.ExitCode, j.Signal, j.EndReason, lostReason)
		}
	}
	return lost
}

// checkDeaths checks that the attempts ended lost after each restart are
// those the log showed running when the server was killed. It returns the
// jobs ended lost although placed by the restarted server itself (a known
// defect), which it tolerates.
func checkDeaths(t *testing.T, deaths []death, lost map[attempt]uint64, evs []event.Event) []int64 {
	t.Helper()
	placedAt := map[attempt]uint64{}
	for _, e := range evs {
		if e.Type == event.CycleDecided {
			for _, p := range e.Cycle.Started {
				placedAt[attempt{p.Job, p.Attempt}] = e.Index
			}
		}
	}
	var known []int64
	accounted := map[attempt]bool{}
	for k, d := range deaths {
		end := uint64(len(evs))
		if k+1 < len(deaths) {
			end = deaths[k+1].last
		}
		for _, a := range d.running {
			if k+1 < len(deaths) && slices.Contains(deaths[k+1].running, a) {
				continue // the next run was killed before it ended a
			}
			if at, ok := lost[a]; !ok || at <= d.last || at > end {
				t.Errorf("kill %d: job %d attempt %d ran when the server was killed (log at %d), but was not ended lost by the next run (%d)",
					k+1, a.job, a.n, d.last, at)
			}
			accounted[a] = true
		}
		for a, at := range lost {
			if at > d.last && at <= end && !slices.Contains(d.running, a) && placedAt[a] > d.last && placedAt[a] < at {
				known = append(known, a.job)
				accounted[a] = true
			}
		}
	}
	for a, at := range lost {
		if !accounted[a] {
			t.Errorf("job %d attempt %d was ended lost (event %d) but was not running when a server was killed", a.job, a.n, at)
		}
	}
	slices.Sort(known)
	return known
}

// checkOutputs checks each job's output file (xce-ID.out, where each run
// writes "ran"): one line per run, at most one per attempt; exactly one
// for a DONE job that is not rerunnable; at least one for any DONE job; a
// lost job may have no file (it never started).
func checkOutputs(t *testing.T, dir string, st *state.State) {
	t.Helper()
	for _, j := range st.Jobs {
		b, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("xce-%d.out", j.Job)))
		runs := strings.Count(string(b), "ran\n")
		switch {
		case err != nil && j.State == state.Done:
			t.Errorf("job %d is DONE but has no output: %v", j.Job, err)
		case len(b) != 4*runs:
			t.Errorf("job %d: output %q", j.Job, b)
		case runs > j.Attempt || (j.State == state.Done && runs < 1) || (j.State == state.Done && !j.Rerunnable && runs != 1):
			t.Errorf("job %d (%s, rerunnable %v, %d attempts) ran %d times", j.Job, j.State, j.Rerunnable, j.Attempt, runs)
		}
	}
}

// TestSecondServerRefused proves that a second `xce serve --dev` on the
// data directory of a running one exits 1 within 10 s, saying the log is
// in use, and leaves the first serving (its socket answers, its job goes
// on): the restarts of the storm rely on the log's lock and the socket's
// probe.
func TestSecondServerRefused(t *testing.T) {
	needBinary(t)
	dir := tempDir(t)
	data := filepath.Join(dir, "data")
	env := clientEnv(filepath.Join(data, "xce.sock"), dir, "second")
	t.Cleanup(func() { endOrphans(5 * time.Second) })
	srv := startServer(t, data, dir, env)
	c := client{env: env, dir: dir}
	c.submitJSON(t, "--", "sleep", "30")
	c.await(t, "job 1 runs", 15*time.Second, func(js []api.JobInfo) bool { return len(js) == 1 && js[0].PID != 0 })
	second := spawnServer(t, data, dir, env)
	select {
	case <-second.p.done:
	case <-time.After(10 * time.Second):
		t.Fatal("the second server still runs after 10 s")
	}
	if code := second.p.cmd.ProcessState.ExitCode(); code != 1 || !strings.Contains(second.stderr.String(), "events.db: in use by another process") {
		t.Errorf("second server: exit %d, %q; want 1, the log in use", code, second.stderr.String())
	}
	if js := c.jobs(t); len(js) != 1 || js[0].State != "RUN" || !alive(js[0].PID) {
		t.Errorf("the first server's job after the second's attempt: %+v", js)
	}
	srv.stop(t)
}
