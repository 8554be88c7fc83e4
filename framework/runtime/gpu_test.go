package runtime_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/xce-sched/xce/cluster"
	"github.com/xce-sched/xce/framework"
	ct "github.com/xce-sched/xce/internal/clustertest"
)

// gpuState renders a job as state() does, each host followed by the
// devices it holds there: "RUN@0 g1*1[0 1]".
func gpuState(c *cluster.Cluster, j *framework.Job) string {
	if j.State != framework.Running {
		return state(c, j)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "RUN@%d", j.Start)
	for _, h := range j.Alloc.Hosts {
		fmt.Fprintf(&b, " %s*%d", c.Hosts[h.Host].Name, h.Slots)
		if h.GPUs != 0 {
			fmt.Fprintf(&b, "%v", h.GPUs)
		}
	}
	return b.String()
}

// gpuSpec: hosts c1 (no GPUs), g1 (4 A100) and g2 (2 V100), 4 slots each,
// and these jobs, all submitted at 0, one task each unless said:
//
//  1. -gpu num=2 (10 s): not c1, which has no GPUs; g1, devices 0 and 1.
//  2. -gpu num=1:mode=exclusive_process, select[gpu_model == V100] (30 s):
//     g2, device 0.
//  3. rusage[ngpus_physical=1] (20 s): g1 has 2 free: device 2.
//  4. -gpu num=2 (5 s): g1 has 1 free (3), g2 1 (1), c1 none: pends,
//     NotEnoughResource naming ngpus_physical, on all 3 hosts.
//  5. no GPU (5 s): c1, holding no device.
//  6. 2 tasks, span[ptile=1], -gpu num=1 (10 s): one device on each of 2
//     hosts: g1's 3 and g2's 1 (per host, as LSF reserves GPUs).
//  7. -gpu num=8: no host has 8 GPUs: it can never run (BadRequest,
//     naming ngpus_physical).
//
// At 10 jobs 1 and 6 end, freeing g1's 0, 1, 3 and g2's 1: job 4 starts
// on g1 with 0 and 1, the lowest free.
func gpuSpec() ct.Spec {
	return ct.Spec{Hosts: []ct.Host{
		{Name: "c1", Slots: 4, Mem: -1},
		{Name: "g1", Slots: 4, Mem: -1, GPUs: 4, GPUModel: "A100"},
		{Name: "g2", Slots: 4, Mem: -1, GPUs: 2, GPUModel: "V100"},
	}, Jobs: []ct.Job{
		{ID: 1, GPU: "num=2", Runtime: 10, Estimate: 10},
		{ID: 2, GPU: "num=1:mode=exclusive_process", ResReq: "select[gpu_model == V100]", Runtime: 30, Estimate: 30},
		{ID: 3, ResReq: "rusage[ngpus_physical=1]", Runtime: 20, Estimate: 20},
		{ID: 4, GPU: "num=2", Runtime: 5, Estimate: 5},
		{ID: 5, Runtime: 5, Estimate: 5},
		{ID: 6, Min: 2, GPU: "num=1", ResReq: "span[ptile=1]", Runtime: 10, Estimate: 10},
		{ID: 7, GPU: "num=8", Runtime: 1, Estimate: 1},
	}}
}

func TestGPUs(t *testing.T) {
	c, s := runQueues(t, gpuSpec(), 0)
	for i, want := range []string{"RUN@0 g1*1[0 1]", "RUN@0 g2*1[0]", "RUN@0 g1*1[2]", "PEND NotEnoughResource", "RUN@0 c1*1", "RUN@0 g1*1[3] g2*1[1]"} {
		if got := gpuState(c, s.Jobs[i]); got != want {
			t.Errorf("t=0 job %d: %s, want %s", i+1, got, want)
		}
	}
	j4 := s.Jobs[3]
	if d := s.MainDetail(&j4.Reasons); d != "ngpus_physical" {
		t.Errorf("job 4's reason names %q, want ngpus_physical", d)
	}
	if len(j4.Reasons.Hosts) != 1 || j4.Reasons.Hosts[0].Reason != framework.HostNotEnoughResource || j4.Reasons.Hosts[0].Hosts != 3 ||
		s.ReasonDetail(j4.Reasons.Hosts[0].Reason, j4.Reasons.Hosts[0].Detail) != "ngpus_physical" {
		t.Errorf("job 4's host reasons %+v", j4.Reasons.Hosts)
	}
	if j7 := s.Jobs[6]; j7.Reasons.Main != framework.BadRequest || !strings.Contains(j7.Reasons.Note, "rusage[ngpus_physical=8] is reserved on each of its hosts, and no matching host has that much (the most is 4)") {
		t.Errorf("job 7: %s (%s)", gpuState(c, j7), j7.Reasons.Note)
	}
	c, s = runQueues(t, gpuSpec(), 10)
	for i, want := range []string{"DONE@0-10", "RUN@0 g2*1[0]", "RUN@0 g1*1[2]", "RUN@10 g1*1[0 1]", "DONE@0-5", "DONE@0-10"} {
		if got := gpuState(c, s.Jobs[i]); got != want {
			t.Errorf("t=10 job %d: %s, want %s", i+1, got, want)
		}
	}
}

