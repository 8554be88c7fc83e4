package runtime_test

import (
	"context"
	"fmt"
	goruntime "runtime"
	"strings"
	"testing"

	"github.com/xce-sched/xce/cluster"
	"github.com/xce-sched/xce/framework"
	"github.com/xce-sched/xce/framework/plugins"
	"github.com/xce-sched/xce/framework/runtime"
	ct "github.com/xce-sched/xce/internal/clustertest"
)

// benchCluster returns nhosts hosts of slots slots each, and njobs jobs of
// tasks tasks with resreq rr, all submitted at time 0.
func benchCluster(nhosts, slots, njobs, tasks int, rr string) *cluster.Cluster {
	spec := ct.Spec{}
	for i := range nhosts {
		spec.Hosts = append(spec.Hosts, ct.Host{Name: fmt.Sprintf("h%05d", i), Slots: slots, Mem: -1, Type: "X86_64"})
	}
	for i := range njobs {
		spec.Jobs = append(spec.Jobs, ct.Job{ID: cluster.JobID(i + 1), Min: tasks, ResReq: rr})
	}
	return ct.Build(spec)
}

// timedCycle builds a fresh scheduler over c outside the timer, then times
// one cycle at time now and returns the jobs it considered (the timer is
// stopped on return; the caller restarts it). A garbage collection runs
// before the timer starts, so the cycle does not pay for the set-up's
// garbage; it still pays for collections its own allocations cause.
func timedCycle(b *testing.B, c *cluster.Cluster, opts runtime.Options, now int64) []*framework.Job {
	b.StopTimer()
	opts.Registry = plugins.NewInTreeRegistry()
	s, err := runtime.New(c, opts)
	if err != nil {
		b.Fatal(err)
	}
	goruntime.GC()
	b.StartTimer()
	jobs, err := s.Cycle(context.Background(), now)
	b.StopTimer()
	if err != nil {
		b.Fatal(err)
	}
	return jobs
}

// benchCycle times one scheduling cycle over c's jobs (a fresh scheduler
// per iteration, built outside the timer) and reports jobs placed per second.
func benchCycle(b *testing.B, c *cluster.Cluster) {
	b.ReportAllocs()
	placed := 0
	for b.Loop() {
		jobs := timedCycle(b, c, runtime.Options{}, 0)
		placed = 0
		for _, j := range jobs {
			if j.Alloc != nil {
				placed++
			}
		}
		if placed != len(c.Jobs) {
			b.Fatalf("placed %d of %d jobs", placed, len(c.Jobs))
		}
		b.StartTimer()
	}
	b.ReportMetric(float64(placed)*float64(b.N)/b.Elapsed().Seconds(), "jobs/s")
}

// BenchmarkCycleSeq100k: one cycle placing 100,000 single-slot jobs on
// 10,000 hosts × 16 slots (issue target: >= 500,000 placements/s).
func BenchmarkCycleSeq100k(b *testing.B) {
	benchCycle(b, benchCluster(10000, 16, 100000, 1, ""))
}

// BenchmarkCyclePtile64: one cycle placing 2,000 jobs of 64 tasks with
// span[ptile=16] on 10,000 hosts × 16 slots (target: >= 50,000 jobs/s).
func BenchmarkCyclePtile64(b *testing.B) {
	benchCycle(b, benchCluster(10000, 16, 2000, 64, "span[ptile=16]"))
}

// blockedCluster: 10,000 hosts × 16 slots all full (one running job each),
// and 100,000 pending single-slot jobs of 10 request shapes that cannot run.
func blockedCluster() *cluster.Cluster {
	spec := ct.Spec{}
	for i := range 10000 {
		name := fmt.Sprintf("h%05d", i)
		spec.Hosts = append(spec.Hosts, ct.Host{Name: name, Slots: 16, Mem: -1, Type: "X86_64"})
		spec.Jobs = append(spec.Jobs, ct.Job{ID: cluster.JobID(i + 1), Min: 16, Running: map[string]int{name: 16}})
	}
	shapes := []string{"", "select[type==X86_64]", "span[hosts=1]", "span[ptile=2]", "select[slots>=1]",
		"order[-slots]", "select[maxslots==16]", "span[ptile=4]", "select[!(type==ARM)]", "same[type]"}
	for i := range 100000 {
		spec.Jobs = append(spec.Jobs, ct.Job{ID: cluster.JobID(100000 + i), Min: 1 + i%2, ResReq: shapes[i%len(shapes)]})
	}
	return ct.Build(spec)
}

// benchBlocked times one cycle in which nothing fits.
func benchBlocked(b *testing.B, noCache bool) {
	c := blockedCluster()
	b.ReportAllocs()
	for b.Loop() {
		jobs := timedCycle(b, c, runtime.Options{NoUnsatCache: noCache}, 0)
		if len(jobs) != 100000 || jobs[0].State != framework.Pending {
			b.Fatalf("expected 100000 pending jobs")
		}
		b.StartTimer()
	}
}

// BenchmarkCycleBlocked100kCache: 100,000 pending jobs, none fits, with
// the unsatisfiable cache (issue 7 target: under 50 ms).
func BenchmarkCycleBlocked100kCache(b *testing.B) { benchBlocked(b, false) }

// BenchmarkCycleBlocked100kNoCache: the same cycle without the cache (run
// with -benchtime=1x: every job walks and diagnoses all 10,000 hosts).
func BenchmarkCycleBlocked100kNoCache(b *testing.B) { benchBlocked(b, true) }

// BenchmarkCycleDependencyFanIn: issue 29's stall in one cycle. One host
// of one slot runs job 1; 915 pending jobs of one user are named m, and 85
// more wait on `done("m") || done("m") || …` (1,000 conditions each). The
// dependency gate evaluates alike conditions once per cycle (depend.Memo):
// before, each of the 85,000 conditions listed the 915 jobs.
//
//	go test -run '^$' -bench BenchmarkCycleDependencyFanIn -benchtime 5x ./framework/runtime/
func BenchmarkCycleDependencyFanIn(b *testing.B) {
	spec := ct.Spec{Hosts: []ct.Host{{Name: "h", Slots: 1, Mem: -1}},
		Jobs: []ct.Job{{ID: 1, Min: 1, Runtime: 100, Estimate: 100, Running: map[string]int{"h": 1}}}}
	expr := `done("m")` + strings.Repeat(` || done("m")`, 999)
	for i := range 1000 {
		j := ct.Job{ID: cluster.JobID(i + 2), User: "u", Min: 1, Runtime: 10, Estimate: 10, Name: "m"}
		if i >= 915 {
			j.Name, j.Depend = "", expr
		}
		spec.Jobs = append(spec.Jobs, j)
	}
	c := ct.Build(spec)
	for b.Loop() {
		jobs := timedCycle(b, c, runtime.Options{}, 0)
		if r := jobs[len(jobs)-1].Reasons; r.Main != framework.Dependency {
			b.Fatalf("the last job pends %v, want Dependency", r.Main)
		}
		b.StartTimer()
	}
}
