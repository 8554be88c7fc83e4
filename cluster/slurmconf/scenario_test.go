package slurmconf

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xce-sched/xce/cluster"
)

// TestGolden imports testdata/example (slurm.conf with gres.conf and
// sacctmgr.script beside it) and compares the configuration and the
// warnings with the golden files, checked by hand against the rules of
// docs/slurm.md: d1 (Weight 5, DRAIN: closed) first, then c01–c03
// (Weight 10, 2 × 8 × 1 CPUs), then g1–g2 (Weight 20, 32 CPUs, 256G =
// 262144 MB, 4 a100 GPUs); f1 (FUTURE) left out; batch (Default=YES)
// first with DefaultTime 1 h as its run limit, gpu with PriorityTier 2,
// all (DRAIN) closed; the multifactor weights and times in seconds.
func TestGolden(t *testing.T) {
	dir := filepath.Join("testdata", "example")
	yaml, warnings, read, err := Import(Files{Conf: filepath.Join(dir, "slurm.conf")})
	if err != nil {
		t.Fatal(err)
	}
	if read.Gres != filepath.Join(dir, "gres.conf") || read.Sacctmgr != filepath.Join(dir, "sacctmgr.script") {
		t.Errorf("files read beside slurm.conf: %+v", read)
	}
	golden(t, filepath.Join(dir, "cluster.golden.yaml"), string(yaml))
	golden(t, filepath.Join(dir, "warnings.golden.txt"), strings.Join(warnings, "\n")+"\n")
	c, err := cluster.Parse("cluster.golden.yaml", yaml)
	if err != nil {
		t.Fatalf("the import does not load: %v", err)
	}
	if len(c.Hosts) != 6 || c.Hosts[0].Name != "d1" || c.Hosts[0].Status != cluster.HostClosed || c.Queues[0].Name != "batch" ||
		c.Slurm == nil || c.Slurm.FirstJobID != 100 || len(c.Slurm.Accounts) != 3 {
		t.Errorf("loaded: %d hosts, first %+v, first queue %s, slurm %+v", len(c.Hosts), c.Hosts[0], c.Queues[0].Name, c.Slurm)
	}
}

func golden(t *testing.T, path, got string) {
	t.Helper()
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("%s differs; got:\n%s", path, got)
	}
}

// traceDir is ../shared/traces/slurm-micro-cluster from the repository
// (or $XCE_TRACES/slurm-micro-cluster), skipped when absent.
func traceDir(t *testing.T) string {
	dir := os.Getenv("XCE_TRACES")
	if dir == "" {
		dir = filepath.Join("..", "..", "..", "shared", "traces")
	}
	dir = filepath.Join(dir, "slurm-micro-cluster")
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("trace folder %s absent (set XCE_TRACES): %v", dir, err)
	}
	return dir
}

// TestMicroCluster imports the trace's slurm.conf (with gres.conf and
// sacctmgr.script beside it): 10 nodes of 12 CPUs (b1 512000 MB, the
// others 48000, g1 2 GPUs), partitions normal (default, every node) and
// debug (n1, n2), the weights and times of its Priority* lines.
func TestMicroCluster(t *testing.T) {
	dir := traceDir(t)
	yaml, _, _, err := Import(Files{Conf: filepath.Join(dir, "slurm.conf")})
	if err != nil {
		t.Fatal(err)
	}
	c, err := cluster.Parse("micro", yaml)
	if err != nil {
		t.Fatal(err)
	}
	mem, _ := c.ResourceByName("mem")
	slots, gpus := 0, 0
	for _, h := range c.Hosts {
		slots += h.Slots
		if h.Name == "b1" && h.Capacity[mem] != 512000 || h.Name != "b1" && h.Capacity[mem] != 48000 {
			t.Errorf("host %s mem %v", h.Name, h.Capacity[mem])
		}
	}
	if g, ok := c.GPUResource(); ok {
		for _, h := range c.Hosts {
			if h.Capacity[g] > 0 {
				gpus += int(h.Capacity[g])
			}
		}
	}
	if len(c.Hosts) != 10 || slots != 120 || gpus != 2 {
		t.Errorf("%d hosts, %d slots, %d GPUs; want 10, 120, 2", len(c.Hosts), slots, gpus)
	}
	if len(c.Queues) != 2 || c.Queues[0].Name != "normal" || c.Queues[0].Hosts == nil && len(c.Queues[0].Hosts) != 10 ||
		len(c.Queues[1].Hosts) != 2 || c.Queues[0].Policy != cluster.PolicyBackfill || c.Queues[0].Picker != "multifactor" {
		t.Errorf("queues %+v", c.Queues)
	}
	want := cluster.Multifactor{WeightAge: 50000, WeightFairshare: 50000, WeightJobSize: 200000, WeightPartition: 1000000,
		WeightQOS: 20000, MaxAge: 5 * 3600, DecayHalfLife: 4 * 3600, CalcPeriod: 300, DampeningFactor: 5}
	if c.Slurm.Priority != want {
		t.Errorf("priority %+v; want %+v", c.Slurm.Priority, want)
	}
	if c.Slurm.FirstJobID != 1001 || len(c.Slurm.Accounts) != 3 || len(c.Slurm.QOS) != 2 {
		t.Errorf("slurm %+v", c.Slurm)
	}
}