// TestGPUReservations: under every policy, the job that needs both of g's
// GPUs waits for them and gets them when job 1 ends, whatever reservation
// backfilling made for it (reservations count GPUs; devices are chosen
// when a job starts): host g has 4 slots and 2 GPUs.
//   - 1 (10 s): 1 GPU, device 0; 2 (5 s): 2 GPUs, pends;
//   - 3 (20 s): 1 GPU. fcfs: it waits behind 2. firstfit: it takes device
//     1 at 0 and 2 waits for it until 20. easy, conservative: 2 has a
//     reservation from 10, which 3 (20 s) would break: 3 waits.
//   - at 10 (but under firstfit) 2 starts on devices 0 and 1 for 5 s: 3
//     pends, for GPUs, or behind its own reservation from 15
//     (conservative).
func TestGPUReservations(t *testing.T) {
	spec := ct.Spec{Hosts: []ct.Host{{Name: "g", Slots: 4, Mem: -1, GPUs: 2}}, Jobs: []ct.Job{
		{ID: 1, GPU: "num=1", Runtime: 10, Estimate: 10},
		{ID: 2, GPU: "num=2", Runtime: 5, Estimate: 5},
		{ID: 3, GPU: "num=1", Runtime: 20, Estimate: 20},
	}}
	for _, tc := range []struct {
		policy cluster.Policy
		at10   []string
	}{
		{cluster.PolicyFCFS, []string{"DONE@0-10", "RUN@10 g*1[0 1]", "PEND NotEnoughResource"}},
		{cluster.PolicyFirstFit, []string{"DONE@0-10", "PEND NotEnoughResource", "RUN@0 g*1[1]"}},
		{cluster.PolicyEASY, []string{"DONE@0-10", "RUN@10 g*1[0 1]", "PEND NotEnoughResource"}},
		{cluster.PolicyConservative, []string{"DONE@0-10", "RUN@10 g*1[0 1]", "PEND Priority reserved@15 g*1"}},
	} {
		t.Run(string(tc.policy), func(t *testing.T) {
			c, s := runPolicy(t, spec, tc.policy, 10)
			for i, want := range tc.at10 {
				if got := gpuState(c, s.Jobs[i]); !strings.HasPrefix(got, want) {
					t.Errorf("t=10 job %d: %s, want %s", i+1, got, want)
				}
			}
		})
	}
}

// TestGPUPreemption, worked by hand on host g (2 slots, 2 GPUs); queue
// high preempts low. Job 1 (low, 1 slot, -gpu num=2) runs from 0 on
// devices 0 and 1; at 10 job 2 (high, 2 slots, no GPU) and job 3 (high,
// 1 slot, -gpu num=1) arrive.
//   - suspend: job 1 keeps its GPUs (a stopped process keeps its device
//     memory; LSF preempts GPUs by requeueing), so job 2 takes its slot
//     and both slots, and job 3, which needs a GPU, finds none (preempting
//     job 1 would not give it one). Tried again after job 2's preemption,
//     it finds both slots taken: it pends with NotEnoughSlots (slots are
//     checked first). Job 1 resumes when job 2 ends (20) on the same
//     devices 0 and 1; job 3 then finds a slot but no GPU.
//   - requeue: job 1 gives everything back, its devices included; job 2
//     takes both slots; job 3, tried again, finds no slot, and no device
//     is held.
func TestGPUPreemption(t *testing.T) {
	jobs := []ct.Job{
		{ID: 1, Queue: "low", GPU: "num=2", Running: map[string]int{"g": 1}, Runtime: 100, Estimate: 100},
		{ID: 2, Queue: "high", Min: 2, Submit: 10, Runtime: 10, Estimate: 10},
		{ID: 3, Queue: "high", GPU: "num=1", Submit: 10, Runtime: 10, Estimate: 10},
	}
	for _, tc := range []struct {
		action cluster.PreemptAction
		until  int64
		want   []string
	}{
		{cluster.PreemptSuspend, 10, []string{"SUSP@0 g*1 Preempted", "RUN@10 g*2", "PEND NotEnoughSlots"}},
		{cluster.PreemptSuspend, 20, []string{"RUN@0 g*1[0 1]", "DONE@10-20", "PEND NotEnoughResource"}},
		{cluster.PreemptRequeue, 10, []string{"PEND Requeued", "RUN@10 g*2", "PEND NotEnoughSlots"}},
	} {
		t.Run(fmt.Sprintf("%v until %d", tc.action, tc.until), func(t *testing.T) {
			spec := ct.Spec{Hosts: []ct.Host{{Name: "g", Slots: 2, Mem: -1, GPUs: 2}}, Jobs: jobs, Queues: preemptQueues(tc.action)}
			c, s := runQueues(t, spec, tc.until)
			for i, want := range tc.want {
				got := jobState(c, s.Jobs[i])
				if s.Jobs[i].State == framework.Running {
					got = gpuState(c, s.Jobs[i])
				}
				if !strings.HasPrefix(got, want) {
					t.Errorf("job %d: %s, want %s", i+1, got, want)
				}
			}
			if j1 := s.Jobs[0]; tc.action == cluster.PreemptSuspend && (j1.Alloc.Hosts[0].GPUs != 0b11 || s.State.HeldGPUs(0) != 0b11) {
				t.Errorf("job 1 holds %v, the host %v; want [0 1] throughout", j1.Alloc.Hosts[0].GPUs, s.State.HeldGPUs(0))
			}
			if tc.action == cluster.PreemptRequeue && s.State.HeldGPUs(0) != 0 {
				t.Errorf("after the requeue the host holds %v", s.State.HeldGPUs(0))
			}
		})
	}
}

