package agents

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/xce-sched/xce/internal/api"
	"github.com/xce-sched/xce/internal/client"
	"github.com/xce-sched/xce/internal/state"
	"github.com/xce-sched/xce/sim"
)

// traceJob is one job of the Slurm micro-cluster workload: submit and
// run times and the requested time in seconds, and processors.
type traceJob struct {
	id                 int64
	submit, run, limit int64
	procs              int
}

// slurmTrace reads ../shared/traces/slurm-micro-cluster/jobs500.swf (or
// $XCE_TRACES/...), an SWF-like file with ';' between fields and user
// names for IDs; it skips tb when the file is absent.
func slurmTrace(tb testing.TB) []traceJob {
	dir := os.Getenv("XCE_TRACES")
	if dir == "" {
		dir = filepath.Join("..", "..", "..", "..", "shared", "traces")
	}
	path := filepath.Join(dir, "slurm-micro-cluster", "jobs500.swf")
	f, err := os.Open(path)
	if err != nil {
		tb.Skipf("the Slurm micro-cluster workload is absent (set XCE_TRACES): %v", err)
	}
	defer f.Close()
	var jobs []traceJob
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		fs := strings.Split(sc.Text(), ";")
		if len(fs) < 9 {
			tb.Fatalf("%s:%d: %d fields", path, line, len(fs))
		}
		var v [9]int64
		for i := range v {
			if v[i], err = strconv.ParseInt(fs[i], 10, 64); err != nil {
				tb.Fatalf("%s:%d: field %d: %v", path, line, i+1, err)
			}
		}
		jobs = append(jobs, traceJob{id: v[0], submit: v[1], run: max(v[3], 0), procs: int(v[4]), limit: v[8]})
	}
	if err := sc.Err(); err != nil {
		tb.Fatal(err)
	}
	return jobs
}

// traceCompression divides every time of the Slurm workload.
const traceCompression = 200

// traceRun is one live run of the Slurm workload: its rig (the server
// stopped), and for each job (by ID) the first forecast of its start
// (Unix seconds) asked for right after its submit, when it was still
// pending then.
type traceRun struct {
	r        *rig
	forecast map[int64]*int64 // nil: the forecast said it never starts
	ranFirst int              // jobs already running when their forecast was asked
}

// runSlurmTrace runs the Slurm micro-cluster workload (500 jobs; 10 nodes
// × 12 cores, as Slurm ran it) time-compressed 200 times on a live server
// with 10 agents under policy: each job submitted at its submit time /
// 200, at most 12 tasks a host (Slurm's --ntasks-per-node), sleeping its
// run time / 200 with its time limit / 200 (rounded up) as its estimate;
// with exact, sleeping its run time / 200 rounded to whole seconds (at
// least 1) with exactly that as its estimate. After each submit it asks
// for the job's forecast (xce jobs --forecast, through the API).
func runSlurmTrace(t *testing.T, policy string, exact bool) *traceRun {
	jobs := slurmTrace(t)
	var cfg strings.Builder
	var hosts []string
	cfg.WriteString("hosts:\n")
	for i := 1; i <= 10; i++ {
		hosts = append(hosts, fmt.Sprintf("h%d", i))
		fmt.Fprintf(&cfg, "  - {name: h%d, slots: 12}\n", i)
	}
	fmt.Fprintf(&cfg, "queues:\n  - {name: normal, policy: %s}\nserver:\n  allow_root_jobs: true\n", policy)
	tr := &traceRun{r: newRig(t, cfg.String(), hosts...), forecast: map[int64]*int64{}}
	r := tr.r
	begin := time.Now()
	for _, j := range jobs {
		time.Sleep(time.Until(begin.Add(time.Duration(j.submit) * time.Second / traceCompression)))
		run := float64(j.run) / traceCompression
		est := (j.limit + traceCompression - 1) / traceCompression
		if exact {
			est = max(1, int64(math.Round(run)))
			run = float64(est)
		}
		req := api.JobRequest{TasksMin: j.procs, TasksMax: j.procs, ResReq: fmt.Sprintf("span[ptile=%d]", min(j.procs, 12)),
			Estimate: est, Cwd: r.work, Stdout: "/dev/null", Command: []string{"sleep", strconv.FormatFloat(run, 'f', 3, 64)}}
		rep, err := r.c.Submit(context.Background(), []api.JobRequest{req})
		if err != nil {
			t.Fatalf("job %d: %v", j.id, err)
		}
		js, err := r.c.JobsWith(context.Background(), client.JobsQuery{User: "all", IDs: rep.IDs, Forecast: true})
		if err != nil || len(js) != 1 {
			t.Fatalf("job %d: forecast: %v %+v", j.id, err, js)
		}
		if js[0].State != "PEND" {
			tr.ranFirst++
			continue
		}
		if !js[0].ForecastStart.Asked {
			t.Fatalf("job %d: no forecast in %+v", j.id, js[0])
		}
		tr.forecast[js[0].ID] = js[0].ForecastStart.Start
	}
	r.await("every job ends", 8*time.Minute, func() bool { return r.unfinished() == 0 })
	t.Logf("500 jobs ended %v after the first submit", time.Since(begin).Round(time.Second))
	r.stopServer()
	if keep := os.Getenv("XCE_E2E_KEEP_DATA"); keep != "" {
		// For a look at the log afterwards: XCE_E2E_KEEP_DATA=DIR.
		if out, err := exec.Command("cp", "-r", r.data, keep+"-"+policy).CombinedOutput(); err != nil {
			t.Errorf("keep the data directory: %v %s", err, out)
		}
	}
	return tr
}

