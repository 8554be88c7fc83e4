package cluster

import (
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"
)

// TestSlurmSection loads a slurm section with every field (docs/slurm.md)
// and a job's qos; what is not given takes Slurm's defaults.
func TestSlurmSection(t *testing.T) {
	in := h1 + `queues:
  - {name: normal, policy: backfill, picker: multifactor}
  - {name: debug, priority: 2}
jobs:
  - {id: 1, qos: supporters}
  - {id: 2}
slurm:
  first_job_id: 1001
  partitions:
    normal: {job_factor: 3, def_mem_per_cpu: 2800, max_time: unlimited}
    debug: {def_mem_per_node: 1000.5, max_time: 3600, default_time: 600}
  priority:
    weight_age: 50000
    weight_qos: 4294967295
    max_age: 18000
    decay_half_life: 0
    calc_period: 0
    favor_small: true
    small_relative_to_time: true
    fairshare: classic
    dampening_factor: 5
  qos: {normal: 0, supporters: 100}
  accounts:
    child: {parent: top, fairshare: 40, users: {alice: 2, bob: 0}}
    top: {}
`
	c, err := Parse("t.yaml", []byte(in))
	if err != nil {
		t.Fatal(err)
	}
	want := &SlurmConfig{
		FirstJobID: 1001,
		Partitions: []SlurmPartition{
			{Queue: "normal", JobFactor: 3, DefMemPerCPU: 2800, MaxTime: -1, DefaultTime: -1},
			{Queue: "debug", JobFactor: 1, DefMemPerNode: 1000.5, MaxTime: 3600, DefaultTime: 600},
		},
		Priority: Multifactor{WeightAge: 50000, WeightQOS: 4294967295, MaxAge: 18000, FavorSmall: true, SmallRelativeToTime: true,
			Classic: true, DampeningFactor: 5},
		QOS: []SlurmQOS{{"normal", 0}, {"supporters", 100}},
		Accounts: []SlurmAccount{
			{Name: "child", Parent: "top", Shares: 40, Users: []UserShare{{"alice", 2}, {"bob", 0}}},
			{Name: "top", Shares: 1},
		},
	}
	if !reflect.DeepEqual(c.Slurm, want) {
		t.Errorf("slurm:\n%+v\nwant\n%+v", c.Slurm, want)
	}
	if c.Queues[0].Policy != PolicyBackfill || c.Queues[0].Picker != "multifactor" {
		t.Errorf("queue %+v", c.Queues[0])
	}
	if c.Jobs[0].QOS != "supporters" || c.Jobs[1].QOS != "" {
		t.Errorf("qos %q, %q", c.Jobs[0].QOS, c.Jobs[1].QOS)
	}
	if p, ok := c.Slurm.Partition("debug"); !ok || p.MaxTime != 3600 {
		t.Errorf("Partition(debug) = %+v, %v", p, ok)
	}
	if _, ok := (*SlurmConfig)(nil).Partition("x"); ok {
		t.Error("a nil section has a partition")
	}
	// Defaults: the section's priority without the key.
	c, err = Parse("t.yaml", []byte(h1+"slurm: {}\n"))
	if err != nil || c.Slurm.Priority != DefaultMultifactor() {
		t.Errorf("defaults %+v, %v", c.Slurm, err)
	}
	if c, err := Parse("t.yaml", []byte(h1)); err != nil || c.Slurm != nil {
		t.Errorf("no section: %+v, %v", c.Slurm, err)
	}
}

