package cli

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xce-sched/xce/cluster"
	"github.com/xce-sched/xce/workload/sacct"
)

// tinyConf is a slurm.conf of two 4-CPU nodes in one partition, FIFO
// priority (priority/basic) and backfill.
const tinyConf = `ClusterName=tiny
SchedulerType=sched/backfill
SelectTypeParameters=CR_Core_Memory
SlurmUser=slurm
NodeName=n[1-2] CPUs=4 RealMemory=8000 Feature=ib
PartitionName=batch Nodes=n[1-2] Default=YES DefMemPerCPU=1000 MaxTime=1:00:00
`

// tinyAcct is sacct -P output of three jobs on tiny: A, 8 CPUs on 2
// nodes, from 0 to 100 s; B, 4 CPUs, submitted at 10 s, which Slurm ran
// from 100 to 150 s; C, 1 CPU with 7000 MB a node, submitted at 20 s.
const tinyAcct = `JobID|JobIDRaw|Partition|Account|User|Submit|Start|End|Elapsed|Timelimit|State|NNodes|NCPUS|ReqMem|ReqGRES|QOS
1|1|batch|acct|alice|2021-01-01T00:00:00|2021-01-01T00:00:00|2021-01-01T00:01:40|00:01:40|00:05:00|COMPLETED|2|8|1000Mc||normal
2|2|batch|acct|bob|2021-01-01T00:00:10|2021-01-01T00:01:40|2021-01-01T00:02:30|00:00:50|00:10:00|COMPLETED|1|4|1000Mc||normal
3|3|batch|acct|bob|2021-01-01T00:00:20|2021-01-01T00:01:40|2021-01-01T00:01:50|00:00:10|00:01:00|COMPLETED|1|1|7000Mn||normal
`

func writeFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestImportSlurmConf: the configuration on stdout loads; what xce does
// not use is on stderr; a bad file is a usage error naming its line.
func TestImportSlurmConf(t *testing.T) {
	dir := writeFiles(t, map[string]string{"slurm.conf": tinyConf, "bad.conf": "NodeName=n[2-1]\n"})
	code, out, errs := runXce("import", "slurm-conf", filepath.Join(dir, "slurm.conf"))
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	c, err := cluster.Parse("out.yaml", []byte(out))
	if err != nil {
		t.Fatalf("the output does not load: %v\n%s", err, out)
	}
	if len(c.Hosts) != 2 || c.Hosts[0].Slots != 4 || c.Queues[0].Name != "batch" || c.Queues[0].Policy != cluster.PolicyBackfill ||
		c.Queues[0].Picker != "priority" || c.Queues[0].DefaultRunLimit != 3600 {
		t.Errorf("hosts %+v, queues %+v", c.Hosts, c.Queues)
	}
	if !strings.Contains(errs, "xce: warning: "+filepath.Join(dir, "slurm.conf")+": 1 daemon, logging, accounting and security settings do not change the schedule and are not imported: SlurmUser (line 4)") {
		t.Errorf("stderr:\n%s", errs)
	}
	code, _, errs = runXce("import", "slurm-conf", filepath.Join(dir, "bad.conf"))
	if want := "xce: " + filepath.Join(dir, "bad.conf") + `:1: NodeName: host list "n[2-1]": range "2-1": 2 is above 1` + "\n"; code != ExitUsage || errs != want {
		t.Errorf("exit %d, stderr %q; want 2 and %q", code, errs, want)
	}
}

