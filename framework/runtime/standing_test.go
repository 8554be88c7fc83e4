package runtime_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"pgregory.net/rapid"

	"github.com/xce-sched/xce/cluster"
	"github.com/xce-sched/xce/framework"
	"github.com/xce-sched/xce/framework/plugins"
	"github.com/xce-sched/xce/framework/runtime"
	ct "github.com/xce-sched/xce/internal/clustertest"
)

// TestPropertyStandsConservative: a conservative queue whose kept
// reservations stand without being re-planned (standing.go) decides
// exactly as one that re-plans every job in every cycle (the oracle):
// the same starts, reasons and reservations (start and hosts), through
// early ends, overruns, cancellations, requeues, kills and hosts closing
// and opening, on hosts with or without memory, alike single-slot hosts
// as one class or not, and a queue of another policy ahead. Half the
// time the queue plans only its first few jobs (max_job_test): then no
// more of its jobs hold reservations, and the running jobs and every
// reservation still fit together at every future second. The pending jobs
// counted by reason (those a cycle considered, set aside or left out as
// standing) are the oracle's.
func TestPropertyStandsConservative(t *testing.T) {
	checkRounds(t, propertyRounds/2, func(t *rapid.T) {
		maxJobTest := rapid.SampledFrom([]int{0, 0, 0, 1, 2, 3, 5}).Draw(t, "max_job_test")
		spec := ct.Spec{Queues: []cluster.Queue{{Name: "normal", Policy: cluster.PolicyConservative, MaxJobTest: maxJobTest}}}
		if rapid.Bool().Draw(t, "two queues") {
			all := []cluster.Policy{cluster.PolicyFCFS, cluster.PolicyFirstFit, cluster.PolicyEASY, cluster.PolicyConservative}
			spec.Queues = append(spec.Queues, cluster.Queue{Name: "high", Priority: 10, Policy: rapid.SampledFrom(all).Draw(t, "high policy")})
		}
		withMem := rapid.Bool().Draw(t, "mem")
		alike := rapid.Bool().Draw(t, "alike single-slot hosts")
		hosts := rapid.IntRange(1, 5).Draw(t, "hosts")
		for i := range hosts {
			h := ct.Host{Name: fmt.Sprintf("h%d", i), Slots: 1, Mem: -1}
			if !alike {
				h.Slots = rapid.IntRange(1, 3).Draw(t, "slots")
			}
			if withMem {
				h.Mem = float64(rapid.IntRange(1, 4).Draw(t, "host mem"))
			}
			spec.Hosts = append(spec.Hosts, h)
		}
		shapes := []string{"", "", "", "span[hosts=1]"}
		if withMem {
			shapes = append(shapes, "rusage[mem=1]", "rusage[mem=2]")
		}
		for i := range rapid.IntRange(1, 30).Draw(t, "jobs") {
			job := ct.Job{ID: cluster.JobID(i + 1), Min: rapid.IntRange(1, 6).Draw(t, "tasks"),
				Submit: rapid.Int64Range(0, 20).Draw(t, "submit"), Runtime: rapid.Int64Range(1, 8).Draw(t, "runtime"),
				Queue:  spec.Queues[rapid.IntRange(0, len(spec.Queues)-1).Draw(t, "queue")].Name,
				ResReq: rapid.SampledFrom(shapes).Draw(t, "resreq")}
			// Mostly early ends (compression), some exact, some overruns.
			job.Estimate = max(1, job.Runtime+rapid.Int64Range(-2, 6).Draw(t, "estimate off"))
			spec.Jobs = append(spec.Jobs, job)
		}
		slices.SortStableFunc(spec.Jobs, func(a, b ct.Job) int { return int(a.Submit - b.Submit) })
		classes := rapid.Bool().Draw(t, "classes")
		var ss [2]*runtime.Scheduler
		for i := range ss {
			c := ct.Build(spec)
			if classes {
				var err error
				if c, _, err = c.HostClasses(); err != nil {
					t.Fatal(err)
				}
			}
			s, err := runtime.New(c, runtime.Options{Registry: plugins.NewInTreeRegistry()})
			if err != nil {
				t.Fatal(err)
			}
			ss[i] = s
		}
		runtime.ConsiderEveryJob(ss[1])
		reservation := func(j *framework.Job) string {
			if j.Reserved == nil {
				return "none"
			}
			return fmt.Sprint(j.Reserved.Start, "-", j.Reserved.End, " ", j.Reserved.Alloc.Hosts)
		}
		nhosts := len(ss[0].Cluster.Hosts)
		for now := int64(0); now <= 80; now++ {
			op := rapid.IntRange(0, 15).Draw(t, "op")
			pick := rapid.IntRange(0, len(spec.Jobs)-1).Draw(t, "job")
			host := cluster.HostID(rapid.IntRange(0, nhosts-1).Draw(t, "host"))
			var tally [2][256]int
			for k, s := range ss {
				stepOp(t, s, now, op, s.Jobs[pick], host) // op 3 kills: an early end
				considered, err := s.Cycle(context.Background(), now)
				if err != nil {
					t.Fatal(err)
				}
				tally[k] = pendingByReason(t, s, now, considered)
			}
			if tally[0] != tally[1] {
				t.Fatalf("at %d the pending jobs by reason differ from the oracle's: %v vs %v", now, tally[0], tally[1])
			}
			if err := bruteCheck(ss[0].Cluster, ss[0], now); err != nil && !classes {
				// (bruteCheck counts a class's memory as one member's.)
				t.Fatalf("after the cycle at %d: %v", now, err)
			}
			if held := countReserved(ss[0], 0); maxJobTest > 0 && held > maxJobTest {
				t.Fatalf("at %d: %d jobs of the queue hold reservations, max_job_test %d", now, held, maxJobTest)
			}
			for i, a := range ss[0].Jobs {
				b := ss[1].Jobs[i]
				if a.State != b.State || a.Start != b.Start || a.Reasons.Main != b.Reasons.Main || a.Reasons.Stuck != b.Reasons.Stuck ||
					reservation(a) != reservation(b) {
					t.Fatalf("at %d job %d: %v start %d %v stuck %v reserved %s; re-planning every job: %v start %d %v stuck %v reserved %s",
						now, a.Spec.ID, a.State, a.Start, a.Reasons.Main, a.Reasons.Stuck, reservation(a),
						b.State, b.Start, b.Reasons.Main, b.Reasons.Stuck, reservation(b))
				}
			}
		}
	})
}

// countReserved counts the pending jobs of queue q that hold reservations.
func countReserved(s *runtime.Scheduler, q cluster.QueueID) int {
	n := 0
	for _, j := range s.Jobs {
		if j.State == framework.Pending && j.Spec.Queue == q && j.Reserved != nil {
			n++
		}
	}
	return n
}
