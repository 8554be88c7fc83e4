package runtime_test

import (
	"context"
	"fmt"
	"math"
	"slices"
	"testing"

	"pgregory.net/rapid"

	"github.com/xce-sched/xce/cluster"
	"github.com/xce-sched/xce/framework"
	"github.com/xce-sched/xce/framework/plugins"
	"github.com/xce-sched/xce/framework/runtime"
	ct "github.com/xce-sched/xce/internal/clustertest"
	"github.com/xce-sched/xce/sim"
)

// TestPropertyGPUs (issue 14 §6): over random clusters of GPU and
// non-GPU hosts and random jobs asking for GPUs by -gpu or by
// rusage[ngpus_physical], with spans, gpu_model selections, every policy
// and both reservation methods of ngpus_physical that make sense for GPUs
// (per host, per task), over many cycles as jobs end:
//   - no GPU is over-committed at any time, reservations included
//     (bruteCheck: the hosts define no other resource);
//   - every running job holds, on each of its hosts, exactly as many
//     distinct devices of that host as its ngpus_physical counts;
//   - no device is held by two running jobs, and the state's held devices
//     are exactly the running jobs' (State.CheckInvariants checks they
//     number the count in use);
//   - a job's devices never change while it runs;
//   - at the end every job ran, unless it can never run (BadRequest, or
//     NoHostMatch for a gpu_model no host has).
func TestPropertyGPUs(t *testing.T) {
	checkRounds(t, propertyRounds/2, func(t *rapid.T) {
		policies := []cluster.Policy{cluster.PolicyFCFS, cluster.PolicyFirstFit, cluster.PolicyEASY, cluster.PolicyConservative}
		spec := ct.Spec{Queues: []cluster.Queue{{Name: "normal", Policy: rapid.SampledFrom(policies).Draw(t, "policy"), Picker: "priority"}},
			GPUMethod: rapid.SampledFrom([]cluster.ReserveMethod{cluster.PerHost, cluster.PerTask}).Draw(t, "method")}
		for i := range rapid.IntRange(1, 4).Draw(t, "hosts") {
			spec.Hosts = append(spec.Hosts, ct.Host{Name: fmt.Sprintf("h%d", i), Slots: rapid.IntRange(1, 4).Draw(t, "slots"), Mem: -1,
				GPUs: rapid.IntRange(0, 4).Draw(t, "gpus"), GPUModel: rapid.SampledFrom([]string{"A100", "V100"}).Draw(t, "model")})
		}
		if !slices.ContainsFunc(spec.Hosts, func(h ct.Host) bool { return h.GPUs > 0 }) {
			spec.Hosts[0].GPUs = 1
		}
		for i := range rapid.IntRange(1, 12).Draw(t, "jobs") {
			rt := int64(rapid.IntRange(1, 20).Draw(t, "runtime"))
			j := ct.Job{ID: cluster.JobID(i + 1), Submit: int64(rapid.IntRange(0, 30).Draw(t, "submit")), Min: rapid.IntRange(1, 3).Draw(t, "tasks"),
				Runtime: rt, Estimate: rt + int64(rapid.IntRange(0, 5).Draw(t, "over"))}
			j.ResReq = rapid.SampledFrom([]string{"", "", "span[ptile=1]", "span[hosts=1]", "select[gpu_model == A100]"}).Draw(t, "resreq")
			n := rapid.IntRange(1, 3).Draw(t, "num")
			switch rapid.IntRange(0, 2).Draw(t, "gpu form") {
			case 1:
				j.GPU = fmt.Sprintf("num=%d:mode=%s", n, rapid.SampledFrom([]string{"shared", "exclusive_process"}).Draw(t, "mode"))
			case 2:
				j.ResReq += fmt.Sprintf(" rusage[ngpus_physical=%d]", n)
			}
			spec.Jobs = append(spec.Jobs, j)
		}
		c := ct.Build(spec)
		s, err := runtime.New(c, runtime.Options{Registry: plugins.NewInTreeRegistry()})
		if err != nil {
			t.Fatal(err)
		}
		started := map[cluster.JobID][]cluster.Devices{} // each running job's devices per host, as it started
		observe := func(e *sim.Event) {
			if err := s.State.CheckInvariants(); err != nil {
				t.Fatalf("t=%d: %v", e.Now, err)
			}
			if err := bruteCheck(c, s, e.Now); err != nil {
				t.Fatalf("after the cycle at %d: %v", e.Now, err)
			}
			if err := deviceCheck(c, s); err != nil {
				t.Fatalf("after the cycle at %d: %v", e.Now, err)
			}
			for _, j := range s.Jobs {
				if j.State != framework.Running {
					continue
				}
				var devs []cluster.Devices
				for _, h := range j.Alloc.Hosts {
					devs = append(devs, h.GPUs)
				}
				if prev, ok := started[j.Spec.ID]; ok && !slices.Equal(prev, devs) {
					t.Fatalf("t=%d job %d: devices %v, %v when it started", e.Now, j.Spec.ID, devs, prev)
				}
				started[j.Spec.ID] = devs
			}
		}
		if _, err := sim.Run(context.Background(), s, sim.Options{Until: math.MaxInt64, ZeroRuntimeEnds: true, Observe: observe}); err != nil {
			t.Fatal(err)
		}
		for _, j := range s.Jobs {
			if j.State != framework.Done && j.Reasons.Main != framework.BadRequest && j.Reasons.Main != framework.NoHostMatch {
				t.Fatalf("job %d did not complete: %v %v (%s)", j.Spec.ID, j.State, j.Reasons.Main, j.Reasons.Note)
			}
		}
	})
}

