package sacct

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"github.com/xce-sched/xce/slurm"
)

// head is the header of the trace's slurm_acct.out.
const head = "JobID|JobIDRaw|Cluster|Partition|Account|Group|GID|User|UID|Submit|Eligible|Start|End|Elapsed|ExitCode|State|NNodes|NCPUS|ReqCPUS|ReqMem|ReqGRES|Timelimit|QOS|NodeList|JobName|NTasks\n"

// TestRead reads records of the trace's shape; the expected values are
// the columns read by hand (2021-02-11T22:36:19 UTC is 1613082979).
func TestRead(t *testing.T) {
	text := head +
		"1001|1001|micro|normal|account2|user5|1005|user5|1005|2021-02-11T22:36:19|2021-02-11T22:36:19|2021-02-11T22:36:19|2021-02-11T22:36:34|00:00:15|0:0|COMPLETED|1|12|12|2800Mc||00:07:00|normal|b1|jobid_1001|\n" +
		"1003|1003|micro|normal|account2|user4|1004|user4|1004|2021-02-11T22:37:19|2021-02-11T22:37:19|2021-02-11T22:37:20|2021-02-11T22:39:55|00:02:35|0:0|COMPLETED|1|1|1|500000Mn||00:16:00|normal|b1|jobid_1003|\n" +
		"1009|1009|micro|normal|account1|user1|1001|user1|1001|2021-02-11T22:49:22|2021-02-11T22:49:22|2021-02-11T22:57:09|2021-02-11T22:58:16|00:01:07|0:0|COMPLETED|8|96|96|2800Mc||00:05:00|normal|b1,g1,m[3-4],n[1-4]|jobid_1009|\n" +
		"1016|1016|micro|normal|account1|user1|1001|user1|1001|2021-02-11T22:56:26|2021-02-11T22:56:26|2021-02-11T23:16:00|2021-02-11T23:28:53|00:12:53|0:0|COMPLETED|1|2|2|2800Mc|gpu:2|00:24:00|normal|g1|jobid_1016|\n" +
		"1149|1149|micro|normal|account1|user3|1003|user3|1003|2021-02-11T23:30:00|2021-02-11T23:30:00|2021-02-12T00:00:00|2021-02-12T00:12:01|00:12:01|0:15|TIMEOUT|1|6|6|2800Mc||00:12:00|normal|n1|jobid_1149|\n"
	jobs, st, err := Read(strings.NewReader(text), "a.out")
	if err != nil {
		t.Fatal(err)
	}
	const t0 = 1613082979
	want := []slurm.Job{
		{ID: 1001, Name: "jobid_1001", User: "user5", Account: "account2", Partition: "normal", QOS: "normal", Submit: t0, TimeLimit: 420,
			CPUs: 12, Nodes: 1, Mem: slurm.Memory{MB: 2800, Per: slurm.PerCPU}, Run: 15, Start: t0, End: t0 + 15, State: "COMPLETED", NodeList: "b1", Line: 2},
		{ID: 1003, Name: "jobid_1003", User: "user4", Account: "account2", Partition: "normal", QOS: "normal", Submit: t0 + 60, TimeLimit: 960,
			CPUs: 1, Nodes: 1, Mem: slurm.Memory{MB: 500000, Per: slurm.PerNode}, Run: 155, Start: t0 + 61, End: t0 + 216, State: "COMPLETED", NodeList: "b1", Line: 3},
		{ID: 1009, Name: "jobid_1009", User: "user1", Account: "account1", Partition: "normal", QOS: "normal", Submit: t0 + 783, TimeLimit: 300,
			CPUs: 96, Nodes: 8, Mem: slurm.Memory{MB: 2800, Per: slurm.PerCPU}, Run: 67, Start: t0 + 1250, End: t0 + 1317, State: "COMPLETED",
			NodeList: "b1,g1,m[3-4],n[1-4]", Line: 4},
		{ID: 1016, Name: "jobid_1016", User: "user1", Account: "account1", Partition: "normal", QOS: "normal", Submit: t0 + 1207, TimeLimit: 1440,
			CPUs: 2, Nodes: 1, Mem: slurm.Memory{MB: 2800, Per: slurm.PerCPU}, GPUs: 2, Run: 773, Start: t0 + 2381, End: t0 + 3154, State: "COMPLETED", NodeList: "g1", Line: 5},
		// TIMEOUT: it keeps the 721 s it ran, one more than its limit.
		{ID: 1149, Name: "jobid_1149", User: "user3", Account: "account1", Partition: "normal", QOS: "normal", Submit: t0 + 3221, TimeLimit: 720,
			CPUs: 6, Nodes: 1, Mem: slurm.Memory{MB: 2800, Per: slurm.PerCPU}, Run: 721, Start: t0 + 5021, End: t0 + 5742, State: "TIMEOUT", NodeList: "n1", Line: 6},
	}
	if !reflect.DeepEqual(jobs, want) {
		t.Errorf("jobs:\n%+v\nwant\n%+v", jobs, want)
	}
	if st != (Stats{}) {
		t.Errorf("stats %+v", st)
	}
	if r := jobs[4].Runtime(); r != 721 {
		t.Errorf("TIMEOUT runtime %d; want 721", r)
	}
}

