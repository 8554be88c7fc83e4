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

// TestSlurmTrace (issue 13): the Slurm micro-cluster workload (500 jobs;
// 10 nodes × 12 cores, as Slurm ran it) time-compressed 200 times — each
// job submitted at its submit time / 200, sleeping its run time / 200,
// with its time limit / 200 (rounded up) as its estimate, 12 tasks a host
// at most as Slurm's --ntasks-per-node — runs on a live server with 10
// agents under EASY. Its log then verifies with 0 differences, and `xce
// sim --from-data` replays it with its own metrics within 1%.
func TestSlurmTrace(t *testing.T) {
	if testing.Short() {
		t.Skip("replays 500 jobs over about 2.5 minutes")
	}
	jobs := slurmTrace(t)
	var cfg strings.Builder
	var hosts []string
	cfg.WriteString("hosts:\n")
	for i := 1; i <= 10; i++ {
		hosts = append(hosts, fmt.Sprintf("h%d", i))
		fmt.Fprintf(&cfg, "  - {name: h%d, slots: 12}\n", i)
	}
	cfg.WriteString("queues:\n  - {name: normal, policy: easy}\nserver:\n  allow_root_jobs: true\n")
	r := newRig(t, cfg.String(), hosts...)

	begin := time.Now()
	for _, j := range jobs {
		time.Sleep(time.Until(begin.Add(time.Duration(j.submit) * time.Second / traceCompression)))
		req := api.JobRequest{TasksMin: j.procs, TasksMax: j.procs, ResReq: fmt.Sprintf("span[ptile=%d]", min(j.procs, 12)),
			Estimate: (j.limit + traceCompression - 1) / traceCompression, Cwd: r.work, Stdout: "/dev/null",
			Command: []string{"sleep", strconv.FormatFloat(float64(j.run)/traceCompression, 'f', 3, 64)}}
		if _, err := r.c.Submit(context.Background(), []api.JobRequest{req}); err != nil {
			t.Fatalf("job %d: %v", j.id, err)
		}
	}
	r.await("every job ends", 5*time.Minute, func() bool { return r.unfinished() == 0 })
	t.Logf("500 jobs ended %v after the first submit", time.Since(begin).Round(time.Second))
	r.stopServer()
	if keep := os.Getenv("XCE_E2E_KEEP_DATA"); keep != "" {
		// For a look at the log afterwards: XCE_E2E_KEEP_DATA=DIR.
		if out, err := exec.Command("cp", "-r", r.data, keep).CombinedOutput(); err != nil {
			t.Errorf("keep the data directory: %v %s", err, out)
		}
	}

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
