package runtime_test

import (
	"fmt"
	"testing"

	"github.com/xce-sched/xce/cluster"
	"github.com/xce-sched/xce/framework"
	"github.com/xce-sched/xce/framework/runtime"
	ct "github.com/xce-sched/xce/internal/clustertest"
)

// preemptBenchCluster is a full cluster of nhosts hosts of 4 slots, each
// slot held by a one-task job of queue low (started at times 0 … n−1),
// and npre jobs of queue high, which preempts low, of tasks tasks each
// (span[hosts=1]), submitted at 10,000,000: every one needs victims.
func preemptBenchCluster(nhosts, npre, tasks int, action cluster.PreemptAction) *cluster.Cluster {
	spec := ct.Spec{Queues: []cluster.Queue{
		{Name: "high", Priority: 10, Policy: cluster.PolicyFirstFit, Picker: "priority", Preemptive: []cluster.QueueID{1}},
		{Name: "low", Priority: 1, Policy: cluster.PolicyFirstFit, Picker: "priority", PreemptAction: action},
	}}
	id := cluster.JobID(1)
	for i := range nhosts {
		name := fmt.Sprintf("h%05d", i)
		spec.Hosts = append(spec.Hosts, ct.Host{Name: name, Slots: 4, Mem: 16000})
		for range 4 {
			spec.Jobs = append(spec.Jobs, ct.Job{ID: id, Queue: "low", Min: 1, ResReq: "rusage[mem=1000]", Running: map[string]int{name: 1},
				Start: int64(id), Runtime: 1e8, Estimate: 1e8})
			id++
		}
	}
	for range npre {
		spec.Jobs = append(spec.Jobs, ct.Job{ID: id, Queue: "high", Submit: 1e7, Min: tasks, ResReq: "rusage[mem=1000] span[hosts=1]", Runtime: 100, Estimate: 100})
		id++
	}
	return ct.Build(spec)
}

// benchPreempt times one cycle in which every job of high starts by
// preemption, and reports preemptors started per second.
func benchPreempt(b *testing.B, tasks int, action cluster.PreemptAction) {
	const nhosts, npre = 10_000, 1_000
	c := preemptBenchCluster(nhosts, npre, tasks, action)
	b.ReportAllocs()
	for b.Loop() {
		jobs := timedCycle(b, c, runtime.Options{}, 1e7)
		started := 0
		for _, j := range jobs {
			if j.State == framework.Running {
				started++
			}
		}
		if started != npre {
			b.Fatalf("started %d of %d preemptors", started, npre)
		}
		b.StartTimer()
	}
	b.ReportMetric(float64(npre)*float64(b.N)/b.Elapsed().Seconds(), "preemptors/s")
}

// BenchmarkPreemptCycle1 (issue 14 §4): 1,000 one-task preemptors on a
// full cluster of 10,000 hosts × 4 slots (40,000 running one-task jobs of
// the preemptable queue): each suspends the most recently started job.
func BenchmarkPreemptCycle1(b *testing.B) { benchPreempt(b, 1, cluster.PreemptSuspend) }

// BenchmarkPreemptCycle4: the same with 4-task preemptors (span[hosts=1]):
// each suspends the four jobs of one host.
func BenchmarkPreemptCycle4(b *testing.B) { benchPreempt(b, 4, cluster.PreemptSuspend) }

// BenchmarkPreemptCycle4Requeue: 4-task preemptors that requeue their
// victims.
func BenchmarkPreemptCycle4Requeue(b *testing.B) { benchPreempt(b, 4, cluster.PreemptRequeue) }
