package runtime_test

import (
	"fmt"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/xce-sched/xce/cluster"
	"github.com/xce-sched/xce/depend"
	"github.com/xce-sched/xce/framework"
	"github.com/xce-sched/xce/framework/plugins"
	xrt "github.com/xce-sched/xce/framework/runtime"
	ct "github.com/xce-sched/xce/internal/clustertest"
)

// mixedCluster: 10,000 hosts × 32 slots (64 GB each), a license pool of
// 5,000, a per-user limit of 8,000 slots, and 100,000 pending jobs: 80%
// single-slot, 20% parallel (half span[ptile=8] of 16–64 tasks, half
// compound), 10% with a license. The jobs belong to 100 users by a
// multiplicative hash of their index, so a user's share does not depend on
// the job's shape.
func mixedCluster(policy cluster.Policy) *cluster.Cluster {
	return mixedClusterN(policy, 10000, 100000)
}

// mixedClusterN is mixedCluster with nhosts hosts and njobs jobs.
func mixedClusterN(policy cluster.Policy, nhosts, njobs int) *cluster.Cluster {
	spec := ct.Spec{
		Shared: []cluster.Shared{{Name: "lic", Total: 5000}},
		Queues: []cluster.Queue{{Name: "normal", Policy: policy, Picker: "priority"}},
		Limits: []cluster.Limit{{Name: "per_user", Users: cluster.Consumers{All: true, PerConsumer: true}, Slots: 8000, Jobs: -1}},
	}
	for i := range nhosts {
		spec.Hosts = append(spec.Hosts, ct.Host{Name: fmt.Sprintf("h%05d", i), Slots: 32, Mem: 64000, Type: "X86_64"})
	}
	for i := range njobs {
		j := ct.Job{ID: cluster.JobID(i + 1), User: fmt.Sprintf("u%d", uint32(i)*2654435761>>16%100), Submit: int64(i / 100), Min: 1, Runtime: 3600, Estimate: 7200}
		switch {
		case i%10 == 9:
			j.Min, j.ResReq = 16<<(i%3), "span[ptile=8] rusage[mem=1000]"
		case i%10 == 8:
			j.Min, j.ResReq = 24, "8*{rusage[mem=4000]} + 16*{span[ptile=16]}"
		case i%10 == 3:
			j.ResReq = "rusage[mem=1000:lic=1]"
		default:
			j.ResReq = "rusage[mem=1000]"
		}
		spec.Jobs = append(spec.Jobs, j)
	}
	return ct.Build(spec)
}

// TestMixedCycle runs the mixed workload at a twentieth of the benchmark's
// size (500 hosts, 5,000 jobs: more than the cluster holds) under FCFS and
// EASY and checks what the benchmarks cannot: nothing over-committed (slots,
// mem, licenses, the per-user limit), every running job holds exactly its
// tasks with at most 8 per host under span[ptile=8], and the same
// decisions without the unsatisfiable cache.
func TestMixedCycle(t *testing.T) {
	for _, policy := range []cluster.Policy{cluster.PolicyFCFS, cluster.PolicyEASY} {
		t.Run(string(policy), func(t *testing.T) {
			c := mixedClusterN(policy, 500, 5000)
			decisions, s := decisionsOf(t, c, false)
			if again, _ := decisionsOf(t, c, true); !slices.Equal(decisions, again) {
				t.Fatal("decisions differ without the unsatisfiable cache")
			}
			if err := s.State.CheckInvariants(); err != nil {
				t.Fatal(err)
			}
			running, lic, used := 0, 0, map[string]int{}
			for _, j := range s.Jobs {
				if j.State != framework.Running {
					continue
				}
				running++
				if got := j.Alloc.Slots(); got != j.Spec.TasksMin {
					t.Fatalf("job %d holds %d slots for %d tasks", j.Spec.ID, got, j.Spec.TasksMin)
				}
				for _, h := range j.Alloc.Hosts {
					if strings.Contains(j.Spec.ResReq, "ptile=8") && h.Slots > 8 {
						t.Fatalf("job %d: %d tasks on one host under span[ptile=8]", j.Spec.ID, h.Slots)
					}
				}
				if strings.Contains(j.Spec.ResReq, "lic") {
					lic++
				}
				used[j.Spec.User] += j.Spec.TasksMin
			}
			for u, n := range used {
				if n > 8000 {
					t.Fatalf("user %s holds %d slots over the limit of 8000", u, n)
				}
			}
			if lic > 5000 || running < 1000 {
				t.Fatalf("%d license jobs (at most 5000), %d jobs placed (expected the cluster to fill)", lic, running)
			}
		})
	}
}

// benchMixed times one cycle over the mixed cluster and reports how many
// single-slot and parallel jobs it placed, and each count over the cycle's
// time (issue 7: at least 500,000 single-slot and 50,000 parallel jobs/s).
func benchMixed(b *testing.B, policy cluster.Policy) { benchMixedOn(b, mixedCluster(policy)) }