// deviceCheck returns an error when a running job (or a suspended one, in
// what it keeps) does not hold, on one of its hosts, exactly as many
// devices of that host as its ngpus_physical counts there, when a device
// is held by two jobs, or when the state's held devices are not exactly
// the jobs'. A suspended job keeps its devices: the ones it ran on.
func deviceCheck(c *cluster.Cluster, s *runtime.Scheduler) error {
	gpuRes, ok := c.GPUResource()
	if !ok {
		return nil
	}
	held := make([]cluster.Devices, len(c.Hosts))
	for _, j := range s.Jobs {
		a := j.Alloc
		switch {
		case j.State == framework.Suspended && j.Held != nil:
			a = j.Held
			for _, h := range a.Hosts {
				i := slices.IndexFunc(j.Alloc.Hosts, func(x cluster.HostAlloc) bool { return x.Host == h.Host })
				if i < 0 || j.Alloc.Hosts[i].GPUs != h.GPUs {
					return fmt.Errorf("suspended job %d keeps devices %v on host %d, not the ones it ran on", j.Spec.ID, h.GPUs, h.Host)
				}
			}
		case j.State != framework.Running:
			continue
		}
		for _, h := range a.Hosts {
			count := 0.0
			for _, r := range h.Res {
				if r.Res == gpuRes {
					count += r.Amount
				}
			}
			name, total := c.Hosts[h.Host].Name, c.Hosts[h.Host].Capacity[gpuRes]
			switch {
			case h.GPUs.Len() != int(count):
				return fmt.Errorf("job %d on %s: devices %v for %v ngpus_physical", j.Spec.ID, name, h.GPUs, count)
			case h.GPUs&held[h.Host] != 0:
				return fmt.Errorf("job %d on %s: devices %v, of which another job holds some (%v)", j.Spec.ID, name, h.GPUs, held[h.Host])
			}
			for _, g := range h.GPUs.List() {
				if float64(g) >= total {
					return fmt.Errorf("job %d: device %d of %s, which has %v", j.Spec.ID, g, name, total)
				}
			}
			held[h.Host] |= h.GPUs
		}
	}
	for h := range c.Hosts {
		if got := s.State.HeldGPUs(cluster.HostID(h)); got != held[h] {
			return fmt.Errorf("host %s: the state holds %v, the running jobs %v", c.Hosts[h].Name, got, held[h])
		}
	}
	return nil
}
