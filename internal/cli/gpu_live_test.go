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
	"testing"

	"github.com/xce-sched/xce/internal/api"
	"github.com/xce-sched/xce/sim"
)

const gpuRigConfig = `hosts:
  - {name: h1, slots: 4, gpus: 4, gpu_model: A100}
  - {name: h2, slots: 4, gpus: 2, gpu_model: V100}
queues:
  - {name: normal, policy: firstfit}
server:
  heartbeat_timeout: 1s
  kill_grace: 2s
  cycle_interval: 10ms
  allow_root_jobs: true
`

// TestRemoteAgentsGPUs runs a server in this process and `xce agent`
// processes for h1 (4 GPUs) and h2 (2), on loopback, and submits GPU jobs
// that print what the agent gave them, then wait for a file, so that all
// hold their devices together (hand-worked, firstfit, in submit order):
//
//   - job 1, -gpu num=2 on h1 (select[hname==h1]): h1's 0 and 1;
//   - job 2, -gpu "num=1:mode=exclusive_process" on h1: h1's 2;
//   - job 3, 2 tasks, span[ptile=1], -gpu num=1 (per host): h1's 3 and
//     h2's 0; its command runs on h1, its first host;
//   - job 4, rusage[ngpus_physical=1] on h2 (select[gpu_model == V100]):
//     h2's 1.
//
// Each job's CUDA_VISIBLE_DEVICES is the devices its allocation records
// on its first host (xce jobs --json "gpus"), XCE_GPUS those of every
// host, XCE_GPU_MODE its mode. Once they end, `xce sim verify` replays
// the log with the same decisions, devices included.
func TestRemoteAgentsGPUs(t *testing.T) {
	if testing.Short() {
		t.Skip("runs agent processes")
	}
	r := newRigOf(t, gpuRigConfig)
	r.startAgent("h1")
	r.startAgent("h2")
	r.await("h1 and h2 ok", waitShort, func() bool { h := r.hosts(); return h["h1"] == "ok" && h["h2"] == "ok" })
	script := `echo "$CUDA_VISIBLE_DEVICES|$XCE_GPUS|$XCE_GPU_MODE"; while [ ! -e go ]; do sleep 0.05; done`
	jobs := []struct {
		tasks       int
		resreq, gpu string
		gpus        map[string][]int
		env         string
	}{
		{1, "select[hname==h1]", "num=2", map[string][]int{"h1": {0, 1}}, "0,1|h1:0,1|shared"},
		{1, "select[hname==h1]", "num=1:mode=exclusive_process", map[string][]int{"h1": {2}}, "2|h1:2|exclusive_process"},
		{2, "span[ptile=1]", "num=1", map[string][]int{"h1": {3}, "h2": {0}}, "3|h1:3 h2:0|shared"},
		{1, "select[gpu_model == V100] rusage[ngpus_physical=1]", "", map[string][]int{"h2": {1}}, "1|h2:1|shared"},
	}
	ids := make([]int64, len(jobs))
	for i, j := range jobs {
		rep, err := r.c.Submit(context.Background(), []api.JobRequest{{TasksMin: j.tasks, TasksMax: j.tasks, ResReq: j.resreq, GPU: j.gpu,
			Command: []string{"sh", "-c", script}, Cwd: r.dir, Env: []string{"PATH=" + os.Getenv("PATH"), "CUDA_VISIBLE_DEVICES=9"},
			Stdout: fmt.Sprintf("gpu%d.out", i+1)}})
		if err != nil {
			t.Fatal(err)
		}
		ids[i] = rep.IDs[0]
		r.record(r.running(ids[i]).PID)
	}
	for i, j := range jobs {
		got := r.jobs()[ids[i]]
		if !reflect.DeepEqual(got.GPUs, j.gpus) {
			t.Errorf("job %d holds %v, want %v", ids[i], got.GPUs, j.gpus)
		}
		name := fmt.Sprintf("gpu%d.out", i+1)
		r.await(name+" written", waitShort, func() bool { return strings.HasSuffix(r.read(name), "\n") })
		if out := strings.TrimSpace(r.read(name)); out != j.env {
			t.Errorf("job %d printed %q, want %q", ids[i], out, j.env)
		}
		// The device list the job saw is what its allocation records on
		// its first host (the first bucket: h1 here, or h2 for job 4).
		first := "h1"
		if _, ok := j.gpus[first]; !ok {
			first = "h2"
		}
		if seen, _, _ := strings.Cut(r.read(name), "|"); seen != joinInts(got.GPUs[first]) {
			t.Errorf("job %d saw CUDA_VISIBLE_DEVICES=%s, its allocation records %v on %s", ids[i], seen, got.GPUs[first], first)
		}
	}
	var long bytes.Buffer
	if err := writeJobsLong(&long, []api.JobInfo{r.jobs()[ids[2]]}); err != nil || !strings.Contains(long.String(), "  GPU requirement <num=1>\n") ||
		!strings.Contains(long.String(), "  GPUs <h1:3 h2:0>\n") {
		t.Errorf("jobs -l of job 3: %v\n%s", err, long.String())
	}
	if err := os.WriteFile(filepath.Join(r.dir, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		if j := r.ended(id); j.State != "DONE" {
			t.Errorf("job %d: %+v, want DONE", id, j)
		}
	}
	// The rig's server records no configuration: verify gets it.
	cfg := filepath.Join(r.dir, "gpu.yaml")
	if err := os.WriteFile(cfg, []byte(gpuRigConfig), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	code := Run(context.Background(), []string{"sim", "verify", "--json", "--config", cfg, "--data", r.data}, &out, &errb)
	var rep sim.VerifyReport
	if err := json.Unmarshal(out.Bytes(), &rep); code != ExitOK || err != nil || rep.Decisions < len(jobs) || len(rep.Differences) != 0 {
		t.Errorf("sim verify: exit %d, %s %s", code, out.String(), errb.String())
	}
}
