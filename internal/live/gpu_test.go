package live

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/xce-sched/xce/cluster"
	"github.com/xce-sched/xce/framework/plugins"
	"github.com/xce-sched/xce/internal/event"
	"github.com/xce-sched/xce/internal/state"
)

const gpuConfig = `
hosts:
  - {name: g1, slots: 4, gpus: 4, gpu_model: A100}
  - {name: g2, slots: 4, gpus: 2, gpu_model: V100}
queues:
  - {name: normal, policy: firstfit}
`

// logHarness is a harness that keeps the log it writes.
type logHarness struct {
	harness
	log []event.Event
}

func (h *logHarness) apply(e event.Event) {
	h.t.Helper()
	h.harness.apply(e)
	e.Index = h.k.State.Index
	h.log = append(h.log, e)
}

func (h *logHarness) cycle(sec int64) *event.Cycle {
	h.t.Helper()
	e, ok, err := h.k.Cycle(context.Background(), sec*1e9)
	if err != nil || !ok {
		h.t.Fatalf("cycle at %d: %v, %v", sec, ok, err)
	}
	e.Index = h.k.State.Index + 1
	if err := h.k.Commit(e); err != nil {
		h.t.Fatal(err)
	}
	h.log = append(h.log, e)
	return e.Cycle
}

func gpuSub(id event.JobID, gpu, rr string) *event.Submit {
	s := sub(id, 1, rr)
	s.GPU = gpu
	return s
}

// TestCoreGPUs, worked by hand on g1 (4 GPUs) and g2 (2), firstfit: the
// placements carry each host's devices; the state, a restart (New over
// the state) and a fold of the log all give the jobs exactly those
// devices, and later jobs get the others.
//   - cycle 1: job 1 (-gpu num=2) takes g1's 0 and 1, job 2 (num=1,
//     exclusive_process) g1's 2, job 3 (rusage[ngpus_physical=2]) finds 1
//     on g1 and takes g2's 0 and 1.
//   - job 1 ends; the core is rebuilt from the state (a restart): jobs 2
//     and 3 hold g1's 2 and g2's 0, 1 again.
//   - cycle 2: job 4 (num=2) takes g1's 0 and 1, the lowest free.
func TestCoreGPUs(t *testing.T) {
	c, k := coreOf(t, gpuConfig, state.New())
	h := &logHarness{harness: harness{t: t, k: k}}
	h.apply(event.Event{At: 1e9, Type: event.ConfigReloaded, Config: &event.Config{Text: gpuConfig}})
	for _, name := range []string{"g1", "g2"} {
		h.apply(event.Event{At: 1e9, Type: event.HostRegistered, Host: &event.Host{Name: name}})
	}
	h.apply(event.Event{At: 1e9, Type: event.JobSubmitted, Submit: gpuSub(1, "num=2", "")})
	h.apply(event.Event{At: 1e9, Type: event.JobSubmitted, Submit: gpuSub(2, "num=1:mode=exclusive_process", "")})
	h.apply(event.Event{At: 1e9, Type: event.JobSubmitted, Submit: gpuSub(3, "", "rusage[ngpus_physical=2]")})
	gpus := func(n float64) map[string]float64 { return map[string]float64{"ngpus_physical": n} }
	want := []event.Placement{
		{Job: 1, Attempt: 1, Hosts: []event.HostAlloc{{Host: "g1", Slots: 1, Res: gpus(2), GPUs: []int{0, 1}}}},
		{Job: 2, Attempt: 1, Hosts: []event.HostAlloc{{Host: "g1", Slots: 1, Res: gpus(1), GPUs: []int{2}}}},
		{Job: 3, Attempt: 1, Hosts: []event.HostAlloc{{Host: "g2", Slots: 1, Res: gpus(2), GPUs: []int{0, 1}}}},
	}
	if got := h.cycle(1); !reflect.DeepEqual(got.Started, want) {
		t.Fatalf("cycle 1 started\n got %+v\nwant %+v", got.Started, want)
	}
	if got := h.k.State.Job(2).Hosts[0].GPUs; !reflect.DeepEqual(got, []int{2}) {
		t.Errorf("the state says job 2 holds %v", got)
	}
	h.apply(event.Event{At: 2e9, Type: event.JobFinished, Finished: &event.Finished{Job: 1, Attempt: 1}})

	// A restart: the scheduler rebuilt from the state holds the same devices.
	k2, err := New(c, h.k.State, plugins.NewInTreeRegistry())
	if err != nil {
		t.Fatal(err)
	}
	g1, _ := c.HostByName("g1")
	g2, _ := c.HostByName("g2")
	if a, b := k2.Sched.State.HeldGPUs(g1), k2.Sched.State.HeldGPUs(g2); a != 0b100 || b != 0b11 {
		t.Fatalf("after a restart: g1 holds %b, g2 %b; want 100, 11", a, b)
	}
	h.k = k2
	h.apply(event.Event{At: 3e9, Type: event.JobSubmitted, Submit: gpuSub(4, "num=2", "")})
	want = []event.Placement{{Job: 4, Attempt: 1, Hosts: []event.HostAlloc{{Host: "g1", Slots: 1, Res: gpus(2), GPUs: []int{0, 1}}}}}
	if got := h.cycle(3); !reflect.DeepEqual(got.Started, want) {
		t.Fatalf("cycle 2 started\n got %+v\nwant %+v", got.Started, want)
	}
	if err := k2.Sched.State.CheckInvariants(); err != nil {
		t.Fatal(err)
	}

	// The fold of the log gives every job the devices of its placement.
	fold := state.New()
	for _, e := range h.log {
		if err := fold.Apply(e); err != nil {
			t.Fatalf("fold: %v", err)
		}
	}
	for _, id := range []event.JobID{1, 2, 3, 4} {
		if got, want := fold.Job(id).Hosts, h.k.State.Job(id).Hosts; !reflect.DeepEqual(got, want) {
			t.Errorf("job %d: the fold holds %+v, the core's state %+v", id, got, want)
		}
	}

	// A log whose placements give one device to two running jobs is
	// refused at start-up, naming the device.
	bad, err := state.Unmarshal(mustMarshal(t, fold))
	if err != nil {
		t.Fatal(err)
	}
	bad.Job(4).Hosts[0].GPUs = []int{1, 2}
	if _, err := New(c, bad, plugins.NewInTreeRegistry()); err == nil || !strings.Contains(err.Error(), "GPU 2 is held by another job") {
		t.Errorf("New over a log giving device 2 twice: %v", err)
	}
}

