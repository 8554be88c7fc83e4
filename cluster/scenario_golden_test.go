package cluster

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// nan marks an undefined capacity in expectations.
var nan = math.NaN()

// sameFloats compares float slices, NaN equal to NaN.
func sameFloats(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] && !(math.IsNaN(a[i]) && math.IsNaN(b[i])) {
			return false
		}
	}
	return true
}

// checkHosts compares hosts, capacities with NaN equal to NaN.
func checkHosts(t *testing.T, got, want []Host) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d hosts, want %d", len(got), len(want))
	}
	for i := range want {
		g, w := got[i], want[i]
		if !sameFloats(g.Capacity, w.Capacity) {
			t.Errorf("hosts[%d].Capacity = %v, want %v", i, g.Capacity, w.Capacity)
		}
		g.Capacity, w.Capacity = nil, nil
		if !reflect.DeepEqual(g, w) {
			t.Errorf("hosts[%d] = %+v\nwant %+v", i, g, w)
		}
	}
}

// checkJobs compares jobs; every Req must be parsed and is compared by its
// canonical form only through ResReq.
func checkJobs(t *testing.T, got, want []Job) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d jobs, want %d", len(got), len(want))
	}
	for i := range want {
		g := got[i]
		if g.Req == nil {
			t.Errorf("jobs[%d].Req is nil", i)
		}
		g.Req = nil
		if !reflect.DeepEqual(g, want[i]) {
			t.Errorf("jobs[%d] = %+v\nwant %+v", i, g, want[i])
		}
	}
}

func TestLoadGolden(t *testing.T) {
	c, err := Load("testdata/scenario/valid.yaml")
	if err != nil {
		t.Fatal(err)
	}
	checkHosts(t, c.Hosts, []Host{
		{Name: "hostA", Slots: 8, Capacity: []float64{64000, 8, nan}, Type: "X86_64", Model: "EPYC", Tags: []string{"ssd"}},
		{Name: "hostB", Slots: 4, Capacity: []float64{32000, 4, 1500}, Type: "X86_64", Tags: []string{"gpu", "ssd"}, Status: HostClosed},
		{Name: "hostC", Slots: 2, Capacity: []float64{nan, nan, nan}, Status: HostUnavail},
	})
	if want := []string{"mem", "ncpus", "gpu_mem"}; !reflect.DeepEqual(c.Resources, want) {
		t.Errorf("Resources = %v, want %v", c.Resources, want)
	}
	if want := []Shared{{"lic_matlab", 4}, {"lic_ansys", 2.5}}; !reflect.DeepEqual(c.Shared, want) {
		t.Errorf("Shared = %+v, want %+v", c.Shared, want)
	}
	wantQueues := []Queue{
		{Name: "normal", Priority: 30, Policy: PolicyFirstFit, Picker: "priority"},
		{Name: "short", Priority: -5, Policy: PolicyEASY, Picker: "fairshare", Closed: true, Hosts: []HostID{0, 2}},
	}
	if !reflect.DeepEqual(c.Queues, wantQueues) {
		t.Errorf("Queues = %+v\nwant %+v", c.Queues, wantQueues)
	}
	wantLimits := []Limit{
		{Name: "alice_slots", Users: Consumers{Names: []string{"alice"}}, Slots: 4, Jobs: -1},
		{Name: "per_user_jobs", Users: Consumers{All: true, PerConsumer: true}, Slots: -1, Jobs: 10},
		{Name: "big", Queues: Consumers{All: true}, Hosts: Consumers{Names: []string{"hostB", "hostA"}, PerConsumer: true},
			Projects: Consumers{Names: []string{"p1"}}, Slots: -1, Jobs: -1,
			Resources: []LimitResource{{"mem", 32000}, {"lic_matlab", 2}, {"ncpus", 6}}},
	}
	if !reflect.DeepEqual(c.Limits, wantLimits) {
		t.Errorf("Limits = %+v\nwant %+v", c.Limits, wantLimits)
	}
	checkJobs(t, c.Jobs, []Job{
		{ID: 1, User: "alice", Project: "default", Queue: 0, Submit: 0, TasksMin: 2, TasksMax: 4,
			ResReq: "select[mem>1000] rusage[mem=2000] span[ptile=2]", Runtime: 3600, Estimate: 7200,
			RunningOn: []HostSlots{{0, 2}, {1, 1}}, Start: 0},
		{ID: 7, User: "nobody", Project: "default", Queue: 1, Submit: 10, TasksMin: 3, TasksMax: 3,
			ResReq: "rusage[lic_matlab=1]", RunningOn: []HostSlots{{0, 3}}, Start: 15},
		{ID: 0, User: "nobody", Project: "p1", Queue: 0, TasksMin: 5, TasksMax: 5},
	})
	if c.Schema() == nil {
		t.Fatal("Init was not called")
	}
	// The running jobs as the scheduler accounts them (docs/scenario.md).
	s := NewState(c)
	for i := range c.Jobs {
		if c.Jobs[i].RunningOn != nil {
			s.Take(c.RunningAlloc(&c.Jobs[i]))
		}
	}
	if err := s.CheckInvariants(); err != nil {
		t.Fatal(err)
	}
	for _, x := range []struct {
		what      string
		got, want float64
	}{
		{"hostA free slots", float64(s.FreeSlots(0)), 3},
		{"hostB free slots", float64(s.FreeSlots(1)), 3},
		{"hostA free mem", s.Free(0, 0), 64000 - 2000}, // mem is reserved per host by default
		{"hostB free mem", s.Free(1, 0), 32000 - 2000},
		{"lic_matlab free", s.SharedFree(0), 3},
	} {
		if x.got != x.want {
			t.Errorf("%s = %v, want %v", x.what, x.got, x.want)
		}
	}
}

