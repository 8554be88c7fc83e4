package slurm

import (
	"strings"
	"testing"
)

func TestDuration(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int64
	}{
		{"0", 0},
		{"5", 300},                      // MM
		{"90", 5400},                    // MM beyond an hour
		{"07:30", 450},                  // MM:SS
		{"00:07:00", 420},               // HH:MM:SS
		{"01:02:03", 3723},              // HH:MM:SS
		{"1-00:00:00", 86400},           // D-HH:MM:SS
		{"2-03:04:05", 2*86400 + 11045}, // 2 days 3 h 4 min 5 s
		{"0-5", 18000},                  // D-HH (slurm.conf PriorityMaxAge=0-5: five hours)
		{"0-4", 14400},                  // PriorityDecayHalfLife=0-4
		{"7-0", 604800},                 // the default half-life, seven days
		{"1-2:30", 86400 + 9000},        // D-HH:MM
		{"00:00:01.500", 1},             // a fraction of a second is dropped
		{" 00:00:15 ", 15},              // blanks around
		{"UNLIMITED", Unlimited},
		{"infinite", Unlimited},
		{"INFINITE", Unlimited},
		{"Unknown", Unknown},
		{"", Unknown},
		{"Partition_Limit", Unknown},
		{"None", Unknown},
	} {
		got, err := Duration(c.in)
		if err != nil || got != c.want {
			t.Errorf("Duration(%q) = %d, %v; want %d", c.in, got, err, c.want)
		}
	}
}

func TestDurationErrors(t *testing.T) {
	for _, c := range []struct{ in, msg string }{
		{"abc", `time "abc": "abc": not a non-negative decimal number`},
		{"1:2:3:4", `time "1:2:3:4": more than three ':'-separated fields`},
		{"-5", `time "-5": days: "": not a non-negative decimal number`},
		{"1-", `time "1-": "": not a non-negative decimal number`},
		{"1:-2", `time "1:-2": days: "1:": not a non-negative decimal number`},
		{"5.5", `time "5.5": a fraction of a second follows MM:SS or HH:MM:SS`},
		{"00:01.x", `time "00:01.x": a fraction of a second follows MM:SS or HH:MM:SS`},
		{"99999999999999999", `time "99999999999999999": "99999999999999999": more than 16 digits`},
		{"9999999999999999-0", `time "9999999999999999-0": more than 10^15 seconds`},
		{"16666666666667", `time "16666666666667": more than 10^15 seconds`},
		{"1:+2", `time "1:+2": "+2": not a non-negative decimal number`},
	} {
		_, err := Duration(c.in)
		if err == nil || err.Error() != c.msg {
			t.Errorf("Duration(%q) error %v; want %s", c.in, err, c.msg)
		}
	}
}

func TestFormatDuration(t *testing.T) {
	for _, c := range []struct {
		in   int64
		want string
	}{{0, "00:00:00"}, {15, "00:00:15"}, {3723, "01:02:03"}, {86400, "1-00:00:00"}, {90061, "1-01:01:01"},
		{Unlimited, "UNLIMITED"}, {Unknown, "Unknown"}} {
		if got := FormatDuration(c.in); got != c.want {
			t.Errorf("FormatDuration(%d) = %q; want %q", c.in, got, c.want)
		}
	}
}

