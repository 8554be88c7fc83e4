package cluster

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/xce-sched/xce/gpureq"
	"github.com/xce-sched/xce/resreq"
)

// gpuCases are scenario errors about GPUs, worked out by hand as in
// errorCases.
var gpuCases = []struct {
	name      string
	in        string
	line, col int
	path      string
	msg       string
}{
	{"gpus too many", "hosts:\n  - {name: a, slots: 1, gpus: 65}\n", 2, 31, "hosts[0].gpus", "must be <= 64"},
	{"gpus negative", "hosts:\n  - {name: a, slots: 1, gpus: -1}\n", 2, 31, "hosts[0].gpus", "must be >= 0"},
	{"gpus not an integer", "hosts:\n  - {name: a, slots: 1, gpus: 1.5}\n", 2, 31, "hosts[0].gpus", "expected an integer"},
	{"ngpus_physical as a resource", "hosts:\n  - {name: a, slots: 1, resources: {ngpus_physical: 2}}\n", 2, 37, "hosts[0].resources.ngpus_physical", "declare them with gpus: N"},
	{"gpu_model without gpus", "hosts:\n  - {name: a, slots: 1, gpu_model: A100}\n", 2, 36, "hosts[0].gpu_model", "give their number too"},
	{"gpu_model not a name", "hosts:\n  - {name: a, slots: 1, gpus: 1, gpu_model: \"A 100\"}\n", 2, 45, "hosts[0].gpu_model", "white space"},
	{"tag named gpu_model", "hosts:\n  - {name: a, slots: 1, tags: [gpu_model]}\n", 2, 32, "hosts[0].tags[0]", "already taken by the built-in attribute gpu_model"},
	{"tag named ngpus_physical", "hosts:\n  - {name: a, slots: 1, gpus: 1, tags: [ngpus_physical]}\n", 2, 41, "hosts[0].tags[0]", `already taken by resource "ngpus_physical"`},
	{"job gpu syntax", "hosts:\n  - {name: a, slots: 1, gpus: 2}\njobs:\n  - {id: 1, gpu: \"num=2:mode=x\"}\n", 4, 18, "jobs[0].gpu", "gpu: col 12: mode must be shared or exclusive_process"},
	{"job gpu j_exclusive=no", "hosts:\n  - {name: a, slots: 1, gpus: 2}\njobs:\n  - {id: 1, gpu: \"j_exclusive=no\"}\n", 4, 18, "jobs[0].gpu", "j_exclusive=no is not supported"},
	{"job gpu and rusage", "hosts:\n  - {name: a, slots: 1, gpus: 2}\njobs:\n  - {id: 1, resreq: \"rusage[ngpus_physical=1]\", gpu: \"num=1\"}\n", 4, 54, "jobs[0].gpu", "give the number of GPUs once"},
	{"job gpu with a compound resreq", "hosts:\n  - {name: a, slots: 2, gpus: 2}\njobs:\n  - {id: 1, tasks: 2, resreq: \"1*{} + 1*{}\", gpu: \"-\"}\n", 4, 51, "jobs[0].gpu", "simple resource requirement only"},
	{"running job over its host's GPUs", "hosts:\n  - {name: a, slots: 4, gpus: 2}\njobs:\n  - {id: 1, gpu: \"num=2\", running_on: {a: 1}}\n  - {id: 2, gpu: \"num=1\", running_on: {a: 1}}\n", 5, 39, "jobs[1].running_on", "over-commits the cluster: host a: 1 ngpus_physical requested, 0 free"},
}

func TestGPUParseErrors(t *testing.T) {
	for _, tc := range gpuCases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("t.yaml", []byte(tc.in))
			var se *ScenarioError
			if !errors.As(err, &se) {
				t.Fatalf("error %T %v is not a *ScenarioError", err, err)
			}
			if se.Line != tc.line || se.Col != tc.col || se.Path != tc.path || !strings.Contains(se.Msg, tc.msg) {
				t.Errorf("got  %d:%d %q %q\nwant %d:%d %q containing %q", se.Line, se.Col, se.Path, se.Msg, tc.line, tc.col, tc.path, tc.msg)
			}
		})
	}
}

const gpuScenario = `
hosts:
  - {name: cpu, slots: 4, resources: {mem: 100}}
  - {name: g1, slots: 4, gpus: 4, gpu_model: A100}
  - {name: g2, slots: 4, gpus: 2, gpu_model: V100, type: X86_64}
jobs:
  - {id: 1, gpu: "num=2:mode=exclusive_process", resreq: "select[gpu_model == A100]"}
  - {id: 2, resreq: "rusage[ngpus_physical=1]"}
`

