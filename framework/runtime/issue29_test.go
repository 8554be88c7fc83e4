package runtime_test

import (
	"testing"

	"github.com/xce-sched/xce/cluster"
	ct "github.com/xce-sched/xce/internal/clustertest"
)

var allPolicies = []cluster.Policy{cluster.PolicyFCFS, cluster.PolicyFirstFit, cluster.PolicyEASY, cluster.PolicyConservative}

// TestCompoundFitsTwoHosts, issue 29 item 5, worked by hand: h1 (1 slot,
// no mem) and h3 (1 slot, mem 8000); job 2 is "1*{} + {rusage[mem=1000]}"
// of 2 tasks. Term 2 fits only h3, term 1 on h1 (or h3): h1 for term 1,
// h3 for term 2 is a plan, so the request is not BadRequest, and with
// nothing running every policy starts it there. Job 3, the same request
// waiting on done(1), where job 1 (5 tasks on 2 slots) can never run,
// pends with Dependency under every policy: a gate holds it whatever the
// analysis says of it.
func TestCompoundFitsTwoHosts(t *testing.T) {
	for _, policy := range allPolicies {
		t.Run(string(policy), func(t *testing.T) {
			spec := ct.Spec{Hosts: []ct.Host{{Name: "h1", Slots: 1, Mem: -1}, {Name: "h3", Slots: 1, Mem: 8000}}, Jobs: []ct.Job{
				{ID: 1, Min: 5, Runtime: 10, Estimate: 10},
				{ID: 2, Min: 2, ResReq: "1*{} + {rusage[mem=1000]}", Runtime: 10, Estimate: 10},
				{ID: 3, Min: 2, ResReq: "1*{} + {rusage[mem=1000]}", Runtime: 10, Estimate: 10, Depend: "done(1)"},
			}}
			c, s := runPolicy(t, spec, policy, 0)
			for i, want := range []string{"PEND BadRequest", "RUN@0 h1*1 h3*1", "PEND Dependency"} {
				if got := state(c, s.Jobs[i]); got != want {
					t.Errorf("job %d: %s (%s), want %s", i+1, got, s.Jobs[i].Reasons.Note, want)
				}
			}
			if n := s.Jobs[2].Reasons.Note; n != "done(1)" {
				t.Errorf("job 3's unmet condition %q, want done(1)", n)
			}
		})
	}
}

// TestExclusiveHostsSized, issue 29 item 6, worked by hand in an exclusive
// queue, under every policy:
//   - a (6 slots) runs a 1-task exclusive job; a normal 6-task job fits
//     idle c (4) and b (2): largest first, c*4 b*2;
//   - a (2), b (4) and c (3) with a 1-task job on b: an exclusive 4-task
//     job fits idle c (3) and a (1 of its 2): c*3 a*1.
func TestExclusiveHostsSized(t *testing.T) {
	queues := func(p cluster.Policy) []cluster.Queue {
		return []cluster.Queue{{Name: "normal", Policy: p, Picker: "priority", Exclusive: true}}
	}
	for _, policy := range allPolicies {
		t.Run(string(policy), func(t *testing.T) {
			spec := ct.Spec{Hosts: []ct.Host{{Name: "a", Slots: 6, Mem: -1}, {Name: "b", Slots: 2, Mem: -1}, {Name: "c", Slots: 4, Mem: -1}}, Jobs: []ct.Job{
				{ID: 1, Min: 1, Runtime: 100, Estimate: 100, Exclusive: true},
				{ID: 2, Min: 6, Runtime: 10, Estimate: 10},
			}, Queues: queues(policy)}
			c, s := runQueues(t, spec, 0)
			for i, want := range []string{"RUN@0 a*1", "RUN@0 c*4 b*2"} {
				if got := state(c, s.Jobs[i]); got != want {
					t.Errorf("first cluster, job %d: %s, want %s", i+1, got, want)
				}
			}
			spec = ct.Spec{Hosts: []ct.Host{{Name: "a", Slots: 2, Mem: -1}, {Name: "b", Slots: 4, Mem: -1}, {Name: "c", Slots: 3, Mem: -1}}, Jobs: []ct.Job{
				{ID: 1, Min: 1, Runtime: 100, Estimate: 100, Running: map[string]int{"b": 1}},
				{ID: 2, Min: 4, Runtime: 10, Estimate: 10, Exclusive: true},
			}, Queues: queues(policy)}
			c, s = runQueues(t, spec, 0)
			for i, want := range []string{"RUN@0 b*1", "RUN@0 c*3 a*1"} {
				if got := state(c, s.Jobs[i]); got != want {
					t.Errorf("second cluster, job %d: %s, want %s", i+1, got, want)
				}
			}
		})
	}
}

