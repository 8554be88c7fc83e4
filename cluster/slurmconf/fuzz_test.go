package slurmconf

import (
	"bytes"
	"errors"
	"testing"

	"github.com/xce-sched/xce/cluster"
	"github.com/xce-sched/xce/slurm"
)

// FuzzParse: slurm.conf text never panics; an error is a *slurm.Error
// naming the file; a configuration that parses writes a scenario that
// the scenario loader accepts (or an error naming a line), and every
// node is a host unless it is FUTURE. The seeds are in
// testdata/fuzz/FuzzParse and below.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"NodeName=DEFAULT RealMemory=48000 Procs=12\nNodeName=n[1-4] Feature=IB,CPU-N\nPartitionName=normal Nodes=n[1-4] Default=YES MaxTime=INFINITE State=UP\n",
		"SchedulerType=sched/backfill\nPriorityType=priority/multifactor\nPriorityWeightAge=1000\nNodeName=g1 CPUs=8 Gres=gpu:tesla:2\n",
		"NodeName=a \\\n CPUs=2 # x\nPartitionName=p Nodes=ALL DefMemPerCPU=100 PriorityTier=2\n",
		"NodeName=n[01-10,12] State=DRAIN Weight=3\nPartitionName=DEFAULT MaxTime=1-00:00:00\nPartitionName=q Nodes=n[01-02]\n",
		"SchedulerParameters=bf_continue,bf_max_job_test=7,bf_window=60\nNodeName=n1\nPartitionName=p Nodes=n1\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Parse(bytes.NewReader(data), "f.conf")
		if err != nil {
			var se *slurm.Error
			if !errors.As(err, &se) || se.File != "f.conf" {
				t.Fatalf("error %v (%T) is not a *slurm.Error of f.conf", err, err)
			}
			return
		}
		// What Parse takes, --cluster reads as slurm.conf (it has a
		// NodeName line), whatever the file's name.
		if len(data) < lookBytes && !LooksNamed("f.yaml", data) {
			t.Fatalf("Parse takes %q, Looks does not", data)
		}
		if len(c.Nodes) > 2000 {
			return // loading a scenario of that many hosts is slow, not different
		}
		yaml, _, err := Scenario(c, Options{})
		if err != nil {
			var se *slurm.Error
			if !errors.As(err, &se) {
				t.Fatalf("Scenario error %v (%T) is not a *slurm.Error", err, err)
			}
			return
		}
		cl, err := cluster.Parse("f.yaml", yaml)
		if err != nil {
			// The importer checks what it writes, names and numbers
			// included; what the loader refuses it must refuse first.
			t.Fatalf("the import of\n%s\ndoes not load: %v\n%s", data, err, yaml)
		}
		future := 0
		for _, n := range c.Nodes {
			if n.State == "FUTURE" {
				future++
			}
		}
		if len(cl.Hosts) != len(c.Nodes)-future {
			t.Fatalf("%d hosts for %d nodes (%d FUTURE)", len(cl.Hosts), len(c.Nodes), future)
		}
	})
}
