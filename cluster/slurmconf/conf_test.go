package slurmconf

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/xce-sched/xce/slurm"
)

func parse(t *testing.T, text string) *Config {
	t.Helper()
	c, err := Parse(strings.NewReader(text), "s.conf")
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return c
}

// TestNodeFields: host ranges, DEFAULT lines (which apply to the lines
// after them, the later ones adding to the earlier), CPUs from CPUs,
// Procs or the socket product, and the other node fields.
func TestNodeFields(t *testing.T) {
	c := parse(t, `# comment
NodeName=DEFAULT RealMemory=48000 Procs=12
NodeName=n[1-2] Feature=IB,CPU-N
NodeName=DEFAULT RealMemory=1000 Procs=4
NodeName=x[09-10] Gres=gpu:tesla:2 Weight=5 State=drain
NodeName=DEFAULT Procs=1 Sockets=2 CoresPerSocket=6 ThreadsPerCore=2
NodeName=s1 RealMemory=2G
NodeName=s2 CPUs=3
`)
	// Procs in a DEFAULT line wins over the socket product of a later
	// DEFAULT line only if it is given: the last DEFAULT (Procs=1) sets
	// CPUs for s1; s2 gives CPUs itself.
	want := []Node{
		{Name: "n1", CPUs: 12, MemoryMB: 48000, Features: []string{"IB", "CPU-N"}, Weight: 1, Line: 3},
		{Name: "n2", CPUs: 12, MemoryMB: 48000, Features: []string{"IB", "CPU-N"}, Weight: 1, Line: 3},
		{Name: "x09", CPUs: 4, MemoryMB: 1000, GPUs: 2, GPUType: "tesla", Gres: "gpu:tesla:2", State: "DRAIN", Weight: 5, Line: 5},
		{Name: "x10", CPUs: 4, MemoryMB: 1000, GPUs: 2, GPUType: "tesla", Gres: "gpu:tesla:2", State: "DRAIN", Weight: 5, Line: 5},
		{Name: "s1", CPUs: 1, MemoryMB: 2048, Weight: 1, Line: 7},
		{Name: "s2", CPUs: 3, MemoryMB: 1000, Weight: 1, Line: 8},
	}
	if !reflect.DeepEqual(c.Nodes, want) {
		t.Errorf("nodes:\n%+v\nwant\n%+v", c.Nodes, want)
	}
	// Without CPUs or Procs, the product Boards × Sockets × CoresPerSocket
	// × ThreadsPerCore: 2 × 8 × 2 = 32.
	c = parse(t, "NodeName=a Sockets=2 CoresPerSocket=8 ThreadsPerCore=2\nNodeName=b\n")
	if c.Nodes[0].CPUs != 32 || c.Nodes[1].CPUs != 1 || c.Nodes[1].MemoryMB != 1 {
		t.Errorf("cpus %d, %d, mem %v; want 32, 1 and 1 (Slurm's defaults)", c.Nodes[0].CPUs, c.Nodes[1].CPUs, c.Nodes[1].MemoryMB)
	}
}

// TestPartitions: Default, State, times, memory defaults, priorities,
// Nodes=ALL, and a DEFAULT partition line.
func TestPartitions(t *testing.T) {
	c := parse(t, `NodeName=n[1-4] CPUs=4
PartitionName=DEFAULT MaxTime=1-00:00:00 DefMemPerCPU=1000
PartitionName=p1 Nodes=n[1-2] Default=YES State=DOWN DefaultTime=30 PriorityJobFactor=5 PriorityTier=3
PartitionName=p2 Nodes=ALL MaxTime=UNLIMITED DefMemPerNode=4G Priority=7
`)
	want := []Partition{
		{Name: "p1", Nodes: []string{"n1", "n2"}, Default: true, State: "DOWN", MaxTime: 86400, DefaultTime: 1800, DefMemPerCPU: 1000, JobFactor: 5, Tier: 3, Line: 3},
		{Name: "p2", AllNodes: true, State: "UP", MaxTime: slurm.Unlimited, DefaultTime: slurm.Unknown, DefMemPerCPU: 1000, DefMemPerNode: 4096, JobFactor: 7, Tier: 7, Line: 4},
	}
	if !reflect.DeepEqual(c.Partitions, want) {
		t.Errorf("partitions:\n%+v\nwant\n%+v", c.Partitions, want)
	}
}