// TestDependencyPrecedence, issue 29 item 7: a job waiting on done(2),
// job 2 pending (2 tasks on host a, where job 1 holds a slot and 800 of
// its 1000 MB), pends with Dependency (rule 2 of docs/pending-reasons.md)
// whatever else would stop it; without the dependency, each case's job
// pends with the reason named, worked by hand. Host b (type B, 2 slots,
// 8000 MB) is closed, so each case's job could not run even with the open
// hosts idle (stuck), but could with every host open (not BadRequest).
func TestDependencyPrecedence(t *testing.T) {
	hosts := []ct.Host{{Name: "a", Slots: 2, Mem: 1000, Type: "A"}, {Name: "b", Slots: 2, Mem: 8000, Type: "B", Model: "m", Status: cluster.HostClosed}}
	tests := []struct {
		name   string
		policy cluster.Policy
		job    ct.Job
		closed bool // the queue is closed
		limits []cluster.Limit
		want   string // without the dependency
	}{
		// select[] matches closed b only.
		{name: "NoHostMatch", policy: cluster.PolicyFirstFit, job: ct.Job{Min: 1, ResReq: "select[type==B]"}, want: "NoHostMatch"},
		// Under strict FCFS a stuck job holds nothing back; one that could
		// run would be Priority behind job 2 (a's second slot is free).
		{name: "Priority", policy: cluster.PolicyFCFS, job: ct.Job{Min: 1}, want: "Priority"},
		// Only b defines model: a is ruled out by same[] alone.
		{name: "SameUnsatisfiable", policy: cluster.PolicyFirstFit, job: ct.Job{Min: 1, ResReq: "same[model]"}, want: "SameUnsatisfiable"},
		// a's free slot has 200 MB of the 2000 asked; b is closed.
		{name: "NotEnoughResource", policy: cluster.PolicyFirstFit, job: ct.Job{Min: 1, ResReq: "rusage[mem=2000]"}, want: "NotEnoughResource"},
		// a runs job 1; b, which with a would take 3 tasks, is closed.
		{name: "ExclusiveHost", policy: cluster.PolicyFirstFit, job: ct.Job{Min: 3, Exclusive: true}, want: "ExclusiveHost"},
		{name: "QueueClosed", policy: cluster.PolicyFirstFit, job: ct.Job{Min: 1, ResReq: "select[type==B]"}, closed: true, want: "QueueClosed"},
		// bob may hold 1 slot: 2 tasks never fit under the limit's maximum.
		{name: "LimitReached", policy: cluster.PolicyFirstFit, job: ct.Job{Min: 2, User: "bob"},
			limits: []cluster.Limit{{Name: "bob1", Users: cluster.Consumers{Names: []string{"bob"}}, Slots: 1, Jobs: -1}}, want: "LimitReached"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, dep := range []string{"", "done(2)"} {
				j := tc.job
				j.ID, j.Runtime, j.Estimate, j.Depend = 3, 10, 10, dep
				spec := ct.Spec{Hosts: hosts, Limits: tc.limits, Jobs: []ct.Job{
					{ID: 1, Min: 1, ResReq: "rusage[mem=800]", Runtime: 100, Estimate: 100, Running: map[string]int{"a": 1}},
					{ID: 2, Min: 2, Runtime: 10, Estimate: 10},
					j,
				}}
				spec.Queues = []cluster.Queue{{Name: "normal", Policy: tc.policy, Picker: "priority", Exclusive: true, Closed: tc.closed}}
				c, s := runQueues(t, spec, 0)
				want := "PEND " + tc.want
				if dep != "" {
					want = "PEND Dependency"
				}
				if got := state(c, s.Jobs[2]); got != want {
					t.Errorf("depend %q: %s (%s), want %s", dep, got, s.Jobs[2].Reasons.Note, want)
				}
			}
		})
	}
}

// TestRunningCompoundHolds: a scenario's running compound job is charged,
// on each host, the rusage of the terms that host could serve (found
// attacking issue 29's fixes: every host was charged the largest rusage
// of any term, so a snapshot with "1*{} + {rusage[mem=1000]}" running on
// h1, which has no mem, and h3 did not load: "running allocation
// over-commits: host h1: 1000 mem requested, NaN free"). h1: 1 slot, no
// mem; h3: 2 slots, 8000 MB, 1000 of them held by job 1. Job 2 asks 7001
// MB and pends NotEnoughResource; job 3 asks 7000 and starts on h3.
func TestRunningCompoundHolds(t *testing.T) {
	spec := ct.Spec{Hosts: []ct.Host{{Name: "h1", Slots: 1, Mem: -1}, {Name: "h3", Slots: 2, Mem: 8000}}, Jobs: []ct.Job{
		{ID: 1, Min: 2, ResReq: "1*{} + {rusage[mem=1000]}", Runtime: 100, Estimate: 100, Running: map[string]int{"h1": 1, "h3": 1}},
		{ID: 2, Min: 1, ResReq: "rusage[mem=7001]", Runtime: 10, Estimate: 10},
		{ID: 3, Min: 1, ResReq: "rusage[mem=7000]", Runtime: 10, Estimate: 10},
	}}
	c, s := runPolicy(t, spec, cluster.PolicyFirstFit, 0)
	for i, want := range []string{"RUN@0 h1*1 h3*1", "PEND NotEnoughResource", "RUN@0 h3*1"} {
		if got := state(c, s.Jobs[i]); got != want {
			t.Errorf("job %d: %s, want %s", i+1, got, want)
		}
	}
}
