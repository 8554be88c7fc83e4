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

// TestBehindHead (issue 15), worked by hand: two single-slot hosts under
// strict FCFS. Job 1 (2 tasks, 10 s) starts at 0; job 2 (2 tasks) blocks
// the queue. Jobs 3 and 4 (1 task each) arrive at 1 and 2 and are held:
// each cycle considers only the head and the newcomer, and Behind counts
// the jobs held before (none at 1, job 3 at 2). At 10 job 1 ends: job 2
// starts, job 3 is tried and blocks (no slot left), and job 4, behind it,
// is not considered (Behind: 1 Priority). At 11 job 5 arrives: held.
func TestBehindHead(t *testing.T) {
	spec := ct.Spec{Hosts: []ct.Host{{Name: "h1", Slots: 1, Mem: -1}, {Name: "h2", Slots: 1, Mem: -1}},
		Queues: []cluster.Queue{{Name: "normal", Policy: cluster.PolicyFCFS}},
		Jobs: []ct.Job{{ID: 1, Min: 2, Runtime: 10}, {ID: 2, Min: 2, Runtime: 10}, {ID: 3, Min: 1, Submit: 1, Runtime: 5},
			{ID: 4, Min: 1, Submit: 2, Runtime: 5}, {ID: 5, Min: 1, Submit: 11, Runtime: 5}}}
	s, err := runtime.New(ct.Build(spec), runtime.Options{Registry: plugins.NewInTreeRegistry()})
	if err != nil {
		t.Fatal(err)
	}
	j := s.Jobs
	ids := func(js []*framework.Job) (out []cluster.JobID) {
		for _, x := range js {
			out = append(out, x.Spec.ID)
		}
		return out
	}
	for _, step := range []struct {
		now        int64
		finish     int // index of a job that ends before the cycle, -1 none
		considered []cluster.JobID
		behind     []runtime.ReasonCount
		running    []int // indexes of the running jobs after the cycle
	}{
		{0, -1, []cluster.JobID{1, 2}, nil, []int{0}},
		{1, -1, []cluster.JobID{2, 3}, nil, []int{0}},
		{2, -1, []cluster.JobID{2, 4}, []runtime.ReasonCount{{Reason: framework.Priority, Jobs: 1}}, []int{0}},
		{10, 0, []cluster.JobID{2, 3}, []runtime.ReasonCount{{Reason: framework.Priority, Jobs: 1}}, []int{1}},
		{11, -1, []cluster.JobID{3, 5}, []runtime.ReasonCount{{Reason: framework.Priority, Jobs: 1}}, []int{1}},
	} {
		if step.finish >= 0 {
			s.Finish(j[step.finish], step.now)
		}
		got, err := s.Cycle(context.Background(), step.now)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(ids(got), step.considered) {
			t.Errorf("cycle at %d considered %v, want %v", step.now, ids(got), step.considered)
		}
		if b := s.Standing(); !slices.Equal(b, step.behind) {
			t.Errorf("cycle at %d: Behind() = %v, want %v", step.now, b, step.behind)
		}
		for i, x := range j {
			if want := slices.Contains(step.running, i); (x.State == framework.Running) != want {
				t.Errorf("cycle at %d: job %d %v, running %v", step.now, x.Spec.ID, x.State, want)
			}
		}
	}
	want := map[cluster.JobID]framework.Reason{3: framework.NotEnoughSlots, 4: framework.Priority, 5: framework.Priority}
	for id, r := range want {
		if got := j[id-1].Reasons.Main; got != r {
			t.Errorf("job %d pends with %v, want %v", id, got, r)
		}
	}
}

