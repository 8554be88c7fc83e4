package sim_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xce-sched/xce/cluster"
	"github.com/xce-sched/xce/cluster/slurmconf"
	"github.com/xce-sched/xce/sim"
	"github.com/xce-sched/xce/slurm"
	"github.com/xce-sched/xce/workload/sacct"
	"github.com/xce-sched/xce/workload/slurmsim"
)

// This file audits the errors of the input loaders `xce sim` runs (issue
// 29): each malformed file is read as the command reads it, and its
// error must start with the file's name and, where a line is at fault,
// name the line ("FILE:LINE: …").

// loadCluster reads a --cluster file as the CLI does: a slurm.conf
// (slurmconf.LooksNamed, by content and name) imported, else a scenario.
func loadCluster(path string) (*cluster.Cluster, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if !slurmconf.LooksNamed(path, data) {
		return cluster.Parse(path, data)
	}
	text, _, err := slurmconf.ConfigText(path, data)
	if err != nil {
		return nil, err
	}
	return cluster.Parse(path+" (imported)", text)
}

// slurmBase is the cluster of the Slurm workloads: one node of 4 CPUs in
// partition p.
func slurmBase(t *testing.T) *cluster.Cluster {
	t.Helper()
	path := filepath.Join(t.TempDir(), "slurm.conf")
	if err := os.WriteFile(path, []byte("NodeName=n1 CPUs=4\nPartitionName=p Nodes=n1 Default=YES\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := loadCluster(path)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// slurmJobs reads and prepares a Slurm workload (read: sacct.Read or
// slurmsim.Read) on base, as `xce sim --workload FILE --cluster` does.
func slurmJobs(path string, base *cluster.Cluster, read func(f *os.File) ([]slurm.Job, error), absolute bool) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	jobs, err := read(f)
	if err != nil {
		return err
	}
	w, err := sim.SlurmWorkload(jobs, base, path, absolute)
	if err != nil {
		return err
	}
	_, err = sim.Prepare(w, sim.Setup{Base: base})
	return err
}

// TestInputErrors: every error of the loaders names the file, and the
// line where a line is at fault. want is the whole message after the
// file's path (and "" only for a message whose wording is another
// library's: then prefix, which holds the line, is checked).
func TestInputErrors(t *testing.T) {
	base := slurmBase(t)
	swfLoad := func(setup sim.Setup) func(string) error {
		return func(path string) error {
			w, _, err := sim.ReadSWF(path, false)
			if err == nil {
				_, err = sim.Prepare(w, setup)
			}
			return err
		}
	}
	sacctLoad := func(path string) error {
		return slurmJobs(path, base, func(f *os.File) ([]slurm.Job, error) {
			jobs, _, err := sacct.Read(f, f.Name())
			return jobs, err
		}, true)
	}
	eventsLoad := func(path string) error {
		return slurmJobs(path, base, func(f *os.File) ([]slurm.Job, error) { return slurmsim.Read(f, f.Name(), 1) }, false)
	}
	clusterLoad := func(path string) error {
		_, err := loadCluster(path)
		return err
	}
	const rec = " -1 -1 1 -1 -1 1 1 -1 -1 -1 -1 -1 -1\n" // SWF fields 6 to 18 of a job of 1 processor
	const sacctHead = "JobIDRaw|Submit|Start|End|NCPUS|Partition\n"
	const ok = "|2021-01-01T00:00:00|2021-01-01T00:00:01|2021-01-01T00:00:05|1|p\n"
	for _, tc := range []struct {
		name, file, text string
		load             func(path string) error
		want             string // after "PATH"
		prefix           string // after "PATH", when want is ""
	}{
		// SWF (sim.ReadSWF, then sim.Prepare).
		{name: "swf fields", file: "t.swf", text: "; MaxNodes: 1\n1 0 -1 10 1\n", load: swfLoad(sim.Setup{}),
			want: ":2: expected 18 fields, got 5"},
		{name: "swf value", file: "t.swf", text: "; MaxNodes: 1\n1 0 -1 x 1" + rec, load: swfLoad(sim.Setup{}),
			want: `:2: field 4 (run time): "x" is not a number`},
		{name: "swf header", file: "t.swf", text: "; MaxNodes: many\n", load: swfLoad(sim.Setup{}),
			want: `:1: MaxNodes: "many" is not a number`},
		{name: "swf duplicate", file: "t.swf", text: "; MaxNodes: 1\n5 0 -1 1 1" + rec + "5 1 -1 1 1" + rec, load: swfLoad(sim.Setup{}),
			want: ":3: field 1 (job number): duplicate job number 5 (first on line 2)"},
		{name: "swf no MaxNodes", file: "t.swf", text: "1 0 -1 1 1" + rec, load: swfLoad(sim.Setup{}),
			want: ": the workload's header gives no MaxNodes: give --hosts (and --slots) or --cluster"},
		{name: "swf MaxNodes", file: "t.swf", text: "; MaxNodes: 20000000\n1 0 -1 1 1" + rec, load: swfLoad(sim.Setup{}),
			want: ":1: cluster of 20000000 hosts × 1 slots is too large"},
		{name: "swf MaxProcs", file: "t.swf", text: "; Computer: x\n; MaxNodes: 1\n; MaxProcs: 4000000000\n1 0 -1 1 1" + rec, load: swfLoad(sim.Setup{}),
			want: ":3: cluster of 1 hosts × 4000000000 slots is too large"},
		// Jobs 2 and 3 wait 6·10^14 s each after the one before: the
		// second think time passes 10^15 s, on line 4.
		{name: "swf think times", file: "t.swf", load: swfLoad(sim.Setup{Dependencies: true}),
			text: "; MaxNodes: 1\n1 0 -1 0 1" + rec +
				"2 0 -1 0 1 -1 -1 1 -1 -1 1 1 -1 -1 -1 -1 1 600000000000000\n" +
				"3 0 -1 0 1 -1 -1 1 -1 -1 1 1 -1 -1 -1 -1 2 600000000000000\n",
			want: ":4: job 3: the latest submit time plus the runtimes and the think times up to it exceed 10^15 s, the most a simulation may reach"},
		// sacct -P (sacct.Read, sim.SlurmWorkload, sim.Prepare).
		{name: "sacct header", file: "t.sacct", text: "JobIDRaw|Submit|Start|End\n", load: sacctLoad,
			want: ":1: the header has no NCPUS, AllocCPUS or ReqCPUS column: a job's CPUs are needed"},
		{name: "sacct columns", file: "t.sacct", text: sacctHead + "1|x\n", load: sacctLoad,
			want: ":2: 2 columns; the header has 6"},
		{name: "sacct time", file: "t.sacct", text: sacctHead + "1|yesterday|2021-01-01T00:00:01|2021-01-01T00:00:05|1|p\n", load: sacctLoad,
			prefix: ":2: column Submit: "},
		{name: "sacct duplicate", file: "t.sacct", text: sacctHead + "1" + ok + "1" + ok, load: sacctLoad,
			want: ":3: job 1 again (first on line 2)"},
		{name: "sacct partition", file: "t.sacct", text: sacctHead + "1" + strings.Replace(ok, "|p\n", "|nope\n", 1), load: sacctLoad,
			want: `:2: job 1: partition "nope" is not a queue of the cluster (queues: p)`},
		// The Slurm simulator's events (slurmsim.Read, ...).
		{name: "events dt", file: "t.events", text: "-dt x -e submit_batch_job | -J a pseudo.job\n", load: eventsLoad,
			want: `:1: -dt "x": want seconds from 0 to 10^15`},
		{name: "events option", file: "t.events", text: "# jobs\n-dt 0 -e submit_batch_job | --foo 1 pseudo.job\n", load: eventsLoad,
			want: `:2: "--foo": option not supported (docs/slurm.md lists those read)`},
		{name: "events partition", file: "t.events", text: "-dt 0 -e submit_batch_job | -jid 7 -p nope -sim-walltime 10 -t 1 pseudo.job\n", load: eventsLoad,
			want: `:1: job 7: partition "nope" is not a queue of the cluster (queues: p)`},
		// --cluster: slurm.conf by content whatever its name, or by its
		// name when it does not start as YAML; else a scenario.
		{name: "conf Include", file: "x.yaml", text: "Include nodes.conf\nNodeName=n1 CPUs=4\n", load: clusterLoad,
			want: ":1: Include is not supported: give the included file's lines in this one"},
		{name: "conf key without =", file: "cluster.yaml", text: "# nodes\nNodeName n1 CPUs=4\nPartitionName=p Nodes=n1\n", load: clusterLoad,
			want: `:2: "NodeName": expected Key=Value`},
		{name: "conf blanks around =", file: "x", text: "ClusterName = micro\nNodeName=n1 CPUs=4\n", load: clusterLoad,
			want: `:1: "ClusterName": expected Key=Value`},
		{name: "conf by name", file: "slurm.conf", text: "garbage\n", load: clusterLoad,
			want: `:1: "garbage": expected Key=Value`},
		{name: "conf node", file: "c.conf", text: "NodeName=n1 CPUs=4\nPartitionName=p Nodes=n9\n", load: clusterLoad,
			want: `:2: partition "p": node "n9" is not defined by a NodeName line`},
		{name: "conf no node", file: "slurm.conf", text: "ClusterName=c\n", load: clusterLoad,
			want: ": no NodeName line: a cluster needs nodes"},
		{name: "yaml", file: "c.conf", text: "hosts: [x\n", load: clusterLoad, prefix: ":1:"},
		{name: "yaml scenario", file: "c.yaml", text: "hosts:\n  - {name: a, slots: 0}\n", load: clusterLoad,
			want: ":2:22: hosts[0].slots: must be >= 1, got 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, tc.file)
			if err := os.WriteFile(path, []byte(tc.text), 0o644); err != nil {
				t.Fatal(err)
			}
			err := tc.load(path)
			if err == nil {
				t.Fatal("no error")
			}
			switch {
			case tc.want != "" && err.Error() != path+tc.want:
				t.Fatalf("got  %v\nwant %s", err, path+tc.want)
			case tc.want == "" && !strings.HasPrefix(err.Error(), path+tc.prefix):
				t.Fatalf("got %v, want it to start with %s", err, path+tc.prefix)
			}
		})
	}
}

// TestInputErrorsBeside: the files read beside a slurm.conf name
// themselves and their line: gres.conf, sacctmgr.script.
func TestInputErrorsBeside(t *testing.T) {
	for _, tc := range []struct {
		beside, text string
		want         string // after the beside file's path
		prefix       bool   // want is a prefix (the rest is slurm.GPUs's)
	}{
		{"gres.conf", "# gpus\nNodeName=n1 Name=gpu Count=x\n", `:2: Count="x": `, true},
		{"sacctmgr.script", "add account a\nadd account b parent=z\n", `:2: parent account "z" was not added before`, false},
	} {
		dir := t.TempDir()
		conf := filepath.Join(dir, "slurm.conf")
		if err := os.WriteFile(conf, []byte("GresTypes=gpu\nNodeName=n1 CPUs=4 Gres=gpu:1\nPartitionName=p Nodes=n1\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, tc.beside)
		if err := os.WriteFile(path, []byte(tc.text), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := loadCluster(conf)
		if err == nil || tc.prefix && !strings.HasPrefix(err.Error(), path+tc.want) || !tc.prefix && err.Error() != path+tc.want {
			t.Errorf("%s: got %v, want %s", tc.beside, err, path+tc.want)
		}
	}
}