// TestSimSlurm replays tinyAcct on tinyConf. Worked out by hand: A takes
// both nodes from 0 to 100 s; B (4 CPUs) and C (1 CPU, 7000 MB of a
// node's 8000) wait for them; at 100 s B starts on n1 (first fit) and
// C, which B's 4000 MB leave no room for on n1, on n2, and they end at
// 150 and 110 s: just as Slurm ran them. The mean wait is (0 + 90 + 80)
// / 3 = 56.67 s on both sides.
func TestSimSlurm(t *testing.T) {
	dir := writeFiles(t, map[string]string{"slurm.conf": tinyConf, "acct.out": tinyAcct})
	out := filepath.Join(dir, "out")
	code, stdout, errs := runXce("sim", "--workload", filepath.Join(dir, "acct.out"), "--cluster", filepath.Join(dir, "slurm.conf"),
		"--versus-sacct", filepath.Join(dir, "acct.out"), "--json", "--out", out)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var res struct {
		Jobs     int     `json:"jobs"`
		WaitMean float64 `json:"wait_mean_s"`
		Versus   struct {
			Jobs       int     `json:"jobs"`
			WaitDiff   float64 `json:"wait_mean_diff"`
			KendallTau float64 `json:"kendall_tau"`
		} `json:"versus_sacct"`
	}
	if err := json.Unmarshal([]byte(stdout), &res); err != nil {
		t.Fatal(err)
	}
	if res.Jobs != 3 || res.WaitMean != 170.0/3 || res.Versus.Jobs != 3 || res.Versus.WaitDiff != 0 || res.Versus.KendallTau != 1 {
		t.Errorf("result %+v", res)
	}
	f, err := os.Open(filepath.Join(out, "sacct.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	jobs, _, err := sacct.Read(f, "sacct.csv")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, j := range jobs {
		got = append(got, j.NodeList+" "+j.State)
	}
	if strings.Join(got, ", ") != "n[1-2] COMPLETED, n1 COMPLETED, n2 COMPLETED" || jobs[1].Start != jobs[0].End || jobs[2].End != jobs[2].Start+10 {
		t.Errorf("sacct.csv: %q, %+v", got, jobs)
	}
	// A Slurm workload needs its cluster.
	code, _, errs = runXce("sim", "--workload", filepath.Join(dir, "acct.out"))
	if code != ExitUsage || !strings.Contains(errs, "a Slurm workload needs its cluster: give --cluster slurm.conf") {
		t.Errorf("exit %d, stderr %q", code, errs)
	}
}

// TestScheduleSlurmCluster: `xce schedule --cluster slurm.conf` takes
// only the scenario's jobs: the 8-CPU job on both nodes, then the 1-CPU
// job pending behind it (NotEnoughSlots) with a reservation.
func TestScheduleSlurmCluster(t *testing.T) {
	dir := writeFiles(t, map[string]string{"slurm.conf": tinyConf, "jobs.yaml": `# the hosts here are replaced by --cluster's
hosts:
  - {name: x, slots: 1}
jobs:
  - {id: 1, queue: batch, tasks: 8, resreq: "span[ptile=4]", runtime: 100, estimate: 300}
  - {id: 2, queue: batch, tasks: 1, runtime: 10, estimate: 60}
`})
	code, out, errs := runXce("schedule", "--json", "--cluster", filepath.Join(dir, "slurm.conf"), filepath.Join(dir, "jobs.yaml"))
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{`"id": 1, "state": "RUN", "hosts": {"n1": 4, "n2": 4}`, `"id": 2, "state": "PEND", "reason": "NotEnoughSlots"`} {
		if !strings.Contains(strings.Join(strings.Fields(out), " "), want) {
			t.Errorf("output lacks %s:\n%s", want, out)
		}
	}
	// A job's line is its line in the scenario.
	bad := writeFiles(t, map[string]string{"jobs.yaml": "hosts: []\njobs:\n  - {id: 1, queue: nowhere}\n"})
	code, _, errs = runXce("schedule", "--cluster", filepath.Join(dir, "slurm.conf"), filepath.Join(bad, "jobs.yaml"))
	if code != ExitUsage || !strings.Contains(errs, filepath.Join(bad, "jobs.yaml")+`:3:20: jobs[0].queue: unknown queue "nowhere"`) {
		t.Errorf("exit %d, stderr %q", code, errs)
	}
}

// TestLoadConfigSlurm: `xce serve --config slurm.conf` takes the
// imported configuration, whose text is what the log records.
func TestLoadConfigSlurm(t *testing.T) {
	dir := writeFiles(t, map[string]string{"slurm.conf": tinyConf})
	c, s, text, err := loadConfigFile(filepath.Join(dir, "slurm.conf"), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Hosts) != 2 || s == nil || !strings.Contains(text, "queues:") {
		t.Errorf("config %+v, server %+v, text:\n%s", c.Hosts, s, text)
	}
	if _, _, err := cluster.ParseConfig("again", []byte(text)); err != nil {
		t.Errorf("the recorded text does not load: %v", err)
	}
}