// TestSlurmErrors: each error names the line, column and field.
func TestSlurmErrors(t *testing.T) {
	q := "queues:\n  - {name: q}\n"
	for _, tc := range []struct {
		name, in  string
		line, col int
		path, msg string
	}{
		{"unknown field", h1 + "slurm: {weights: 1}\n", 3, 9, "slurm.weights", `unknown field "weights" (known fields: first_job_id, partitions, priority, qos, accounts)`},
		{"top-level note", h1 + "slurmm: 1\n", 3, 1, "slurmm", `unknown field "slurmm" (known fields: hosts, host_groups, user_groups, shared, queues, limits, max_array_size, reservation_usage, jobs), or slurm for a Slurm cluster's settings (docs/slurm.md)`},
		{"unknown queue", h1 + q + "slurm:\n  partitions: {p: {}}\n", 6, 16, "slurm.partitions.p", `unknown queue "p" (a partition's settings go with its queue)`},
		{"job factor", h1 + q + "slurm:\n  partitions: {q: {job_factor: 70000}}\n", 6, 32, "slurm.partitions.q.job_factor", "must be <= 65533, got 70000"},
		{"both memories", h1 + q + "slurm:\n  partitions: {q: {def_mem_per_cpu: 1, def_mem_per_node: 2}}\n", 6, 40, "slurm.partitions.q.def_mem_per_node", "give def_mem_per_cpu or def_mem_per_node, not both"},
		{"max time word", h1 + q + "slurm:\n  partitions: {q: {max_time: infinite}}\n", 6, 30, "slurm.partitions.q.max_time", `want seconds (1 to 10^15) or unlimited: expected an integer, got string "infinite"`},
		{"weight", h1 + "slurm:\n  priority: {weight_age: 4294967296}\n", 4, 26, "slurm.priority.weight_age", "must be <= 4294967295, got 4294967296"},
		{"max age", h1 + "slurm:\n  priority: {max_age: 0}\n", 4, 23, "slurm.priority.max_age", "must be >= 1, got 0"},
		{"fairshare", h1 + "slurm:\n  priority: {fairshare: tree}\n", 4, 25, "slurm.priority.fairshare", `must be one of fair_tree, classic, got "tree"`},
		{"favor small", h1 + "slurm:\n  priority: {favor_small: yes}\n", 4, 27, "slurm.priority.favor_small", "want true or false, got string"},
		{"qos", h1 + "slurm:\n  qos: {normal: -1}\n", 4, 17, "slurm.qos.normal", "must be >= 0, got -1"},
		{"root", h1 + "slurm:\n  accounts: {root: {}}\n", 4, 14, "slurm.accounts.root", "root is the association tree's root, not an account of it"},
		{"parent", h1 + "slurm:\n  accounts: {a: {parent: b}}\n", 4, 26, "slurm.accounts.a.parent", `unknown account "b"`},
		{"cycle", h1 + "slurm:\n  accounts:\n    a: {parent: b}\n    b: {parent: a}\n", 5, 17, "slurm.accounts.a.parent", `account "a" is its own ancestor`},
		{"user share", h1 + "slurm:\n  accounts: {a: {users: {u: x}}}\n", 4, 29, "slurm.accounts.a.users.u", `expected an integer, got string "x"`},
		{"policy", h1 + "queues:\n  - {name: q, policy: sjf}\n", 4, 23, "queues[0].policy", `must be one of fcfs, firstfit, easy, conservative, got "sjf" (or backfill, Slurm's: docs/slurm.md)`},
		{"picker", h1 + "queues:\n  - {name: q, picker: random}\n", 4, 23, "queues[0].picker", `must be one of priority, fairshare, got "random" (or multifactor, Slurm's: docs/slurm.md)`},
		{"job qos", h1 + "jobs:\n  - {id: 1, qos: \"a b\"}\n", 4, 18, "jobs[0].qos", "names may not hold white space or control characters"},
	} {
		_, err := Parse("t.yaml", []byte(tc.in))
		var se *ScenarioError
		if !errors.As(err, &se) {
			t.Errorf("%s: error %v is not a *ScenarioError", tc.name, err)
			continue
		}
		if se.Line != tc.line || se.Col != tc.col || se.Path != tc.path || !strings.Contains(se.Msg, tc.msg) {
			t.Errorf("%s: got %d:%d %q %q\nwant %d:%d %q containing %q", tc.name, se.Line, se.Col, se.Path, se.Msg, tc.line, tc.col, tc.path, tc.msg)
		}
	}
}

// TestDocSlurmSection: the example of docs/slurm.md, "The slurm section
// of a configuration", loads (with a host), as the text after it says.
func TestDocSlurmSection(t *testing.T) {
	doc, err := os.ReadFile("../docs/slurm.md")
	if err != nil {
		t.Skip("docs/slurm.md not found:", err)
	}
	s := string(doc)
	i := strings.Index(s, "## The slurm section of a configuration")
	j := strings.Index(s[max(i, 0):], "```yaml\n")
	if i < 0 || j < 0 {
		t.Fatal("no yaml block under the slurm section's heading in docs/slurm.md")
	}
	block := s[i+j+len("```yaml\n"):]
	block = block[:strings.Index(block, "```\n")]
	c, err := Parse("slurm.md", []byte(h1+block))
	if err != nil {
		t.Fatal(err)
	}
	if c.Slurm.FirstJobID != 1001 || c.Slurm.Priority.WeightJobSize != 200000 || len(c.Slurm.Accounts) != 2 || c.Slurm.Accounts[1].Parent != "account1" {
		t.Errorf("slurm %+v", c.Slurm)
	}
}