func TestParseMemory(t *testing.T) {
	for _, c := range []struct {
		in   string
		per  MemPer
		want Memory
	}{
		{"2800Mc", PerNode, Memory{2800, PerCPU}},
		{"500000Mn", PerCPU, Memory{500000, PerNode}},
		{"4Gn", PerCPU, Memory{4096, PerNode}},
		{"4G", PerNode, Memory{4096, PerNode}},
		{"4g", PerCPU, Memory{4096, PerCPU}},
		{"500000", PerNode, Memory{500000, PerNode}}, // megabytes by default
		{"1024K", PerNode, Memory{1, PerNode}},
		{"1T", PerNode, Memory{1048576, PerNode}},
		{"1.5G", PerNode, Memory{1536, PerNode}},
		{"0", PerNode, Memory{0, PerNode}},
		{"2GB", PerNode, Memory{2048, PerNode}},
	} {
		got, err := ParseMemory(c.in, c.per)
		if err != nil || got != c.want {
			t.Errorf("ParseMemory(%q) = %+v, %v; want %+v", c.in, got, err, c.want)
		}
	}
	for _, c := range []struct{ in, msg string }{
		{"", `memory "": empty`},
		{"4X", `memory "4X": unknown unit "X" (want K, M, G or T)`},
		{"M", `memory "M": "": not a non-negative decimal number`},
		{"1.2.3M", `memory "1.2.3M": "1.2.3": not a non-negative decimal number`},
		{"-4G", `memory "-4G": "": not a non-negative decimal number`},
		{"2000000000T", `memory "2000000000T": more than 10^15 MB`},
	} {
		_, err := ParseMemory(c.in, PerNode)
		if err == nil || err.Error() != c.msg {
			t.Errorf("ParseMemory(%q) error %v; want %s", c.in, err, c.msg)
		}
	}
	if s := (Memory{2800, PerCPU}).String(); s != "2800Mc" {
		t.Errorf("String = %q", s)
	}
	if s := (Memory{500000, PerNode}).String(); s != "500000Mn" {
		t.Errorf("String = %q", s)
	}
}

func TestHostlist(t *testing.T) {
	for _, c := range []struct {
		in   string
		want string // names joined by spaces
	}{
		{"n[1-4]", "n1 n2 n3 n4"},
		{"n[01-10,12]", "n01 n02 n03 n04 n05 n06 n07 n08 n09 n10 n12"},
		{"g1,b1", "g1 b1"},
		{"n[1-4],m[1-4],g1,b1", "n1 n2 n3 n4 m1 m2 m3 m4 g1 b1"},
		{"b1,g1,m[3-4],n[1-4]", "b1 g1 m3 m4 n1 n2 n3 n4"}, // sacct's NodeList order
		{"r[1-2]n[1-2]", "r1n1 r1n2 r2n1 r2n2"},
		{"n[7]", "n7"},
		{"node[1-2]-ib", "node1-ib node2-ib"},
		{"n[008-010]", "n008 n009 n010"},
		{"", ""},
	} {
		got, err := Hostlist(c.in)
		if err != nil || strings.Join(got, " ") != c.want {
			t.Errorf("Hostlist(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
	for _, c := range []struct{ in, msg string }{
		{"n[1-4", `host list "n[1-4": '[' without ']'`},
		{"n1-4]", `host list "n1-4]": ']' without '[' at byte 5`},
		{"n[[1]]", `host list "n[[1]]": nested '[' at byte 3`},
		{"n[4-1]", `host list "n[4-1]": range "4-1": 4 is above 1`},
		{"n[a-b]", `host list "n[a-b]": range "a-b": "a" is not a number`},
		{"n[]", `host list "n[]": empty range "[]"`},
		{"a,,b", `host list "a,,b": empty name`},
		{"n[1-2000000]", `host list "n[1-2000000]": more than 1000000 names`},
		{"a[1-1000]b[1-1001]", `host list "a[1-1000]b[1-1001]": more than 1000000 names`},
	} {
		_, err := Hostlist(c.in)
		if err == nil || err.Error() != c.msg {
			t.Errorf("Hostlist(%q) error %v; want %s", c.in, err, c.msg)
		}
	}
}

func TestCompressHostlist(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"n1 n2 n3 g1", "n[1-3],g1"},
		{"b1 g1 m3 m4 n1 n2 n3 n4", "b1,g1,m[3-4],n[1-4]"},
		{"n01 n02 n03", "n[01-03]"},
		{"n09 n10", "n[09-10]"},
		{"n8 n9 n10", "n[8-9],n10"},
		{"a b", "a,b"},
		{"n3 n2", "n3,n2"},
	} {
		if got := CompressHostlist(strings.Fields(c.in)); got != c.want {
			t.Errorf("CompressHostlist(%s) = %q; want %q", c.in, got, c.want)
		}
	}
}

func TestGPUs(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int
	}{
		{"", 0}, {"(null)", 0},
		{"gpu:2", 2}, {"gpu:1", 1}, {"gpu", 1}, {"gpu:tesla:2", 2}, {"gpu:tesla", 1},
		{"mps:100,gpu:2", 2}, {"mps:100", 0},
		{"billing=12,cpu=12,gres/gpu=2,mem=33600M,node=1", 2},
		{"cpu=1,gres/gpu:tesla=1,gres/gpu=1,mem=2800M", 1},
		{"cpu=1,gres/gpu:tesla=3", 3},
		{"cpu=12,mem=33600M,node=1", 0},
	} {
		got, err := GPUs(c.in)
		if err != nil || got != c.want {
			t.Errorf("GPUs(%q) = %d, %v; want %d", c.in, got, err, c.want)
		}
	}
	for _, c := range []struct{ in, msg string }{
		{"gpu:x:y:z", `gres "gpu:x:y:z": "gpu:x:y:z" has more than three ':'-separated fields`},
		{"gpu:tesla:x", `gres "gpu:tesla:x": "gpu:tesla:x": count "x": not a non-negative decimal number`},
		{"gres/gpu=-1", `gres "gres/gpu=-1": "gres/gpu=-1": count "-1": not a non-negative decimal number`},
		{"gpu:2G", `gres "gpu:2G": more than 1048576 GPUs`},
	} {
		_, err := GPUs(c.in)
		if err == nil || err.Error() != c.msg {
			t.Errorf("GPUs(%q) error %v; want %s", c.in, err, c.msg)
		}
	}
	if got := strings.Join(OtherGRES("mps:100,gpu:2,nvme:1"), " "); got != "mps nvme" {
		t.Errorf("OtherGRES = %q", got)
	}
}

