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

// TestPropertyStandingLive (issue 15) is TestPropertyStanding as the live
// server and the per-event simulator drive a scheduler: jobs submitted
// between cycles (Submit, some with a submit time before the last cycle),
// cycles admitting a few newcomers at a time (CycleAdmitting), several
// cycles at the same time, jobs ended before or after their estimated end
// and killed while running (FinishWith), and a cluster with what turns the
// skipping off or bears on it: two queues of different policies
// (conservative among them), a closed queue, dependencies and arrays with
// a cap, exclusive jobs, mem reserved on hosts that have it, a select[]
// that may turn true as hosts fill, and a limit on a user's slots. The
// scheduler that leaves jobs out decides exactly as the oracle
// (runtime.ConsiderEveryJob) after every cycle: every job's state, start,
// main reason and detail, stuck flag and reservation, the pending jobs by
// main reason, NextWake and Replanned. And, as the live core records a
// cycle (internal/live: a considered pending job with Unchanged set is
// not recorded, nor one whose reason and reservation are the recorded
// ones), what it would have recorded for each pending job is what the job
// holds: a job the skipping left out never changes unseen (it found the
// two bugs, which the oracle shared, of TestUnchangedHeldBehindAdmitted
// and TestRequeueOnPlanConservative).
func TestPropertyStandingLive(t *testing.T) {
	checkRounds(t, propertyRounds/2, func(t *rapid.T) {
		policies := []cluster.Policy{cluster.PolicyFCFS, cluster.PolicyFirstFit, cluster.PolicyEASY, cluster.PolicyConservative}
		skipping := []cluster.Policy{cluster.PolicyFCFS, cluster.PolicyFirstFit, cluster.PolicyEASY}
		// Without exclusive queues (and limits) no preparer takes part, and
		// plain jobs too large to start may be left out (SkipTooLarge).
		exclusive := rapid.Bool().Draw(t, "exclusive queues")
		spec := ct.Spec{Queues: []cluster.Queue{{Name: "normal", Policy: rapid.SampledFrom(skipping).Draw(t, "policy"), Exclusive: exclusive}}}
		if rapid.Bool().Draw(t, "two queues") {
			spec.Queues = append(spec.Queues, cluster.Queue{Name: "high", Priority: rapid.SampledFrom([]int{0, 10}).Draw(t, "priority"),
				Policy: rapid.SampledFrom(policies).Draw(t, "high policy"), Exclusive: exclusive})
		}
		if rapid.IntRange(0, 5).Draw(t, "closed queue") == 0 {
			spec.Queues = append(spec.Queues, cluster.Queue{Name: "closed", Policy: cluster.PolicyFirstFit, Closed: true})
		}
		withMem := rapid.Bool().Draw(t, "mem")
		hosts := rapid.IntRange(1, 3).Draw(t, "hosts")
		for i := range hosts {
			h := ct.Host{Name: fmt.Sprintf("h%d", i), Slots: rapid.IntRange(1, 3).Draw(t, "slots"), Mem: -1}
			if withMem {
				h.Mem = float64(rapid.IntRange(1, 4).Draw(t, "host mem"))
			}
			spec.Hosts = append(spec.Hosts, h)
		}
		if rapid.IntRange(0, 3).Draw(t, "limit") == 0 {
			spec.Limits = []cluster.Limit{{Name: "peruser", Users: cluster.Consumers{All: true, PerConsumer: true},
				Slots: rapid.IntRange(1, 4).Draw(t, "limit slots"), Jobs: -1}}
		}
		shapes := []string{"", "", "", "span[hosts=1]", "select[slots < 2]"}
		if withMem {
			shapes = append(shapes, "rusage[mem=1]", "rusage[mem=2]")
		}
		gates := rapid.IntRange(0, 3).Draw(t, "gates") == 0
		n := rapid.IntRange(1, 25).Draw(t, "jobs")
		initial := rapid.IntRange(0, n).Draw(t, "initial jobs")
		for i := 0; i < n; {
			job := ct.Job{ID: cluster.JobID(i + 1), Min: rapid.IntRange(1, 6).Draw(t, "tasks"),
				Submit: rapid.Int64Range(0, 15).Draw(t, "submit"), Runtime: rapid.Int64Range(1, 8).Draw(t, "runtime"),
				Queue:  spec.Queues[rapid.IntRange(0, len(spec.Queues)-1).Draw(t, "queue")].Name,
				ResReq: rapid.SampledFrom(shapes).Draw(t, "resreq"), User: rapid.SampledFrom([]string{"alice", "bob"}).Draw(t, "user"),
				Exclusive: exclusive && rapid.IntRange(0, 5).Draw(t, "exclusive") == 0, ExitCode: rapid.SampledFrom([]int{0, 0, 0, 1}).Draw(t, "exit code")}
			job.Estimate = max(1, job.Runtime+rapid.Int64Range(-3, 3).Draw(t, "estimate off"))
			if gates && i > 0 && rapid.IntRange(0, 2).Draw(t, "depends") == 0 {
				job.Depend = fmt.Sprintf(rapid.SampledFrom([]string{"done(%d)", "ended(%d)", "started(%d)", "exit(%d)"}).Draw(t, "cond"),
					rapid.IntRange(1, i).Draw(t, "ref"))
			}
			elems := 1
			if gates && rapid.IntRange(0, 3).Draw(t, "array") == 0 {
				elems = min(rapid.IntRange(2, 4).Draw(t, "elements"), n-i)
			}
			cap := rapid.IntRange(0, 2).Draw(t, "cap")
			for e := range elems {
				j := job
				j.ID = cluster.JobID(i + e + 1)
				if elems > 1 {
					j.Array, j.Index, j.ArrayLimit = job.ID, int64(e+1), cap
				}
				spec.Jobs = append(spec.Jobs, j)
			}
			i += elems
		}
		// The initial jobs are the scenario's, in submit order; the others
		// are submitted between cycles, in ID order.
		slices.SortStableFunc(spec.Jobs[:initial], func(a, b ct.Job) int { return int(a.Submit - b.Submit) })
		slack := rapid.Int64Range(0, 1).Draw(t, "end slack")
		skipTooLarge := rapid.Bool().Draw(t, "skip too large") // the simulator's setting, or the live server's
		var ss [2]*runtime.Scheduler
		var later [2][]*cluster.Job
		for i := range ss {
			c := ct.Build(spec)
			for k := initial; k < len(c.Jobs); k++ {
				j := c.Jobs[k]
				later[i] = append(later[i], &j)
			}
			c.Jobs = c.Jobs[:initial]
			// The oracle considers every job in full: it never skips, and
			// its reasons are what the live server would say.
			s, err := runtime.New(c, runtime.Options{Registry: plugins.NewInTreeRegistry(), EndSlack: slack, SkipTooLarge: skipTooLarge && i == 0})
			if err != nil {
				t.Fatal(err)
			}
			ss[i] = s
		}
		runtime.ConsiderEveryJob(ss[1])
		type record struct {
			reason   framework.Reason
			detail   string
			reserved string
		}
		var recorded [2]map[cluster.JobID]record
		for k := range recorded {
			recorded[k] = map[cluster.JobID]record{}
		}
		reservation := func(j *framework.Job) string {
			if j.Reserved == nil {
				return ""
			}
			return fmt.Sprint(j.Reserved.Start, j.Reserved.Alloc.Hosts)
		}
		submitted := 0
		now := int64(0)
		for step := 0; step < 80; step++ {
			now += rapid.SampledFrom([]int64{0, 0, 1, 1, 1, 2, 3}).Draw(t, "advance")
			op := rapid.IntRange(0, 12).Draw(t, "op")
			pick := rapid.IntRange(0, 1000).Draw(t, "job")
			host := cluster.HostID(rapid.IntRange(0, hosts-1).Draw(t, "host"))
			admit := rapid.IntRange(-1, 2).Draw(t, "admit")
			submits := 0
			if submitted < len(later[0]) && rapid.IntRange(0, 2).Draw(t, "submits") == 0 {
				submits = min(rapid.IntRange(1, 3).Draw(t, "submit n"), len(later[0])-submitted)
			}
			at := make([]int64, submits)
			for i := range at {
				at[i] = max(0, now+rapid.Int64Range(-4, 2).Draw(t, "submit at"))
			}
			var tally [2][256]int
			for k, s := range ss {
				j := &framework.Job{}
				if len(s.Jobs) > 0 {
					j = s.Jobs[pick%len(s.Jobs)]
				}
				if stepOp(t, s, now, op, j, host) {
					delete(recorded[k], j.Spec.ID)
				}
				for i := range submits {
					spec := *later[k][submitted+i]
					spec.Submit = at[i]
					if _, err := s.Submit(&spec); err != nil {
						t.Fatal(err)
					}
				}
				var considered []*framework.Job
				var err error
				if admit < 0 {
					considered, err = s.Cycle(context.Background(), now)
				} else {
					considered, err = s.CycleAdmitting(context.Background(), now, admit)
				}
				if err != nil {
					t.Fatal(err)
				}
				if err := runtime.CheckRunningByEnd(s, now); err != nil {
					t.Fatalf("at %d: %v", now, err)
				}
				for _, j := range considered {
					if j.State != framework.Pending {
						continue
					}
					tally[k][j.Reasons.Main]++
					if j.Unchanged {
						continue
					}
					recorded[k][j.Spec.ID] = record{j.Reasons.Main, s.MainDetail(&j.Reasons), reservation(j)}
				}
				var aside [256]int
				for _, j := range s.Aside() {
					tally[k][j.Reasons.Main]++
					aside[j.Reasons.Main]++
				}
				for _, b := range s.AsideByReason() {
					aside[b.Reason] -= b.Jobs
				}
				if aside != [256]int{} {
					t.Fatalf("at %d (scheduler %d) AsideByReason %v does not count Aside", now, k, s.AsideByReason())
				}
				for _, b := range s.Standing() {
					tally[k][b.Reason] += b.Jobs
				}
				for _, j := range s.Jobs {
					if j.State != framework.Pending || j.Cycle == 0 {
						continue
					}
					if r, want := recorded[k][j.Spec.ID], (record{j.Reasons.Main, s.MainDetail(&j.Reasons), reservation(j)}); r != want {
						t.Fatalf("at %d (scheduler %d) job %d pends with %v %q reserved %q, recorded %v %q reserved %q",
							now, k, j.Spec.ID, want.reason, want.detail, want.reserved, r.reason, r.detail, r.reserved)
					}
				}
			}
			submitted += submits
			if k := len(ss[1].Standing()); k != 0 {
				t.Fatalf("the oracle left %d reasons' jobs out", k)
			}
			for i, a := range ss[0].Jobs {
				b := ss[1].Jobs[i]
				// A job left out as too large keeps its host counts (the
				// main detail) from the cycle that last considered it.
				if a.State != b.State || a.Start != b.Start || a.Reasons.Main != b.Reasons.Main || a.Reasons.Stuck != b.Reasons.Stuck ||
					reservation(a) != reservation(b) || !skipTooLarge && ss[0].MainDetail(&a.Reasons) != ss[1].MainDetail(&b.Reasons) {
					t.Fatalf("at %d job %d: %v start %d %v stuck %v reserved %q; considering every job: %v start %d %v stuck %v reserved %q",
						now, a.Spec.ID, a.State, a.Start, a.Reasons.Main, a.Reasons.Stuck, reservation(a),
						b.State, b.Start, b.Reasons.Main, b.Reasons.Stuck, reservation(b))
				}
			}
			if tally[0] != tally[1] {
				t.Fatalf("at %d the pending jobs by reason differ from the oracle's", now)
			}
			if a, b := ss[0].NextWake(), ss[1].NextWake(); a != b {
				t.Fatalf("at %d NextWake %d, the oracle's %d", now, a, b)
			}
			if a, b := ss[0].Replanned(), ss[1].Replanned(); a != b {
				t.Fatalf("at %d Replanned %v, the oracle's %v", now, a, b)
			}
		}
	})
}