// TestSyntax: comments, an escaped '#', line continuation, quoted values,
// keys in any case, and the last value of a key winning.
func TestSyntax(t *testing.T) {
	c := parse(t, "clustername=a # comment\nNodeName=n1 \\\n  CPUs=2 Feature=\"x,y\" # more\nSlurmctldLogFile=/log/a\\#b\nClusterName=b\n")
	if len(c.Nodes) != 1 || c.Nodes[0].CPUs != 2 || !reflect.DeepEqual(c.Nodes[0].Features, []string{"x", "y"}) {
		t.Errorf("node %+v", c.Nodes)
	}
	if p := c.Params["slurmctldlogfile"]; p.Val != "/log/a#b" || p.Line != 4 {
		t.Errorf("escaped '#': %+v", p)
	}
	if p := c.Params["clustername"]; p.Val != "b" || p.Line != 5 {
		t.Errorf("last value wins: %+v", p)
	}
}

// TestErrors: every error names the file and line.
func TestErrors(t *testing.T) {
	for _, c := range []struct{ name, text, want string }{
		{"no nodes", "ClusterName=x\n", "s.conf: no NodeName line: a cluster needs nodes"},
		{"bad range", "NodeName=n[4-1]\n", `s.conf:1: NodeName: host list "n[4-1]": range "4-1": 4 is above 1`},
		{"unbalanced", "\nNodeName=n[1-4\n", `s.conf:2: NodeName: host list "n[1-4": '[' without ']'`},
		{"cpus", "NodeName=n1 CPUs=lots\n", `s.conf:1: CPUs="lots": want an integer from 1 to 1073741824`},
		{"memory", "NodeName=n1 RealMemory=4X\n", `s.conf:1: RealMemory: memory "4X": unknown unit "X" (want K, M, G or T)`},
		{"gres", "NodeName=n1 Gres=gpu:a:b:c\n", `s.conf:1: Gres: gres "gpu:a:b:c": "gpu:a:b:c" has more than three ':'-separated fields`},
		{"duplicate node", "NodeName=n[1-2]\nNodeName=n2\n", `s.conf:2: node "n2" defined again (first on line 1)`},
		{"no value", "NodeName=n1\nClusterName\n", `s.conf:2: "ClusterName": expected Key=Value`},
		{"include", "Include /etc/slurm/nodes.conf\n", "s.conf:1: Include is not supported: give the included file's lines in this one"},
		{"quote", "NodeName=n1 Feature=\"a b\n", `s.conf:1: Feature: unterminated '"'`},
		{"unknown node", "NodeName=n1\nPartitionName=p Nodes=n[1-2]\n", `s.conf:2: partition "p": node "n2" is not defined by a NodeName line`},
		{"two defaults", "NodeName=n1\nPartitionName=p Default=YES\nPartitionName=q Default=yes\n", `s.conf:3: partition "q": a second Default=YES partition (the first on line 2)`},
		{"default", "NodeName=n1\nPartitionName=p Default=maybe\n", `s.conf:2: Default: "maybe": want YES or NO`},
		{"state", "NodeName=n1\nPartitionName=p State=HALF\n", `s.conf:2: State="HALF": want UP, DOWN, DRAIN or INACTIVE`},
		{"max time", "NodeName=n1\nPartitionName=p MaxTime=1:2:3:4\n", `s.conf:2: MaxTime: time "1:2:3:4": more than three ':'-separated fields`},
		{"zero time", "NodeName=n1\nPartitionName=p MaxTime=0\n", `s.conf:2: MaxTime="0": want a time above 0, or UNLIMITED`},
		{"tier", "NodeName=n1\nPartitionName=p PriorityTier=70000\n", `s.conf:2: PriorityTier="70000": want an integer from 0 to 65533`},
		{"duplicate partition", "NodeName=n1\nPartitionName=p\nPartitionName=p\n", `s.conf:3: partition "p" defined again (first on line 2)`},
		{"long line", "NodeName=n1 Feature=" + strings.Repeat("x", slurm.MaxLine) + "\n", "s.conf:1: line longer than 1048576 bytes"},
	} {
		_, err := Parse(strings.NewReader(c.text), "s.conf")
		if err == nil || err.Error() != c.want {
			t.Errorf("%s: error %v; want %s", c.name, err, c.want)
		}
		var se *slurm.Error
		if err != nil && !errors.As(err, &se) {
			t.Errorf("%s: %T is not a *slurm.Error", c.name, err)
		}
	}
}

