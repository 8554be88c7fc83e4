package runtime_test

import (
	"context"
	"fmt"
	"math"
	"testing"

	"pgregory.net/rapid"

	"github.com/xce-sched/xce/cluster"
	"github.com/xce-sched/xce/framework"
	"github.com/xce-sched/xce/framework/plugins"
	"github.com/xce-sched/xce/framework/runtime"
	ct "github.com/xce-sched/xce/internal/clustertest"
)

var (
	fcfsQueue = []cluster.Queue{{Name: "f", Policy: cluster.PolicyFCFS}}
	// perHostAll is `per_host: all`; perUserAll is `per_user: all`.
	perHostAll = cluster.Consumers{All: true, PerConsumer: true}
	perUserAll = cluster.Consumers{All: true, PerConsumer: true}
)

// TestStaticLimitNever: a job that the maxima of the limits applying to it
// rule out even on the idle cluster pends with LimitReached naming such a
// limit, and holds no fcfs queue back (PendReasons.Stuck). Hosts h1 and h2
// have 4 slots each unless said otherwise; "two" is {per_host: all,
// slots: 2}. Every expected decision is worked out by hand in the case's
// comment; each case failed before the limits' maxima took part in the
// idle-cluster analysis (it pended SpanUnsatisfiable, NotEnoughSlots or
// LimitReached without Stuck, so the fcfs job after it got Priority, or it
// named a limit that is only full now).
func TestStaticLimitNever(t *testing.T) {
	h1h2 := []ct.Host{host("h1", 4, -1, ""), host("h2", 4, -1, "")}
	two := []cluster.Limit{perHostSlots(2)}
	tests := []decisionCase{
		// No host may hold more than 2 of the job's tasks; span[hosts=1]
		// needs 4 on one.
		{"span[hosts=1] over a per-host limit", ct.Spec{Hosts: h1h2, Limits: two,
			Jobs: []ct.Job{{ID: 1, Min: 4, ResReq: "span[hosts=1]"}}},
			[]string{"LimitReached:two"}},
		// The same under fcfs: job 1 can never run, so job 2 takes the
		// first host.
		{"fcfs: span[hosts=1] over a per-host limit", ct.Spec{Hosts: h1h2, Limits: two, Queues: fcfsQueue,
			Jobs: []ct.Job{{ID: 1, Min: 4, ResReq: "span[hosts=1]"}, {ID: 2, Submit: 1, Min: 1}}},
			[]string{"LimitReached:two", "h1*1"}},
		// span[ptile=4] puts 4 tasks on one host; the limit allows 2. Job
		// 2's 2 tasks go to h1 (room 2).
		{"fcfs: ptile over a per-host limit", ct.Spec{Hosts: h1h2, Limits: two, Queues: fcfsQueue,
			Jobs: []ct.Job{{ID: 1, Min: 4, ResReq: "span[ptile=4]"}, {ID: 2, Submit: 1, Min: 2}}},
			[]string{"LimitReached:two", "h1*2"}},
		// The second term needs 3 tasks on one host.
		{"compound term over a per-host limit", ct.Spec{Hosts: h1h2, Limits: two,
			Jobs: []ct.Job{{ID: 1, Min: 4, ResReq: "1*{span[hosts=1]} + 3*{span[hosts=1]}"}}},
			[]string{"LimitReached:two"}},
		// Neither alternative fits under the limit: 4 on one host, or a
		// host of 4 for ptile=4.
		{"every alternative over a per-host limit", ct.Spec{Hosts: h1h2, Limits: two,
			Jobs: []ct.Job{{ID: 1, Min: 4, ResReq: "{span[hosts=1]} || {span[ptile=4]}"}}},
			[]string{"LimitReached:two"}},
		// A per-host mem limit of 2000 MB at 1000 MB per task: 2 tasks a
		// host, though each has 4 slots and 8000 MB.
		{"fcfs: span[hosts=1] over a per-host mem limit", ct.Spec{MemMethod: cluster.PerTask,
			Hosts: []ct.Host{host("h1", 4, 8000, ""), host("h2", 4, 8000, "")}, Queues: fcfsQueue,
			Limits: []cluster.Limit{{Name: "m", Hosts: perHostAll, Slots: -1, Jobs: -1,
				Resources: []cluster.LimitResource{{Name: "mem", Max: 2000}}}},
			Jobs: []ct.Job{{ID: 1, Min: 4, ResReq: "rusage[mem=1000] span[hosts=1]"}, {ID: 2, Submit: 1, Min: 1}}},
			[]string{"LimitReached:m", "h1*1"}},
		// Alice may run no job on any host; bob is free of the limit.
		{"fcfs: a per-host jobs limit of 0 for one user", ct.Spec{Hosts: h1h2, Queues: fcfsQueue,
			Limits: []cluster.Limit{{Name: "none", Users: cluster.Consumers{Names: []string{"alice"}}, Hosts: perHostAll, Slots: -1, Jobs: 0}},
			Jobs:   []ct.Job{{ID: 1, User: "alice", Min: 1}, {ID: 2, User: "bob", Submit: 1, Min: 1}}},
			[]string{"LimitReached:none", "h1*1"}},
		// {hosts: all, slots: 3} counts every host in one instance (the
		// job-level pass leaves limits with hosts aside): the job's 4
		// tasks never fit in 3.
		{"fcfs: a hosts-all limit below the task count", ct.Spec{Hosts: h1h2, Queues: fcfsQueue,
			Limits: []cluster.Limit{{Name: "all3", Hosts: cluster.Consumers{All: true}, Slots: 3, Jobs: -1}},
			Jobs:   []ct.Job{{ID: 1, Min: 4}, {ID: 2, Submit: 1, Min: 1}}},
			[]string{"LimitReached:all3", "h1*1"}},
		// The limit is alice's only: her job never fits; bob's same
		// request runs on h1.
		{"a per-host limit of one user, her job first", ct.Spec{Hosts: h1h2,
			Limits: []cluster.Limit{{Name: "alice2", Users: cluster.Consumers{Names: []string{"alice"}}, Hosts: perHostAll, Slots: 2, Jobs: -1}},
			Jobs:   []ct.Job{{ID: 1, User: "alice", Min: 4, ResReq: "span[hosts=1]"}, {ID: 2, User: "bob", Submit: 1, Min: 4, ResReq: "span[hosts=1]"}}},
			[]string{"LimitReached:alice2", "h1*4"}},
		// The other order, under fcfs: bob's job takes h1; what decides
		// for his request must not decide for hers (she can never run),
		// and carol's job, behind hers, takes h2.
		{"fcfs: a per-host limit of one user, his job first", ct.Spec{Hosts: h1h2, Queues: fcfsQueue,
			Limits: []cluster.Limit{{Name: "alice2", Users: cluster.Consumers{Names: []string{"alice"}}, Hosts: perHostAll, Slots: 2, Jobs: -1}},
			Jobs: []ct.Job{{ID: 1, User: "bob", Min: 4, ResReq: "span[hosts=1]"}, {ID: 2, User: "alice", Submit: 1, Min: 4, ResReq: "span[hosts=1]"},
				{ID: 3, User: "carol", Submit: 2, Min: 1}}},
			[]string{"h1*4", "LimitReached:alice2", "h2*1"}},
		// "busy" (every user's jobs together: 1) is full now with job 10
		// and will not be once it ends; "u" (3 slots per user) never lets
		// the 4-task job run: it is the one named.
		{"the static limit is named, not the full one", ct.Spec{Hosts: h1h2,
			Limits: []cluster.Limit{{Name: "busy", Users: cluster.Consumers{All: true}, Slots: -1, Jobs: 1},
				{Name: "u", Users: perUserAll, Slots: 3, Jobs: -1}},
			Jobs: []ct.Job{{ID: 10, User: "x", Min: 1, Running: map[string]int{"h2": 1}}, {ID: 1, User: "a", Min: 4}}},
			[]string{"", "LimitReached:u"}},
		// The limit was lowered below what job 10 holds (3 on each of h1
		// and h2, the limit's hosts, where it allows 2). Job 1 (3 tasks
		// on one host of type A) can never run: the bound is the limit's
		// maximum, 2. Job 2 runs on h3, the one host outside the limit.
		{"fcfs: a limit lowered below what runs", ct.Spec{
			Hosts: []ct.Host{host("h1", 4, -1, "A"), host("h2", 4, -1, "A"), host("h3", 4, -1, "B")}, Queues: fcfsQueue,
			Limits: []cluster.Limit{{Name: "two", Hosts: cluster.Consumers{Names: []string{"h1", "h2"}, PerConsumer: true}, Slots: 2, Jobs: -1}},
			Jobs: []ct.Job{{ID: 10, Min: 6, Running: map[string]int{"h1": 3, "h2": 3}},
				{ID: 1, Submit: 1, Min: 3, ResReq: "select[type==A] span[hosts=1]"}, {ID: 2, Submit: 2, Min: 1}}},
			[]string{"", "LimitReached:two", "h3*1"}},
		// h2 (8 slots) is closed: without the limit the job could run
		// there once it opens (only Stuck), but the limit allows 4 on any
		// host, so it never can.
		{"a closed host does not save it", ct.Spec{Hosts: []ct.Host{host("h1", 4, -1, ""), {Name: "h2", Slots: 8, Mem: -1, Status: cluster.HostClosed}},
			Limits: []cluster.Limit{{Name: "four", Hosts: perHostAll, Slots: 4, Jobs: -1}},
			Jobs:   []ct.Job{{ID: 1, Min: 6, ResReq: "span[hosts=1]"}}},
			[]string{"LimitReached:four"}},
	}
	runDecisionCases(t, true, tests)
}