// benchMixedOn is benchMixed on cluster c.
func benchMixedOn(b *testing.B, c *cluster.Cluster) {
	b.ReportAllocs()
	var seq, par int
	for b.Loop() {
		jobs := timedCycle(b, c, xrt.Options{}, 1<<40)
		seq, par = 0, 0
		for _, j := range jobs {
			if j.State == framework.Running {
				if j.Spec.TasksMax == 1 {
					seq++
				} else {
					par++
				}
			}
		}
		b.StartTimer()
	}
	// Each rate is over the whole cycle's time (placing the other kind,
	// and diagnosing the jobs that pend, included).
	secs := b.Elapsed().Seconds() / float64(b.N)
	b.ReportMetric(float64(seq), "seq-placed")
	b.ReportMetric(float64(par), "par-placed")
	b.ReportMetric(float64(seq)/secs, "seq/s")
	b.ReportMetric(float64(par)/secs, "par/s")
}

// BenchmarkMixedCycleFCFS and BenchmarkMixedCycleEASY: one cycle of the
// issue-7 mixed workload (10,000 hosts × 32 slots, 100,000 pending jobs).
func BenchmarkMixedCycleFCFS(b *testing.B) { benchMixed(b, cluster.PolicyFCFS) }
func BenchmarkMixedCycleEASY(b *testing.B) { benchMixed(b, cluster.PolicyEASY) }

// BenchmarkGiantJob: one 77,000-task job on 93,000 single-slot hosts (the
// size of the largest jobs in the CEA Curie log); target under 50 ms.
func BenchmarkGiantJob(b *testing.B) {
	spec := ct.Spec{}
	for i := range 93000 {
		spec.Hosts = append(spec.Hosts, ct.Host{Name: fmt.Sprintf("n%05d", i), Slots: 1, Mem: -1})
	}
	spec.Jobs = []ct.Job{{ID: 1, Min: 77000}}
	c := ct.Build(spec)
	b.ReportAllocs()
	for b.Loop() {
		jobs := timedCycle(b, c, xrt.Options{}, 0)
		if jobs[0].State != framework.Running || jobs[0].Alloc.Slots() != 77000 {
			b.Fatal("the giant job was not placed")
		}
		b.StartTimer()
	}
}

// BenchmarkStatePerPendingJob reports the bytes of scheduler state per
// pending job: heap in use after building a scheduler over 100,000
// pending jobs, less the same without jobs, over the job count (target
// ≤ 256 bytes; the cluster's own job records from the scenario are not
// counted, as they are the input).
func BenchmarkStatePerPendingJob(b *testing.B) {
	c := mixedCluster(cluster.PolicyFCFS)
	empty := *c
	empty.Jobs = nil
	heap := func(c *cluster.Cluster) (uint64, *xrt.Scheduler) {
		runtime.GC()
		var m0, m1 runtime.MemStats
		runtime.ReadMemStats(&m0)
		s, err := xrt.New(c, xrt.Options{Registry: plugins.NewInTreeRegistry()})
		if err != nil {
			b.Fatal(err)
		}
		runtime.GC()
		runtime.ReadMemStats(&m1)
		return m1.HeapAlloc - m0.HeapAlloc, s
	}
	var per float64
	for b.Loop() {
		base, s0 := heap(&empty)
		full, s1 := heap(c)
		per = float64(full-base) / float64(len(c.Jobs))
		runtime.KeepAlive(s0)
		runtime.KeepAlive(s1)
	}
	b.ReportMetric(per, "B/pending-job")
}

// mixedGatedCluster is mixedCluster with 10% of the jobs elements of job
// arrays (those with i%10 == 5: every 100 consecutive jobs' ten form an
// array capped at 5 running) and 10% with a dependency (i%10 == 6:
// done() of the job submitted just before, which pends or runs in the
// cycle): issue 14's benchmark.
func mixedGatedCluster(policy cluster.Policy) *cluster.Cluster {
	c := mixedClusterN(policy, 10000, 100000)
	for i := range c.Jobs {
		j := &c.Jobs[i]
		switch i % 10 {
		case 5:
			j.Array, j.ArrayIndex, j.ArrayLimit = cluster.JobID(i/100*100+6), int64(i%100/10+1), 5
		case 6:
			e, err := depend.Parse(fmt.Sprintf("done(%d)", i))
			if err != nil {
				panic(err)
			}
			j.Depend = e
		}
	}
	return c
}

// BenchmarkMixedCycleGatedFCFS and BenchmarkMixedCycleGatedEASY: one cycle
// of mixedGatedCluster, to compare with BenchmarkMixedCycleFCFS and
// BenchmarkMixedCycleEASY (issue 14: within 20%).
func BenchmarkMixedCycleGatedFCFS(b *testing.B) {
	benchMixedOn(b, mixedGatedCluster(cluster.PolicyFCFS))
}
func BenchmarkMixedCycleGatedEASY(b *testing.B) {
	benchMixedOn(b, mixedGatedCluster(cluster.PolicyEASY))
}