// TestSettings: the scheduling and priority parameters and their
// errors.
func TestSettings(t *testing.T) {
	c := parse(t, "NodeName=n1\nSchedulerType=sched/builtin\nPriorityType=priority/multifactor\nPriorityFlags=NO_FAIR_TREE\nFairShareDampeningFactor=5\nPriorityDecayHalfLife=0\nPriorityMaxAge=0-5\n")
	var notes []string
	s, err := c.Settings(func(_ string, _ int, m string) { notes = append(notes, m) })
	if err != nil {
		t.Fatal(err)
	}
	if s.Policy != "fcfs" || s.Picker != "multifactor" || !s.Priority.Classic || s.Priority.DampeningFactor != 5 ||
		s.Priority.DecayHalfLife != 0 || s.Priority.MaxAge != 18000 || s.Priority.CalcPeriod != 300 {
		t.Errorf("settings %+v", s)
	}
	// No CR_*_Memory: memory is not consumable in Slurm.
	if len(notes) != 1 || !strings.Contains(notes[0], "CR_*_Memory") {
		t.Errorf("notes %q", notes)
	}
	for _, tc := range []struct{ text, want string }{
		{"SchedulerType=sched/wiki", `s.conf:2: SchedulerType="sched/wiki": want sched/backfill or sched/builtin`},
		{"PriorityType=priority/x", `s.conf:2: PriorityType="priority/x": want priority/multifactor or priority/basic`},
		{"PriorityWeightAge=-1", `s.conf:2: PriorityWeightAge="-1": want an integer from 0 to 4294967295`},
		{"PriorityMaxAge=0", `s.conf:2: PriorityMaxAge="0": want a time of at least 1 s`},
		{"PriorityDecayHalfLife=x", `s.conf:2: PriorityDecayHalfLife: time "x": "x": not a non-negative decimal number`},
		{"PriorityFavorSmall=maybe", `s.conf:2: PriorityFavorSmall="maybe": want YES or NO`},
		{"FairShareDampeningFactor=0", `s.conf:2: FairShareDampeningFactor="0": want an integer from 1 to 65535`},
		{"FirstJobId=0", `s.conf:2: FirstJobId="0": want a positive integer`},
		{"SchedulerParameters=bf_continue,bf_max_job_test=0", `s.conf:2: SchedulerParameters="bf_continue,bf_max_job_test=0": bf_max_job_test: want an integer from 1 to 1000000, got "0"`},
		{"SchedulerParameters=bf_max_job_test=many", `s.conf:2: SchedulerParameters="bf_max_job_test=many": bf_max_job_test: want an integer from 1 to 1000000, got "many"`},
		{"SchedulerParameters=bf_max_job_test=1000001", `s.conf:2: SchedulerParameters="bf_max_job_test=1000001": bf_max_job_test: want an integer from 1 to 1000000, got "1000001"`},
	} {
		_, err := parse(t, "NodeName=n1\n"+tc.text+"\n").Settings(func(string, int, string) {})
		if err == nil || err.Error() != tc.want {
			t.Errorf("%s: error %v; want %s", tc.text, err, tc.want)
		}
	}
}