// TestStaticLimitGuards: cases near the rule that pass before and after
// it (not regressions): what the limits' maxima allow is not ruled out,
// whatever the limits hold now, and the job-level pass's verdicts stand.
func TestStaticLimitGuards(t *testing.T) {
	h1h2 := []ct.Host{host("h1", 4, -1, ""), host("h2", 4, -1, "")}
	two := []cluster.Limit{perHostSlots(2)}
	tests := []decisionCase{
		// ptile=2 fits the limit: 2 + 2.
		{"ptile under a per-host limit", ct.Spec{Hosts: h1h2, Limits: two,
			Jobs: []ct.Job{{ID: 1, Min: 4, ResReq: "span[ptile=2]"}}},
			[]string{"h1*2 h2*2"}},
		// The first alternative never fits, the second does.
		{"one alternative under a per-host limit", ct.Spec{Hosts: h1h2, Limits: two,
			Jobs: []ct.Job{{ID: 1, Min: 4, ResReq: "{span[hosts=1]} || {span[ptile=2]}"}}},
			[]string{"h1*2 h2*2"}},
		// The job-level pass already rules out a 3-task job under a
		// per-user limit of 2 (with nothing used): job 2 runs.
		{"fcfs: a per-user limit below the task count", ct.Spec{Hosts: h1h2, Queues: fcfsQueue,
			Limits: []cluster.Limit{{Name: "u", Users: perUserAll, Slots: 2, Jobs: -1}},
			Jobs:   []ct.Job{{ID: 1, User: "a", Min: 3}, {ID: 2, User: "b", Submit: 1, Min: 1}}},
			[]string{"LimitReached:u", "h1*1"}},
		// As the lowered-limit case of TestStaticLimitNever, with 2 tasks:
		// the maximum (2) allows them once job 10 ends, so job 1 holds
		// the queue and job 2 waits behind it.
		{"fcfs: a limit lowered below what runs, within its maximum", ct.Spec{
			Hosts: []ct.Host{host("h1", 4, -1, "A"), host("h2", 4, -1, "A"), host("h3", 4, -1, "B")}, Queues: fcfsQueue,
			Limits: []cluster.Limit{{Name: "two", Hosts: cluster.Consumers{Names: []string{"h1", "h2"}, PerConsumer: true}, Slots: 2, Jobs: -1}},
			Jobs: []ct.Job{{ID: 10, Min: 6, Running: map[string]int{"h1": 3, "h2": 3}},
				{ID: 1, Submit: 1, Min: 2, ResReq: "select[type==A] span[hosts=1]"}, {ID: 2, Submit: 2, Min: 1}}},
			[]string{"", "LimitReached:two", "Priority"}},
		// A limit on a list of hosts shares one instance: the idle bound
		// of each host is the list's maximum, 4, so 3 + 3 + 1 looks
		// enough for 5 tasks and the job is not ruled out (the greedy
		// walk still misses 3 + 1 + 1: docs/allocation.md).
		{"a host-list limit is not a static bound in all", ct.Spec{Hosts: []ct.Host{host("a", 3, -1, ""), host("b", 3, -1, ""), host("c", 1, -1, "")},
			Limits: []cluster.Limit{{Name: "ab", Hosts: cluster.Consumers{Names: []string{"a", "b"}}, Slots: 4, Jobs: -1}},
			Jobs:   []ct.Job{{ID: 1, Min: 5}}},
			[]string{"SpanUnsatisfiable"}},
	}
	runDecisionCases(t, true, tests)
}