func TestParseDefaults(t *testing.T) {
	c, err := Parse("t.yaml", []byte(h1+"jobs:\n  - {id: 3}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if want := []Queue{{Name: "normal", Policy: PolicyFirstFit, Picker: "priority"}}; !reflect.DeepEqual(c.Queues, want) {
		t.Errorf("Queues = %+v, want %+v", c.Queues, want)
	}
	checkHosts(t, c.Hosts, []Host{{Name: "a", Slots: 1, Capacity: []float64{}}})
	checkJobs(t, c.Jobs, []Job{{ID: 3, User: DefaultUser, Project: DefaultProject, TasksMin: 1, TasksMax: 1}})
	if c.Resources != nil || c.Shared != nil || c.Limits != nil {
		t.Errorf("Resources %v, Shared %v, Limits %v: want nil", c.Resources, c.Shared, c.Limits)
	}
}

// TestParseYAMLFeatures covers anchors, aliases, merge keys, the !!str tag,
// block scalars, quoted keys and the task count forms.
func TestParseYAMLFeatures(t *testing.T) {
	in := `hosts:
  - &base {name: n1, slots: 2, tags: &t [ssd]}
  - <<: *base
    name: n2
  - {<<: [{slots: 9, type: A}, *base], name: "n.3"}
  - {name: !!str 007, slots: 1, tags: *t}
  - ? name
    : n5
    slots: 1
queues:
  - {name: q}
jobs:
  - &job {id: 1, tasks: 2, running_on: {n1: 1, "n.3": 1}}
  - {<<: *job, id: 2, running_on: {n2: 2}, tasks: " 1 , 2 "}
  - id: 3
    tasks: "4"
    resreq: >-
      select[ssd]
      rusage[mem=0]
`
	c, err := Parse("t.yaml", []byte(in))
	if err != nil {
		t.Fatal(err)
	}
	checkHosts(t, c.Hosts, []Host{
		{Name: "n1", Slots: 2, Capacity: []float64{}, Tags: []string{"ssd"}},
		{Name: "n2", Slots: 2, Capacity: []float64{}, Tags: []string{"ssd"}},
		{Name: "n.3", Slots: 9, Capacity: []float64{}, Type: "A", Tags: []string{"ssd"}},
		{Name: "007", Slots: 1, Capacity: []float64{}, Tags: []string{"ssd"}},
		{Name: "n5", Slots: 1, Capacity: []float64{}},
	})
	checkJobs(t, c.Jobs, []Job{
		{ID: 1, User: "nobody", Project: "default", TasksMin: 2, TasksMax: 2, RunningOn: []HostSlots{{0, 1}, {2, 1}}},
		{ID: 2, User: "nobody", Project: "default", TasksMin: 1, TasksMax: 2, RunningOn: []HostSlots{{1, 2}}},
		{ID: 3, User: "nobody", Project: "default", TasksMin: 4, TasksMax: 4, ResReq: "select[ssd] rusage[mem=0]"},
	})
}

func TestLoadTestdataScenarios(t *testing.T) {
	// Every valid*.yaml and example*.yaml under testdata/scenario loads.
	files, _ := filepath.Glob("testdata/scenario/*.yaml")
	if len(files) == 0 {
		t.Fatal("no scenarios")
	}
	for _, f := range files {
		if _, err := Load(f); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}

func TestLoadMissingFile(t *testing.T) {
	_, err := Load("testdata/scenario/no-such-file.yaml")
	if !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("got %v, want a not-exist error", err)
	}
}

// TestDocExample checks that the complete example of docs/scenario.md is
// testdata/scenario/example.yaml and holds what the text after it says.
func TestDocExample(t *testing.T) {
	doc, err := os.ReadFile("../docs/scenario.md")
	if err != nil {
		t.Skip("docs/scenario.md not found:", err)
	}
	example, err := os.ReadFile("testdata/scenario/example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s := string(doc)
	i := strings.Index(s, "## Complete example")
	j := strings.Index(s[max(i, 0):], "```yaml\n")
	if i < 0 || j < 0 {
		t.Fatal("no yaml block under \"## Complete example\" in docs/scenario.md")
	}
	block := s[i+j+len("```yaml\n"):]
	block = block[:strings.Index(block, "```\n")]
	if block != string(example) {
		t.Fatal("the example of docs/scenario.md differs from testdata/scenario/example.yaml")
	}
	c, err := Parse("example.yaml", example)
	if err != nil {
		t.Fatal(err)
	}
	s2 := NewState(c)
	for i := range c.Jobs {
		if c.Jobs[i].RunningOn != nil {
			s2.Take(c.RunningAlloc(&c.Jobs[i]))
		}
	}
	mem, _ := c.ResourceByName("mem")
	lic, _ := c.SharedByName("lic_matlab")
	got := []float64{float64(s2.FreeSlots(0)), s2.Free(0, mem), float64(s2.FreeSlots(1)), s2.Free(1, mem), s2.SharedFree(lic)}
	if want := []float64{6, 64000 - 2000, 7, 128000 - 2000, 3}; !sameFloats(got, want) { // mem per host
		t.Errorf("free hostA slots, mem, hostB slots, mem, lic_matlab = %v, want %v", got, want)
	}
}
