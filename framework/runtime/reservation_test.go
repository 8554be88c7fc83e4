package runtime_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/xce-sched/xce/cluster"
	"github.com/xce-sched/xce/framework"
	ct "github.com/xce-sched/xce/internal/clustertest"
)

// TestReservationUsage works out by hand, for each way of reserving mem
// (docs/reservation.md), the first cycle of a firstfit queue; each host's
// allocation is written host*slots:mem.
func TestReservationUsage(t *testing.T) {
	h := func(name string, slots int, mem float64) ct.Host { return ct.Host{Name: name, Slots: slots, Mem: mem} }
	two := []ct.Host{h("h1", 4, 4000), h("h2", 4, 4000)}
	// Job 1, 6 tasks of 1000 MB: buckets 4 + 2, h1 then h2. Job 2, 2
	// tasks of 2500 MB on one host: only h2 has slots left.
	pair := []ct.Job{{ID: 1, Min: 6, ResReq: "rusage[mem=1000]"}, {ID: 2, Min: 2, ResReq: "rusage[mem=2500] span[hosts=1]"}}
	tests := []struct {
		name   string
		hosts  []ct.Host
		method cluster.ReserveMethod
		jobs   []ct.Job
		want   []string
	}{
		// 4 × 1000 on h1, 2 × 1000 on h2; job 2 would need 2 × 2500 of
		// h2's 2000.
		{"per task", two, cluster.PerTask, pair, []string{"h1*4:4000 h2*2:2000", "PEND"}},
		// 1000 on each host of job 1; job 2 takes 2500 of h2's 3000.
		{"per host", two, cluster.PerHost, pair, []string{"h1*4:1000 h2*2:1000", "h2*2:2500"}},
		// 1000 on job 1's first host only; job 2 takes 2500 of h2's 4000.
		{"per job", two, cluster.PerJob, pair, []string{"h1*4:1000 h2*2:0", "h2*2:2500"}},
		// Only h2 has room for the per-job 1000: it takes the first
		// bucket (its 2 slots) and h1, with 500 MB, the other 4 tasks.
		{"per job, the host with room first", []ct.Host{h("h1", 4, 500), h("h2", 2, 4000)}, cluster.PerJob,
			[]ct.Job{{ID: 1, Min: 6, ResReq: "rusage[mem=1000]"}}, []string{"h2*2:1000 h1*4:0"}},
		// Per host, h1 cannot reserve 1000: 2 tasks on h2 are not 6.
		{"per host, a host without room", []ct.Host{h("h1", 4, 500), h("h2", 2, 4000)}, cluster.PerHost,
			[]ct.Job{{ID: 1, Min: 6, ResReq: "rusage[mem=1000]"}}, []string{"PEND"}},
		// span[ptile=4] of 5 tasks: no host with room takes a full ptile
		// (h1 has 500 MB), so the remainder bucket comes first, on h2.
		{"per job, remainder first", []ct.Host{h("h1", 4, 500), h("h2", 1, 4000)}, cluster.PerJob,
			[]ct.Job{{ID: 1, Min: 5, ResReq: "rusage[mem=1000] span[ptile=4]"}}, []string{"h2*1:1000 h1*4:0"}},
		// A compound job: each term reserves on its own first host; the
		// first term's 2 tasks go to h1 (3000), the second's 4 tasks to
		// h2 (500 once).
		{"per job, compound", two, cluster.PerJob,
			[]ct.Job{{ID: 1, Min: 6, ResReq: "2*{rusage[mem=3000]} + 4*{rusage[mem=500]}"}}, []string{"h1*2:3000 h2*4:500"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, s := runQueues(t, ct.Spec{Hosts: tc.hosts, Jobs: tc.jobs, MemMethod: tc.method}, 0)
			for i, want := range tc.want {
				if got := memAlloc(c, s.Jobs[i]); got != want {
					t.Errorf("job %d: got %q, want %q", i+1, got, want)
				}
			}
		})
	}
}

// memAlloc renders a running job's hosts as host*slots:mem, in allocation
// order, or "PEND".
func memAlloc(c *cluster.Cluster, j *framework.Job) string {
	if j.State != framework.Running {
		return "PEND"
	}
	var parts []string
	for _, ha := range j.Alloc.Hosts {
		mem := 0.0
		for _, r := range ha.Res {
			mem += r.Amount
		}
		parts = append(parts, fmt.Sprintf("%s*%d:%g", c.Hosts[ha.Host].Name, ha.Slots, mem))
	}
	return strings.Join(parts, " ")
}