// TestStaticLimitOracle: on small random clusters under a per-host slot
// limit, a per-host mem limit and a per-user slot limit, with another
// user's job holding some slots (up to a host's all, so a per-host limit
// may be over its maximum, as after it was lowered), a job that pends is
// Stuck exactly when no allocation exists on the idle cluster under the
// limits' maxima (bestSplit with every slot free and each host's room at
// the maxima), and its main reason is then BadRequest when none exists
// without limits either, else LimitReached; a job that some allocation
// fits on the idle cluster is not Stuck.
func TestStaticLimitOracle(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		nh := rapid.IntRange(1, 4).Draw(t, "hosts")
		perHost := rapid.IntRange(0, 4).Draw(t, "perHost")
		perHostMem := rapid.IntRange(1, 8).Draw(t, "perHostMem")
		mem := rapid.IntRange(0, 3).Draw(t, "mem") // the job's per-slot rusage[mem]
		user := rapid.IntRange(1, 12).Draw(t, "user")
		spec := ct.Spec{MemMethod: cluster.PerTask, Limits: []cluster.Limit{perHostSlots(perHost),
			{Name: "m", Hosts: perHostAll, Slots: -1, Jobs: -1,
				Resources: []cluster.LimitResource{{Name: "mem", Max: float64(perHostMem)}}},
			{Name: "u", Users: perUserAll, Slots: user, Jobs: -1}}}
		slots, room, free, unlimited := make([]int, nh), make([]int, nh), make([]int, nh), make([]int, nh)
		for i := range nh {
			name := fmt.Sprintf("h%d", i)
			slots[i] = rapid.IntRange(1, 5).Draw(t, "slots")
			used := rapid.IntRange(0, slots[i]).Draw(t, "used")
			spec.Hosts = append(spec.Hosts, ct.Host{Name: name, Slots: slots[i], Mem: 100})
			if used > 0 {
				spec.Jobs = append(spec.Jobs, ct.Job{ID: cluster.JobID(10 + i), User: "other", Min: used, Running: map[string]int{name: used}})
			}
			room[i], free[i], unlimited[i] = perHost, slots[i], math.MaxInt32
			if mem > 0 {
				room[i] = min(room[i], perHostMem/mem)
			}
		}
		lo := rapid.IntRange(1, 8).Draw(t, "min")
		hi := rapid.IntRange(lo, 8).Draw(t, "max")
		span := rapid.SampledFrom([]string{"", "span[hosts=1]", "span[ptile=2]"}).Draw(t, "span")
		spec.Jobs = append(spec.Jobs, ct.Job{ID: 1, User: "me", Submit: 1, Min: lo, Max: hi, ResReq: fmt.Sprintf("rusage[mem=%d] %s", mem, span)})
		// On the idle cluster, under the maxima; and without limits (mem
		// 100 a host never bounds 8 tasks of at most 3).
		idle := bestSplit(free, room, user, lo, hi, span)
		bare := bestSplit(free, unlimited, math.MaxInt32, lo, hi, span)

		c := ct.Build(spec)
		s, err := runtime.New(c, runtime.Options{Registry: plugins.NewInTreeRegistry()})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Cycle(context.Background(), 1); err != nil {
			t.Fatal(err)
		}
		j := s.Jobs[len(s.Jobs)-1]
		desc := fmt.Sprintf("slots %v, per-host room %v, user room %d, -n %d,%d %q mem=%d", slots, room, user, lo, hi, span, mem)
		if j.State == framework.Running {
			if idle == 0 {
				t.Fatalf("%s: placed, but the idle cluster under the maxima fits nothing", desc)
			}
			return
		}
		pr := j.Reasons
		if pr.Stuck != (idle == 0) {
			t.Fatalf("%s: pends %v with Stuck %v; the largest idle allocation has %d tasks", desc, pr.Main, pr.Stuck, idle)
		}
		switch {
		case bare == 0 && pr.Main != framework.BadRequest:
			t.Fatalf("%s: pends %v, want BadRequest (nothing fits the idle cluster without limits)", desc, pr.Main)
		case bare > 0 && idle == 0 && pr.Main != framework.LimitReached:
			t.Fatalf("%s: pends %v, want LimitReached (only the limits' maxima rule it out)", desc, pr.Main)
		case idle > 0 && pr.Main == framework.BadRequest:
			t.Fatalf("%s: pends BadRequest, but %d tasks fit the idle cluster", desc, idle)
		}
	})
}