// TestGPUScenario: gpus become the consumable ngpus_physical (defined on
// GPU hosts only), gpu_model a string attribute of select[], and a job's
// gpu its rusage[ngpus_physical].
func TestGPUScenario(t *testing.T) {
	c, err := Parse("gpu.yaml", []byte(gpuScenario))
	if err != nil {
		t.Fatal(err)
	}
	r, ok := c.GPUResource()
	if !ok || c.Resources[r] != gpureq.Resource {
		t.Fatalf("GPUResource = %d, %v; resources %v", r, ok, c.Resources)
	}
	caps := []float64{c.Hosts[0].Capacity[r], c.Hosts[1].Capacity[r], c.Hosts[2].Capacity[r]}
	if !math.IsNaN(caps[0]) || caps[1] != 4 || caps[2] != 2 {
		t.Errorf("capacities %v, want [NaN 4 2]", caps)
	}
	if c.Hosts[1].GPUModel != "A100" || c.Hosts[0].GPUModel != "" {
		t.Errorf("gpu models %q %q", c.Hosts[0].GPUModel, c.Hosts[1].GPUModel)
	}
	j := &c.Jobs[0]
	if j.GPU == nil || *j.GPU != (gpureq.Request{Num: 2, Mode: gpureq.ExclusiveProcess}) {
		t.Errorf("job 1 GPU %+v", j.GPU)
	}
	if got, want := j.Req.String(), "select[gpu_model == A100] rusage[ngpus_physical=2]"; got != want {
		t.Errorf("job 1 requirement %q, want %q", got, want)
	}
	if j.ResReq != "select[gpu_model == A100]" {
		t.Errorf("job 1 ResReq %q: the text as written", j.ResReq)
	}
	if c.Jobs[1].GPU != nil {
		t.Errorf("job 2 has GPU %+v", c.Jobs[1].GPU)
	}
	// select[] sees gpu_model as a string attribute.
	s := NewState(c)
	for _, tc := range []struct {
		expr string
		want []bool
	}{
		{"gpu_model == A100", []bool{false, true, false}},
		{"gpu_model != A100", []bool{false, false, true}},
		{"defined(gpu_model)", []bool{false, true, true}},
		{"ngpus_physical >= 2", []bool{false, true, true}},
		{"maxngpus_physical > 2", []bool{false, true, false}},
	} {
		req, err := resreq.Parse("select[" + tc.expr + "]")
		if err != nil {
			t.Fatal(err)
		}
		sel, err := resreq.CompileSelect(req.Alternatives[0].Terms[0].Select, c.Schema())
		if err != nil {
			t.Fatalf("%s: %v", tc.expr, err)
		}
		for h, want := range tc.want {
			if got := sel.Match(s.HostVals(HostID(h))); got != want {
				t.Errorf("%s on %s = %v, want %v", tc.expr, c.Hosts[h].Name, got, want)
			}
		}
	}
}