func TestConstraint(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"", ""},
		{"CPU-N", "CPU_N"},
		{"IB&CPU-M", "IB && CPU_M"},
		{"IB,CPU-M", "IB && CPU_M"},
		{"CPU-N|CPU-M", "CPU_N || CPU_M"},
		{"IB&(CPU-N|CPU-M)", "IB && (CPU_N || CPU_M)"},
		{"[rack1|rack2]", "(rack1 || rack2)"},
		{"!BigMem", "!BigMem"},
		{"10GbE", "_10GbE"},
		{" a & b ", "a && b"},
	} {
		got, err := Constraint(c.in)
		if err != nil || got != c.want {
			t.Errorf("Constraint(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
	for _, c := range []struct{ in, msg string }{
		{"&a", `constraint "&a": '&' at byte 1 has no operand before it`},
		{"a&", `constraint "a&": ends without an operand`},
		{"a b", `constraint "a b": two features without an operator at byte 3`},
		{"(a", `constraint "(a": unbalanced parentheses`},
		{"a)", `constraint "a)": ')' at byte 2 closes nothing`},
		{"a*2", `constraint "a*2": counts ("feature*N") are not supported`},
		{"a$b", `constraint "a$b": unexpected '$' at byte 2`},
		{"a!b", `constraint "a!b": '!' at byte 2 follows an operand`},
		{"a(b)", `constraint "a(b)": '(' at byte 2 follows an operand`},
	} {
		_, err := Constraint(c.in)
		if err == nil || err.Error() != c.msg {
			t.Errorf("Constraint(%q) error %v; want %s", c.in, err, c.msg)
		}
	}
}

func TestTag(t *testing.T) {
	for _, c := range []struct{ in, want string }{{"IB", "IB"}, {"CPU-N", "CPU_N"}, {"gpu:a100", "gpu_a100"}, {"1x", "_1x"}, {".a", "_.a"}, {"", "_"}} {
		if got := Tag(c.in); got != c.want {
			t.Errorf("Tag(%q) = %q; want %q", c.in, got, c.want)
		}
	}
}

// TestResReq pins the requirement of the trace's job shapes
// (jobs500.events, slurm_acct.out), worked out by hand from the rules
// in the doc comment: DefMemPerCPU=2800 on 12-CPU nodes.
func TestResReq(t *testing.T) {
	def := Memory{2800, PerCPU}
	hostMem := Target{Mem: true, GPUs: true, MaxSlots: 12, DefMem: def}
	taskMem := Target{Mem: true, GPUs: true, MemPerTask: true, MaxSlots: 12, DefMem: def}
	for _, c := range []struct {
		name string
		job  Job
		t    Target
		want string
	}{
		{"12 on one node, default memory per host", Job{CPUs: 12, CPUsPerNode: 12}, hostMem, "span[ptile=12] rusage[mem=33600]"},
		{"12 on one node, default memory per task", Job{CPUs: 12, CPUsPerNode: 12}, taskMem, "span[ptile=12] rusage[mem=2800]"},
		{"--mem=500000 per node, per task", Job{CPUs: 1, CPUsPerNode: 1, Mem: Memory{500000, PerNode}}, taskMem, "span[ptile=1] rusage[mem=500000]"},
		{"--mem=500000 on 6 CPUs, per task", Job{CPUs: 6, CPUsPerNode: 6, Mem: Memory{500000, PerNode}}, taskMem, "span[ptile=6] rusage[mem=83333.33333333333]"},
		{"--mem=500000 on 6 CPUs, per host", Job{CPUs: 6, CPUsPerNode: 6, Mem: Memory{500000, PerNode}}, hostMem, "span[ptile=6] rusage[mem=500000]"},
		{"sacct 96 CPUs on 8 nodes", Job{CPUs: 96, Nodes: 8, Mem: Memory{2800, PerCPU}}, taskMem, "span[ptile=12] rusage[mem=2800]"},
		{"13 CPUs on 2 nodes", Job{CPUs: 13, Nodes: 2}, hostMem, "span[ptile=7] rusage[mem=19600]"},
		{"gpus per node", Job{CPUs: 2, CPUsPerNode: 2, GPUs: 2}, taskMem, "span[ptile=2] rusage[mem=2800:ngpus_physical=2]"},
		{"gpus per task", Job{CPUs: 2, CPUsPerNode: 2, GPUs: 2}, Target{GPUs: true, GPUsPerTask: true}, "span[ptile=2] rusage[ngpus_physical=1]"},
		{"no layout: fills 12-slot hosts", Job{CPUs: 30, Mem: Memory{1000, PerCPU}}, hostMem, "rusage[mem=12000]"},
		{"no layout, small", Job{CPUs: 3, Mem: Memory{1200, PerNode}}, taskMem, "rusage[mem=400]"},
		{"constraint", Job{CPUs: 1, CPUsPerNode: 1, Constraint: "CPU-N"}, taskMem, "select[CPU_N] span[ptile=1] rusage[mem=2800]"},
		{"cluster without mem or gpus", Job{CPUs: 2, CPUsPerNode: 2, GPUs: 1}, Target{MaxSlots: 12, DefMem: def}, "span[ptile=2]"},
		{"no default memory", Job{CPUs: 4, CPUsPerNode: 4}, Target{Mem: true}, "span[ptile=4]"},
	} {
		got, err := c.job.ResReq(c.t)
		if err != nil || got != c.want {
			t.Errorf("%s: ResReq = %q, %v; want %q", c.name, got, err, c.want)
		}
	}
	if _, err := (&Job{CPUs: 1, Constraint: "a&"}).ResReq(hostMem); err == nil {
		t.Error("bad constraint: no error")
	}
}

func TestRuntime(t *testing.T) {
	for _, c := range []struct {
		j    Job
		want int64
	}{
		{Job{Run: 15, TimeLimit: 420}, 15},
		{Job{Run: 721, TimeLimit: 720, State: "TIMEOUT"}, 721}, // keeps its recorded run time
		{Job{Run: RunToLimit, TimeLimit: 1500}, 1500},
		{Job{Run: RunToLimit, TimeLimit: Unlimited}, 0},
		{Job{Run: Unknown}, 0},
	} {
		if got := c.j.Runtime(); got != c.want {
			t.Errorf("%+v: Runtime = %d; want %d", c.j, got, c.want)
		}
	}
}

func TestCheckName(t *testing.T) {
	for _, c := range []struct {
		in string
		ok bool
	}{{"user1", true}, {"", false}, {"a b", false}, {"a\x01", false}, {"\xff", false}, {"é", true}, {strings.Repeat("a", 257), false}} {
		if err := CheckName("user", c.in); (err == nil) != c.ok {
			t.Errorf("CheckName(%q) = %v", c.in, err)
		}
	}
}