// TestReadForms: another column order and case, sacct -p's trailing '|',
// ReqTRES for GPUs, Constraints, steps and jobs that never ran or still
// run, JobID without JobIDRaw, times D-HH:MM:SS and UNLIMITED, and a
// run time from Start and End when there is no Elapsed.
func TestReadForms(t *testing.T) {
	text := "jobid|user|submit|start|end|timelimit|reqcpus|reqtres|constraints|state|partition|\n" +
		"7|bob|2021-01-01T00:00:00|2021-01-01T00:01:00|2021-01-02T02:01:00|1-02:00:00|4|billing=4,cpu=4,gres/gpu=1,node=1|IB&CPU-N|COMPLETED|p|\n" +
		"7.batch|bob|2021-01-01T00:00:00|2021-01-01T00:01:00|2021-01-02T02:01:00||4|||COMPLETED||\n" +
		"8|bob|2021-01-01T00:00:00|Unknown|Unknown|UNLIMITED|1||(null)|CANCELLED by 0|p|\n" +
		"9|bob|2021-01-01T00:00:00|2021-01-01T00:00:05|Unknown|Partition_Limit|1|||RUNNING|p|\n"
	jobs, st, err := Read(strings.NewReader(text), "b.out")
	if err != nil {
		t.Fatal(err)
	}
	if st != (Stats{Steps: 1, NotRun: 1, Running: 1}) {
		t.Errorf("stats %+v", st)
	}
	want := slurm.Job{ID: 7, User: "bob", Partition: "p", Submit: 1609459200, TimeLimit: 93600, CPUs: 4, GPUs: 1, Constraint: "IB&CPU-N",
		Run: 93600, Start: 1609459260, End: 1609552860, State: "COMPLETED", Line: 2}
	if len(jobs) != 1 || !reflect.DeepEqual(jobs[0], want) {
		t.Errorf("jobs %+v; want %+v", jobs, want)
	}
}

// TestErrors: each error names the file, the line and the column.
func TestErrors(t *testing.T) {
	for _, c := range []struct{ text, want string }{
		{"", "c.out: empty: expected sacct -P output, a header line first"},
		{"JobID Submit\n", "c.out:1: not a sacct -P header: expected '|'-separated column names with JobID and Submit"},
		{"JobID|Submit|Elapsed\n", "c.out:1: the header has no NCPUS, AllocCPUS or ReqCPUS column: a job's CPUs are needed"},
		{"JobID|Submit|NCPUS\n", "c.out:1: the header has neither Elapsed nor Start and End: a job's run time is needed"},
		{"JobID|Submit|Start|Elapsed|NCPUS\n1|2021-01-01T00:00:00|2021-01-01T00:00:00|00:01:00\n", "c.out:2: 4 columns; the header has 5"},
		{"JobID|Submit|Start|Elapsed|NCPUS\nx|2021-01-01T00:00:00|2021-01-01T00:00:00|00:01:00|1\n", `c.out:2: column JobID: "x" is not a job ID`},
		{"JobID|Submit|Start|Elapsed|NCPUS\n5_1|2021-01-01T00:00:00|2021-01-01T00:00:00|00:01:00|1\n", `c.out:2: column JobID: "5_1": an array or heterogeneous job's ID; give the JobIDRaw column`},
		{"JobID|Submit|Start|Elapsed|NCPUS\n1|yesterday|2021-01-01T00:00:00|00:01:00|1\n", `c.out:2: column Submit: "yesterday": want a time like 2021-02-11T22:36:19`},
		{"JobID|Submit|Start|Elapsed|NCPUS\n1|2021-01-01T00:00:00|2021-01-01T00:00:00|1:2:3:4|1\n", `c.out:2: column Elapsed: time "1:2:3:4": more than three ':'-separated fields`},
		{"JobID|Submit|Start|Elapsed|NCPUS\n1|2021-01-01T00:00:00|2021-01-01T00:00:00|00:01:00|0\n", `c.out:2: column NCPUS: "0": want a count from 1 to 2^30`},
		{"JobID|Submit|Start|Elapsed|NCPUS|ReqMem\n1|2021-01-01T00:00:00|2021-01-01T00:00:00|00:01:00|1|4Q\n", `c.out:2: column ReqMem: memory "4Q": unknown unit "Q" (want K, M, G or T)`},
		{"JobID|Submit|Start|Elapsed|NCPUS|User\n1|2021-01-01T00:00:00|2021-01-01T00:00:00|00:01:00|1|a b\n", `c.out:2: column User: User "a b": white space, a control character or '|'`},
		{"JobID|Submit|Start|Elapsed|NCPUS|Constraints\n1|2021-01-01T00:00:00|2021-01-01T00:00:00|00:01:00|1|a&&b\n", `c.out:2: column Constraints: constraint "a&&b": '&' at byte 3 has no operand before it`},
		{"JobID|Submit|Start|Elapsed|NCPUS\n1|2021-01-01T00:00:00|2021-01-01T00:00:00|00:01:00|1\n1|2021-01-01T00:00:00|2021-01-01T00:00:00|00:01:00|1\n", "c.out:3: job 1 again (first on line 2)"},
		{"JobID|Submit|NCPUS|Elapsed\n" + strings.Repeat("x", slurm.MaxLine+1) + "\n", "c.out:2: line longer than 1048576 bytes"},
	} {
		_, _, err := Read(strings.NewReader(c.text), "c.out")
		if err == nil || err.Error() != c.want {
			t.Errorf("%.40q: error %v; want %s", c.text, err, c.want)
		}
	}
}

