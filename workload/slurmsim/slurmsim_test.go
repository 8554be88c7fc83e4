package slurmsim

import (
	"reflect"
	"strings"
	"testing"

	"github.com/xce-sched/xce/slurm"
)

// TestRead reads lines of the trace's jobs500.events (and the -jid form
// of jobs500org.events); the expected jobs are their options read by
// hand: IDs from the first ID in line order unless -jid gives one, -dt
// as the submit time, -sim-walltime -1 as RunToLimit.
func TestRead(t *testing.T) {
	text := `-dt 0 -e submit_batch_job | -J jobid_1001 -sim-walltime 15 --uid=user5 -t 00:07:00 -n 12 --ntasks-per-node=12 -A account2 -p normal -q normal pseudo.job
-dt 49 -e submit_batch_job | -J jobid_1002 -sim-walltime 1201 --uid=user1 -t 00:30:00 -n 1 --ntasks-per-node=1 -A account1 -p normal -q normal --constraint=CPU-N pseudo.job

# a comment
-dt 60 -e submit_batch_job | -J jobid_1003 -sim-walltime -1 --uid=user4 -t 00:16:00 -n 1 --ntasks-per-node=1 -A account2 -p normal -q normal --mem=500000 pseudo.job
-dt 871 -e submit_batch_job | -jid 2000 -sim-walltime 0 --uid user4 -t 30 -N 2 --ntasks-per-node 2 -c 3 --gres=gpu:1 --mem-per-cpu=1G pseudo.job
-dt 900 -e submit_batch_job | -J x -sim-walltime 5 --uid=u -t 1-00:00:00 -n 4 pseudo.job
`
	jobs, err := Read(strings.NewReader(text), "j.events", 1001)
	if err != nil {
		t.Fatal(err)
	}
	u := slurm.Unknown
	want := []slurm.Job{
		{ID: 1001, Name: "jobid_1001", User: "user5", Account: "account2", Partition: "normal", QOS: "normal", Submit: 0, TimeLimit: 420,
			CPUs: 12, CPUsPerNode: 12, Run: 15, Start: u, End: u, Line: 1},
		{ID: 1002, Name: "jobid_1002", User: "user1", Account: "account1", Partition: "normal", QOS: "normal", Submit: 49, TimeLimit: 1800,
			CPUs: 1, CPUsPerNode: 1, Constraint: "CPU-N", Run: 1201, Start: u, End: u, Line: 2},
		{ID: 1003, Name: "jobid_1003", User: "user4", Account: "account2", Partition: "normal", QOS: "normal", Submit: 60, TimeLimit: 960,
			CPUs: 1, CPUsPerNode: 1, Mem: slurm.Memory{MB: 500000, Per: slurm.PerNode}, Run: slurm.RunToLimit, Start: u, End: u, Line: 5},
		// -N 2, 2 tasks a node, 3 CPUs a task: 12 CPUs, 6 a node; -t 30 is minutes.
		{ID: 2000, User: "user4", Submit: 871, TimeLimit: 1800, CPUs: 12, Nodes: 2, CPUsPerNode: 6, GPUs: 1,
			Mem: slurm.Memory{MB: 1024, Per: slurm.PerCPU}, Run: 0, Start: u, End: u, Line: 6},
		// Numbering goes on after a -jid.
		{ID: 2001, Name: "x", User: "u", Submit: 900, TimeLimit: 86400, CPUs: 4, Run: 5, Start: u, End: u, Line: 7},
	}
	if !reflect.DeepEqual(jobs, want) {
		t.Errorf("jobs:\n%+v\nwant\n%+v", jobs, want)
	}
	if r := jobs[2].Runtime(); r != 960 {
		t.Errorf("-sim-walltime -1 runs %d s; want its limit, 960", r)
	}
}

// TestErrors: each error names the file, the line and the option.
func TestErrors(t *testing.T) {
	for _, c := range []struct{ text, want string }{
		{"-dt 0 -e submit_batch_job -n 1", "e:1: no '|' between the event and the job's options"},
		{"-dt x -e submit_batch_job | -n 1", `e:1: -dt "x": want seconds from 0 to 10^15`},
		{"-dt 0 -e cancel_job | -n 1", `e:1: -e "cancel_job": only submit_batch_job events are supported`},
		{"-dt 0 | -n 1", "e:1: the event needs -dt and -e"},
		{"-dt 0 -e submit_batch_job -x | -n 1", "e:1: -x: no value"},
		{"-dt 0 -e submit_batch_job | -n 0", `e:1: -n: "0": want an integer from 1 to 2^30`},
		{"-dt 0 -e submit_batch_job | -n", `e:1: "-n": no value`},
		{"-dt 0 -e submit_batch_job | -t 1:2:3:4", `e:1: -t: time "1:2:3:4": more than three ':'-separated fields`},
		{"-dt 0 -e submit_batch_job | -sim-walltime -2", `e:1: -sim-walltime: "-2": want seconds, or -1 to run until the time limit`},
		{"-dt 0 -e submit_batch_job | --mem=4X", `e:1: --mem: memory "4X": unknown unit "X" (want K, M, G or T)`},
		{"-dt 0 -e submit_batch_job | --gres=mps:100", `e:1: --gres: mps: only GPUs are supported`},
		{"-dt 0 -e submit_batch_job | --constraint=a&", `e:1: --constraint: constraint "a&": ends without an operand`},
		{"-dt 0 -e submit_batch_job | --uid=a|b", `e:1: --uid: user "a|b": white space, a control character or '|'`},
		{"-dt 0 -e submit_batch_job | --exclusive x", `e:1: "--exclusive": option not supported (docs/slurm.md lists those read)`},
		{"-dt 0 -e submit_batch_job | a.job b.job", `e:1: "b.job": a second script name (the first is the job's script)`},
		{"-dt 0 -e submit_batch_job | -jid 5\n-dt 1 -e submit_batch_job | -jid 5", "e:2: job 5 again (first on line 1)"},
		{"-dt 0 -e submit_batch_job | -J " + strings.Repeat("x", slurm.MaxLine), "e:1: line longer than 1048576 bytes"},
	} {
		_, err := Read(strings.NewReader(c.text), "e", 1)
		if err == nil || err.Error() != c.want {
			t.Errorf("%.50q: error %v; want %s", c.text, err, c.want)
		}
	}
}

func TestLooks(t *testing.T) {
	for _, c := range []struct {
		line string
		want bool
	}{
		{"-dt 0 -e submit_batch_job | -J jobid_1001 -n 1 pseudo.job", true},
		{"\xef\xbb\xbf-dt 0 -e submit_batch_job | -n 1", true},
		{"JobID|Submit", false},
		{"-dt 0 -e x", false},
		{"; MaxNodes: 128", false},
	} {
		if got := Looks([]byte(c.line)); got != c.want {
			t.Errorf("Looks(%q) = %v", c.line, got)
		}
	}
}