// TestPropertyStanding (issue 15): over random traces under strict FCFS,
// firstfit or EASY, on one queue or two (of different priorities, jobs
// in either), with tasks that may exceed the cluster, span[hosts=1], a
// select[] that may turn true as hosts fill (slots < 2), jobs killed
// while pending, running jobs requeued, and hosts closed and opened, a
// scheduler that leaves out of its cycles the jobs whose decisions stand
// (behind a blocked head, or nothing released) decides exactly as one
// that considers every pending job in every cycle (the oracle,
// runtime.ConsiderEveryJob): every job's state, start, main reason and
// reservation after every cycle, and the pending jobs counted by main
// reason (those considered, set aside and standing), are the same.
func TestPropertyStanding(t *testing.T) {
	checkRounds(t, propertyRounds/2, func(t *rapid.T) {
		policy := rapid.SampledFrom([]cluster.Policy{cluster.PolicyFCFS, cluster.PolicyFirstFit, cluster.PolicyEASY}).Draw(t, "policy")
		spec := ct.Spec{Queues: []cluster.Queue{{Name: "normal", Policy: policy}}}
		if rapid.Bool().Draw(t, "two queues") {
			spec.Queues = append(spec.Queues, cluster.Queue{Name: "high", Priority: 10, Policy: policy})
		}
		hosts := rapid.IntRange(1, 3).Draw(t, "hosts")
		for i := range hosts {
			spec.Hosts = append(spec.Hosts, ct.Host{Name: fmt.Sprintf("h%d", i), Slots: rapid.IntRange(1, 3).Draw(t, "slots"), Mem: -1})
		}
		for i := range rapid.IntRange(1, 30).Draw(t, "jobs") {
			job := ct.Job{ID: cluster.JobID(i + 1), Min: rapid.IntRange(1, 7).Draw(t, "tasks"),
				Submit: rapid.Int64Range(0, 20).Draw(t, "submit"), Runtime: rapid.Int64Range(1, 6).Draw(t, "runtime"),
				Queue: spec.Queues[rapid.IntRange(0, len(spec.Queues)-1).Draw(t, "queue")].Name}
			job.Estimate = job.Runtime + rapid.Int64Range(0, 3).Draw(t, "overestimate")
			switch rapid.IntRange(0, 5).Draw(t, "resreq") {
			case 0:
				job.ResReq = "span[hosts=1]"
			case 1:
				job.ResReq = "select[slots < 2]"
			}
			spec.Jobs = append(spec.Jobs, job)
		}
		slices.SortStableFunc(spec.Jobs, func(a, b ct.Job) int { return int(a.Submit - b.Submit) })
		var ss [2]*runtime.Scheduler
		for i := range ss {
			s, err := runtime.New(ct.Build(spec), runtime.Options{Registry: plugins.NewInTreeRegistry(), SkipTooLarge: true})
			if err != nil {
				t.Fatal(err)
			}
			ss[i] = s
		}
		runtime.ConsiderEveryJob(ss[1])
		for now := int64(0); now <= 60; now++ {
			op := rapid.IntRange(0, 9).Draw(t, "op")
			pick := rapid.IntRange(0, len(spec.Jobs)-1).Draw(t, "job")
			host := cluster.HostID(rapid.IntRange(0, hosts-1).Draw(t, "host"))
			var tally [2][256]int
			for k, s := range ss {
				stepOp(t, s, now, op, s.Jobs[pick], host)
				considered, err := s.Cycle(context.Background(), now)
				if err != nil {
					t.Fatal(err)
				}
				tally[k] = pendingByReason(t, s, now, considered)
			}
			if k := len(ss[1].Standing()); k != 0 {
				t.Fatalf("the oracle left %d reasons' jobs out", k)
			}
			for i, a := range ss[0].Jobs {
				b := ss[1].Jobs[i]
				if a.State != b.State || a.Start != b.Start || a.Reasons.Main != b.Reasons.Main || a.Reasons.Stuck != b.Reasons.Stuck ||
					reservedAt(a) != reservedAt(b) {
					t.Fatalf("at %d job %d: %v start %d %v stuck %v reserved %d; considering every job: %v start %d %v stuck %v reserved %d",
						now, a.Spec.ID, a.State, a.Start, a.Reasons.Main, a.Reasons.Stuck, reservedAt(a),
						b.State, b.Start, b.Reasons.Main, b.Reasons.Stuck, reservedAt(b))
				}
			}
			if tally[0] != tally[1] {
				t.Fatalf("at %d the pending jobs by reason differ from the oracle's: %v vs %v", now, tally[0], tally[1])
			}
		}
	})
}

// reservedAt returns the start of j's reservation, -1 when it has none.
func reservedAt(j *framework.Job) int64 {
	if j.Reserved == nil {
		return -1
	}
	return j.Reserved.Start
}

// stepOp finishes s's running jobs whose runtime is over by now, then
// applies op to job j: 0 cancels it (pending, submitted by now), 1
// requeues it (running), 2 closes host, or opens it when closed, 3 kills
// it (running: an early end); any other op does nothing. j may be an
// empty job (no Spec). It reports whether it requeued j.
func stepOp(t *rapid.T, s *runtime.Scheduler, now int64, op int, j *framework.Job, host cluster.HostID) (requeued bool) {
	for _, r := range s.Jobs {
		if r.State == framework.Running && r.Start+r.Spec.Runtime <= now {
			s.Finish(r, now)
		}
	}
	switch {
	case op == 0 && j.Spec != nil && j.State == framework.Pending && j.Spec.Submit <= now:
		if err := s.Cancel(j, now); err != nil {
			t.Fatal(err)
		}
	case op == 1 && j.State == framework.Running:
		s.Requeue(j, now)
		return true
	case op == 2:
		st := cluster.HostClosed
		if s.Cluster.Hosts[host].Status == cluster.HostClosed {
			st = cluster.HostOK
		}
		s.SetHostStatus(host, st)
	case op == 3 && j.State == framework.Running:
		s.FinishWith(j, now, 9, true)
	}
	return false
}

// pendingByReason counts s's pending jobs by main reason after the cycle
// at now that returned considered: those it considered, those set aside
// (Aside, which AsideByReason must count) and those it left out as
// standing (Standing).
func pendingByReason(t *rapid.T, s *runtime.Scheduler, now int64, considered []*framework.Job) [256]int {
	var tally, aside [256]int
	for _, j := range considered {
		if j.State == framework.Pending {
			tally[j.Reasons.Main]++
		}
	}
	for _, j := range s.Aside() {
		tally[j.Reasons.Main]++
		aside[j.Reasons.Main]++
	}
	for _, b := range s.AsideByReason() {
		aside[b.Reason] -= b.Jobs
	}
	if aside != [256]int{} {
		t.Fatalf("at %d AsideByReason %v does not count Aside", now, s.AsideByReason())
	}
	for _, b := range s.Standing() {
		tally[b.Reason] += b.Jobs
	}
	return tally
}