// TestLooks: the header is recognized whatever the file's name.
func TestLooks(t *testing.T) {
	for _, c := range []struct {
		line string
		want bool
	}{
		{head, true},
		{"JobIDRaw|Submit|NCPUS|Elapsed|", true},
		{"jobid|submit", true},
		{"JobID|Start", false},
		{"; MaxNodes: 128", false},
		{"1 0 10 100 4 -1 -1 4 200 -1 1 1 1 -1 1 -1 -1 -1", false},
	} {
		if got := Looks([]byte(c.line)); got != c.want {
			t.Errorf("Looks(%q) = %v", c.line, got)
		}
	}
}

// TestWriteRead: what Write writes, Read reads back to the same jobs.
func TestWriteRead(t *testing.T) {
	jobs := []slurm.Job{
		{ID: 1, Name: "a", User: "u", Account: "acc", Partition: "p", QOS: "normal", Submit: 1613082979, TimeLimit: 420, CPUs: 12, Nodes: 1,
			Mem: slurm.Memory{MB: 2800, Per: slurm.PerCPU}, Run: 15, Start: 1613082979, End: 1613082994, State: "COMPLETED", NodeList: "n[1-2]", Line: 2},
		{ID: 2, User: "v", Submit: 1613082980, TimeLimit: slurm.Unlimited, CPUs: 2, Nodes: 2, GPUs: 1, Constraint: "IB&!BigMem",
			Mem: slurm.Memory{MB: 500000, Per: slurm.PerNode}, Run: 86400 + 5, Start: 1613082990, End: 1613082990 + 86405, State: "TIMEOUT", Line: 3},
	}
	var b bytes.Buffer
	if dropped, err := Write(&b, jobs); err != nil || dropped != 0 {
		t.Fatal(dropped, err)
	}
	back, _, err := Read(&b, "w")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, jobs) {
		t.Errorf("read back\n%+v\nwant\n%+v", back, jobs)
	}
	// An OR constraint cannot be written: left empty, and counted.
	b.Reset()
	if dropped, err := Write(&b, []slurm.Job{{ID: 3, CPUs: 1, Constraint: "a|b", Start: slurm.Unknown, End: slurm.Unknown, TimeLimit: slurm.Unknown}}); err != nil || dropped != 1 ||
		!strings.HasSuffix(b.String(), "\n3|3||||||1970-01-01T00:00:00|Unknown|Unknown|00:00:00|Unknown|||1|1||||\n") {
		t.Errorf("dropped %d, %v:\n%s", dropped, err, b.String())
	}
	if _, err := Write(&b, []slurm.Job{{ID: 3, User: "a|b"}}); err == nil {
		t.Error("a '|' in a user: no error")
	}
}