func mustMarshal(t *testing.T, st *state.State) []byte {
	t.Helper()
	b, err := st.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestCoreGPUChecks: a submit's -gpu is checked against its requirement
// and the configuration before it is taken.
func TestCoreGPUChecks(t *testing.T) {
	_, k := coreOf(t, gpuConfig, state.New())
	plain, _ := cluster.Parse("plain.yaml", []byte(config))
	kp, err := New(plain, state.New(), plugins.NewInTreeRegistry())
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		k    *Core
		s    *event.Submit
		want string
	}{
		{k, gpuSub(1, "num=2:mode=bad", ""), "gpu: col 12: mode must be shared or exclusive_process"},
		{k, gpuSub(1, "num=1", "rusage[ngpus_physical=1]"), "give the number of GPUs once"},
		{k, gpuSub(1, "num=1", "{select[gpu_model == A100]} || {select[gpu_model == V100]}"), "simple resource requirement only"},
		{k, gpuSub(1, "", "rusage[ngpus_physical=1.5]"), "a number of GPUs is a whole number"},
		{kp, gpuSub(1, "num=1", ""), "no host of the cluster has GPUs"},
	} {
		err := tc.k.Check(event.Event{Index: tc.k.State.Index + 1, At: 1e9, Type: event.JobSubmitted, Submit: tc.s})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("submit gpu %q resreq %q: %v, want %q", tc.s.GPU, tc.s.ResReq, err, tc.want)
		}
	}
}