// TestMaxJobTest: sched/backfill plans bf_max_job_test jobs of each
// queue, Slurm's default 500 when SchedulerParameters does not say, the
// first when it says twice (as Slurm reads it); sched/builtin plans none
// ahead (0: max_job_test is not written; a bf_max_job_test is reported as
// ignored); the other options are reported as not modelled.
func TestMaxJobTest(t *testing.T) {
	for _, tc := range []struct {
		text  string
		want  int
		notes string
	}{
		{"", 500, ""},
		{"SchedulerType=sched/backfill\nSchedulerParameters=bf_continue,bf_max_job_test=120,bf_window=60", 120, "SchedulerParameters: bf_continue, bf_window: not modelled by xce; they may change Slurm's schedule"},
		{"SchedulerType=sched/builtin\nSchedulerParameters=bf_max_job_test=120", 0, "SchedulerParameters: bf_max_job_test: ignored, sched/builtin plans no job ahead"},
		{"SchedulerParameters=bf_max_job_test=10,BF_MAX_JOB_TEST=20", 10, "SchedulerParameters: bf_max_job_test=20 again: Slurm reads the first"},
	} {
		var notes []string
		s, err := parse(t, "NodeName=n1\nSelectTypeParameters=CR_Core_Memory\n"+tc.text+"\n").Settings(func(_ string, _ int, m string) { notes = append(notes, m) })
		if err != nil {
			t.Fatal(err)
		}
		if s.MaxJobTest != tc.want || strings.Join(notes, "|") != tc.notes {
			t.Errorf("%q: max_job_test %d, notes %q; want %d, %q", tc.text, s.MaxJobTest, notes, tc.want, tc.notes)
		}
	}
}

// TestLooks: slurm.conf is told from YAML by its first line, or by any
// line that starts with a slurm.conf key and '=' (blanks before it too),
// or is a NodeName, PartitionName or Include line without its '='.
func TestLooks(t *testing.T) {
	for _, c := range []struct {
		text string
		want bool
	}{
		{"ClusterName=micro\n", true},
		{"# comment\n\n  NodeName=n[1-4] CPUs=12\n", true},
		{"hosts:\n  - {name: a, slots: 1}\n", false},
		{"- a=b\n", false},
		{"{hosts: []}\n", false},
		{"1x=2\n", false},
		{"", false},
		{"Include nodes.conf\nNodeName=n1\n", true},
		{"Include nodes.conf\n", true},
		{"ClusterName = micro\n", true},
		{"garbage\nslurmctldhost=head\n", true},
		{"garbage\nPartitionName p Nodes=n1\n", true},
		{"garbage\n  SchedulerType =sched/backfill\n", true},
		{"garbage\nNodeName: n1\n", false},
		{"garbage\nNodeName # n1\n", false},
		{"garbage\nUnknownKey=1\n", false},
		{"hosts: [{name: a, slots: 1}]\nx: 1\n", false},
		{"garbage\n# NodeName=n1\n", false},
		// A byte order mark first; more than the MiB scanned of comments
		// before the first line (found attacking issue 29's fixes).
		{"\ufeffNodeName=n1\n", true},
		{"\ufeffhosts: []\n", false},
		{strings.Repeat("# a comment line of 32 bytes ...\n", 40_000) + "NodeName=n1 CPUs=2\n", true},
		{strings.Repeat("# a comment line of 32 bytes ...\n", 40_000) + "hosts: []\n", false},
	} {
		if got := Looks([]byte(c.text)); got != c.want {
			t.Errorf("Looks(%q) = %v", c.text, got)
		}
	}
}

// TestLooksNamed: a file is slurm.conf by its content (Looks), or by its
// name (slurm.conf, *.conf) when its first line that is not blank or a
// comment does not start as YAML.
func TestLooksNamed(t *testing.T) {
	for _, c := range []struct {
		name, text string
		want       bool
	}{
		{"x.yaml", "NodeName=n1\n", true},
		{"x.yaml", "garbage\n", false},
		{"/etc/slurm/slurm.conf", "garbage\n", true},
		{"cluster.conf", "# c\n\ngarbage here\n", true},
		{"cluster.conf", "hosts:\n  - {name: a, slots: 1}\n", false},
		{"cluster.conf", "max_array_size: 10\n", false},
		{"cluster.conf", "\"hosts\" : []\n", false},
		{"cluster.conf", "- a\n", false},
		{"cluster.conf", "{hosts: []}\n", false},
		{"cluster.conf", "---\nhosts: []\n", false},
		{"cluster.conf", "hosts:[]\n", true}, // not YAML's "key:" (no blank after ':')
		{"slurm.conf", "", false},
		{"slurm.conf.bak", "garbage\n", false},
	} {
		if got := LooksNamed(c.name, []byte(c.text)); got != c.want {
			t.Errorf("LooksNamed(%q, %q) = %v", c.name, c.text, got)
		}
	}
}