// TestGPUPreemptionForGPUs: on host g (4 slots, 2 GPUs), job 1 (low, -gpu
// num=2) runs on devices 0 and 1; at 10 job 2 (high, -gpu num=1) needs a
// GPU. Requeue: job 1 is requeued and job 2 takes device 0. Suspend: a
// suspended job would keep its devices, so preempting job 1 gives job 2
// nothing: nothing is preempted and job 2 pends for ngpus_physical.
func TestGPUPreemptionForGPUs(t *testing.T) {
	jobs := []ct.Job{
		{ID: 1, Queue: "low", GPU: "num=2", Running: map[string]int{"g": 1}, Runtime: 100, Estimate: 100},
		{ID: 2, Queue: "high", GPU: "num=1", Submit: 10, Runtime: 10, Estimate: 10},
	}
	for _, tc := range []struct {
		action cluster.PreemptAction
		want   []string
	}{
		{cluster.PreemptRequeue, []string{"PEND Requeued", "RUN@10 g*1[0]"}},
		{cluster.PreemptSuspend, []string{"RUN@0 g*1[0 1]", "PEND NotEnoughResource"}},
	} {
		spec := ct.Spec{Hosts: []ct.Host{{Name: "g", Slots: 4, Mem: -1, GPUs: 2}}, Jobs: jobs, Queues: preemptQueues(tc.action)}
		c, s := runQueues(t, spec, 10)
		for i, want := range tc.want {
			if got := gpuState(c, s.Jobs[i]); got != want {
				t.Errorf("%v: job %d: %s, want %s", tc.action, i+1, got, want)
			}
		}
	}
}

// TestResumeReplansConservative: on host g (1 slot, 1 GPU) queue low is
// conservative and suspends its preempted jobs; queue high preempts it.
// Job 1 (low, a GPU, 20 s) runs from 0; job 2 (low, a GPU, 10 s) is
// reserved from 20. At 5 job 3 (high, 5 s) preempts job 1, which keeps
// its GPU while suspended: no time is known when the GPU comes back, and
// job 2 loses its reservation. At 10 job 3 ends and job 1 resumes: its
// GPU now comes back at 25 (20 s of run, 5 s suspended), a time no plan
// had, so job 2 is planned again: reserved from 25, it runs 25–35. (Were
// the resume taken as on plan, job 2 would keep "no time" and never run,
// since job 1 then ends exactly at its estimated end.)
func TestResumeReplansConservative(t *testing.T) {
	spec := ct.Spec{Hosts: []ct.Host{{Name: "g", Slots: 1, Mem: -1, GPUs: 1}},
		Queues: []cluster.Queue{
			{Name: "high", Priority: 10, Policy: cluster.PolicyFirstFit, Picker: "priority", Preemptive: []cluster.QueueID{1}},
			{Name: "low", Priority: 1, Policy: cluster.PolicyConservative, Picker: "priority", PreemptAction: cluster.PreemptSuspend},
		},
		Jobs: []ct.Job{
			{ID: 1, Queue: "low", GPU: "num=1", Runtime: 20, Estimate: 20},
			{ID: 2, Queue: "low", GPU: "num=1", Runtime: 10, Estimate: 10},
			{ID: 3, Queue: "high", Min: 1, Submit: 5, Runtime: 5, Estimate: 5},
		}}
	c, s := runQueues(t, spec, 100)
	for i, want := range []string{"DONE@0-25", "DONE@25-35", "DONE@5-10"} {
		if got := jobState(c, s.Jobs[i]); !strings.HasPrefix(got, want) {
			t.Errorf("job %d: %s, want %s", i+1, got, want)
		}
	}
}