// gpuCluster returns a cluster of two hosts with 4 and 2 GPUs.
func gpuCluster(t *testing.T) *Cluster {
	t.Helper()
	c, err := Parse("g.yaml", []byte("hosts:\n  - {name: g1, slots: 8, gpus: 4}\n  - {name: g2, slots: 8, gpus: 2}\n"))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func gpuAlloc(h HostID, n float64, gpus ...int) *HostAlloc {
	d, ok := DevicesOf(gpus)
	if !ok {
		panic(gpus)
	}
	return &HostAlloc{Host: h, Slots: 1, Res: []ResAmount{{Res: 0, Amount: n}}, GPUs: d}
}

// TestDevices: the set type of an allocation's devices.
func TestDevices(t *testing.T) {
	d, ok := DevicesOf([]int{3, 0, 63})
	if !ok || d.Len() != 3 || !slices.Equal(d.List(), []int{0, 3, 63}) || d.String() != "[0 3 63]" {
		t.Errorf("DevicesOf: %v %v", d, ok)
	}
	for _, bad := range [][]int{{-1}, {64}, {1, 1}} {
		if _, ok := DevicesOf(bad); ok {
			t.Errorf("DevicesOf(%v) accepted", bad)
		}
	}
	if Devices(0).List() != nil {
		t.Error("no device lists as nil")
	}
}

// TestDeviceBinding works the device choices out by hand: the lowest free
// indices, exactly those freed, given ones kept, and the invariant
// catching a device held twice.
func TestDeviceBinding(t *testing.T) {
	c := gpuCluster(t)
	s := NewState(c)
	if !s.TracksGPUs() {
		t.Fatal("a state of a cluster with GPUs tracks them")
	}
	a := gpuAlloc(0, 2) // devices 0 and 1 of g1
	b := gpuAlloc(0, 1) // then 2
	s.Reserve(a)
	s.Reserve(b)
	if !slices.Equal(a.GPUs.List(), []int{0, 1}) || !slices.Equal(b.GPUs.List(), []int{2}) {
		t.Fatalf("a %v b %v, want [0 1] [2]", a.GPUs, b.GPUs)
	}
	s.Release(a) // frees 0 and 1, not 2
	if got := s.HeldGPUs(0); got != 0b100 {
		t.Fatalf("held %b after releasing a, want 100", got)
	}
	d := gpuAlloc(0, 3) // 0, 1 and 3: the lowest free
	s.Reserve(d)
	if !slices.Equal(d.GPUs.List(), []int{0, 1, 3}) {
		t.Fatalf("d %v, want [0 1 3]", d.GPUs)
	}
	if err := s.CheckInvariants(); err != nil {
		t.Fatal(err)
	}
	s.Release(b)
	s.Release(d)
	// Given devices are kept when free (a job restored from the log).
	e := gpuAlloc(1, 1, 1)
	if err := s.TakeChecked(&JobAlloc{Hosts: []HostAlloc{*e}}, false); err != nil {
		t.Fatal(err)
	}
	if s.HeldGPUs(1) != 0b10 {
		t.Fatalf("held on g2 %b, want 10", s.HeldGPUs(1))
	}
	// ... and refused when another job holds them, or they do not exist.
	for _, bad := range []*HostAlloc{gpuAlloc(1, 1, 1), gpuAlloc(1, 1, 2), gpuAlloc(1, 2, 0), gpuAlloc(1, 1, 0, 1), gpuAlloc(1, 0.5)} {
		before := s.Clone()
		if err := s.TakeChecked(&JobAlloc{Hosts: []HostAlloc{*bad}}, false); err == nil {
			t.Errorf("TakeChecked(%+v) took it", bad)
		}
		if !s.Equal(before) {
			t.Errorf("TakeChecked(%+v) failed but changed the state", bad)
		}
	}
	// A device held twice (Reserve checks nothing) breaks the invariant.
	s2 := NewState(c)
	s2.Reserve(gpuAlloc(0, 1))
	s2.vals[ResCol(0)]-- // a second holder of device 0: its count, not a second bit
	if err := s2.CheckInvariants(); err == nil || !strings.Contains(err.Error(), "GPUs [0] held (1), but 2 ngpus_physical in use") {
		t.Errorf("CheckInvariants = %v", err)
	}
}

// TestDeviceCopies: Clone and CopyFrom carry the held devices; a
// projection (Derive) does not track them, and a state copied from one
// stops tracking them.
func TestDeviceCopies(t *testing.T) {
	c := gpuCluster(t)
	s := NewState(c)
	a := gpuAlloc(0, 2)
	s.Reserve(a)
	cl := s.Clone()
	if cl.HeldGPUs(0) != 0b11 || !cl.Equal(s) {
		t.Fatalf("clone holds %b", cl.HeldGPUs(0))
	}
	b := gpuAlloc(0, 1)
	cl.Reserve(b)
	if cl.Equal(s) || s.HeldGPUs(0) != 0b11 {
		t.Fatal("a clone shares its devices with its source")
	}
	d := s.Derive()
	if d.TracksGPUs() {
		t.Fatal("a projection tracks devices")
	}
	p := gpuAlloc(0, 1)
	d.Reserve(p)
	if p.GPUs != 0 || d.Free(0, 0) != 1 {
		t.Fatalf("projection: GPUs %v, free %v", p.GPUs, d.Free(0, 0))
	}
	cl.CopyFrom(s)
	if cl.HeldGPUs(0) != 0b11 || !cl.Equal(s) {
		t.Fatalf("CopyFrom: held %b", cl.HeldGPUs(0))
	}
	cl.CopyFrom(d)
	if cl.TracksGPUs() {
		t.Fatal("a copy of a projection tracks devices")
	}
	// Releasing a's devices on a cluster without GPUs changes nothing.
	plain, err := Parse("p.yaml", []byte("hosts:\n  - {name: a, slots: 1}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if NewState(plain).TracksGPUs() {
		t.Fatal("a cluster without GPUs tracks devices")
	}
}

// TestRunningGPUJobs: the running jobs of a scenario hold the lowest free
// devices, in file order.
func TestRunningGPUJobs(t *testing.T) {
	c, err := Parse("r.yaml", []byte("hosts:\n  - {name: g, slots: 4, gpus: 4}\njobs:\n  - {id: 1, gpu: \"num=1\", running_on: {g: 1}}\n  - {id: 2, gpu: \"num=2\", running_on: {g: 1}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	s := NewState(c)
	var got [][]int
	for i := range c.Jobs {
		a := c.RunningAlloc(&c.Jobs[i])
		s.Take(a)
		got = append(got, a.Hosts[0].GPUs.List())
	}
	if !slices.EqualFunc(got, [][]int{{0}, {1, 2}}, slices.Equal) {
		t.Errorf("running jobs hold %v, want [[0] [1 2]]", got)
	}
}