// accuracy returns how many of the forecast jobs started within max(2 s,
// 5% of their wait) of their first forecast, of how many, from the log.
func (tr *traceRun) accuracy(t *testing.T) (good, n int) {
	st := tr.r.fold()
	for id, f := range tr.forecast {
		j := st.Job(id)
		n++
		if f == nil || j.StartTime == 0 {
			continue
		}
		start, wait := j.StartTime/1e9, float64(j.StartTime-j.SubmitTime)/1e9
		if math.Abs(float64(start-*f)) <= max(2, 0.05*wait) {
			good++
		}
	}
	return good, n
}

// TestSlurmTrace (issue 13): the Slurm workload under EASY with the
// requested times as estimates (runSlurmTrace). Its log verifies with 0
// differences, and `xce sim --from-data` replays it with its own metrics
// within 1%. The forecasts' accuracy is reported (no target).
func TestSlurmTrace(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("replays 500 jobs over about 4 minutes (.ci/run runs it without -race)")
	}
	tr := runSlurmTrace(t, "easy", false)
	r, jobs := tr.r, slurmTrace(t)
	good, n := tr.accuracy(t)
	t.Logf("EASY, requested times: %d of %d forecasts (%.1f%%) within max(2 s, 5%% of the wait) of the actual start; %d jobs ran before their forecast was asked",
		good, n, 100*float64(good)/float64(max(n, 1)), tr.ranFirst)

	rep := r.verify(0, "sim", "verify", "--data", r.data, "--json")
	if len(rep.Differences) != 0 || rep.Cycles == 0 {
		t.Errorf("verify: %d cycles, differences %+v", rep.Cycles, rep.Differences)
	}
	t.Logf("verify: %d events, %d cycles, %d decisions, %d differences", rep.Events, rep.Cycles, rep.Decisions, len(rep.Differences))

	var res struct {
		Recorded, Simulated sim.Summary
	}
	out := r.xce("", "sim", "--from-data", r.data, "--json")
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("sim --from-data: %v\n%s", err, out)
	}
	a, b := res.Recorded, res.Simulated
	if a.Jobs != len(jobs) || b.Jobs != len(jobs) {
		t.Errorf("jobs: recorded %d, simulated %d; want %d", a.Jobs, b.Jobs, len(jobs))
	}
	for _, m := range []struct {
		name     string
		rec, sim float64
	}{
		{"wait mean", a.WaitMeanS, b.WaitMeanS},
		{"response mean", a.ResponseMeanS, b.ResponseMeanS},
		{"bounded slowdown mean", a.BSLDMean, b.BSLDMean},
		{"makespan", float64(a.MakespanS), float64(b.MakespanS)},
		{"utilization", a.Utilization, b.Utilization},
	} {
		t.Logf("%s: recorded %.4f, simulated %.4f", m.name, m.rec, m.sim)
		if math.Abs(m.sim-m.rec) > 0.01*math.Abs(m.rec) {
			t.Errorf("%s: simulated %.4f, recorded %.4f: more than 1%% apart", m.name, m.sim, m.rec)
		}
	}
}

// TestSlurmTraceConservative (issue 13): the Slurm workload under
// conservative backfilling with exact estimates: the share of the jobs
// forecast while pending that start within max(2 s, 5% of their wait) of
// their first forecast is reported; the log verifies with 0 differences.
// The target is 95% (minAccuracy); docs/forecast.md records the
// measured figures.
func TestSlurmTraceConservative(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("replays 500 jobs over about 4 minutes (.ci/run runs it without -race)")
	}
	tr := runSlurmTrace(t, "conservative", true)
	good, n := tr.accuracy(t)
	t.Logf("conservative, exact estimates: %d of %d forecasts (%.1f%%) within max(2 s, 5%% of the wait) of the actual start; %d jobs ran before their forecast was asked",
		good, n, 100*float64(good)/float64(max(n, 1)), tr.ranFirst)
	if n < 100 || float64(good) < minAccuracy*float64(n) {
		t.Errorf("%d of %d forecasts accurate; want %.0f%% of 100 or more", good, n, 100*minAccuracy)
	}
	rep := tr.r.verify(0, "sim", "verify", "--data", tr.r.data, "--json")
	if len(rep.Differences) != 0 || rep.Cycles == 0 {
		t.Errorf("verify: %d cycles, differences %+v", rep.Cycles, rep.Differences)
	}
}

// fold returns the state the server's log folds to (the server stopped).
func (r *rig) fold() *state.State {
	r.tb.Helper()
	st := state.New()
	for _, e := range r.events() {
		if err := st.Apply(e); err != nil {
			r.tb.Fatal(err)
		}
	}
	return st
}

// minAccuracy is the least share of accurate forecasts TestSlurmTraceConservative
// accepts: the target.
const minAccuracy = 0.95
