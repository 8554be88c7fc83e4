package limit_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/xce-sched/xce/cluster"
	"github.com/xce-sched/xce/framework"
	"github.com/xce-sched/xce/framework/plugins"
	"github.com/xce-sched/xce/framework/plugins/limit"
	"github.com/xce-sched/xce/framework/runtime"
	ct "github.com/xce-sched/xce/internal/clustertest"
)

// lim returns a limit with no maximum on slots or jobs; the cases set the
// fields they need.
func lim(name string, set func(l *cluster.Limit)) cluster.Limit {
	l := cluster.Limit{Name: name, Slots: -1, Jobs: -1}
	set(&l)
	return l
}

func names(n ...string) cluster.Consumers { return cluster.Consumers{Names: n} }

var (
	all    = cluster.Consumers{All: true}
	perAll = cluster.Consumers{All: true, PerConsumer: true}
)

func hosts(n, slots int, mem float64) []ct.Host {
	var hs []ct.Host
	for i := range n {
		hs = append(hs, ct.Host{Name: fmt.Sprintf("h%d", i+1), Slots: slots, Mem: mem})
	}
	return hs
}

// outcome renders a job's decision: "h1*1 h2*3" or "PEND Reason(detail)".
func outcome(s *runtime.Scheduler, j *framework.Job) string {
	if j.State == framework.Running {
		out := ""
		for _, h := range j.Alloc.Hosts {
			if out != "" {
				out += " "
			}
			out += fmt.Sprintf("%s*%d", s.Cluster.Hosts[h.Host].Name, h.Slots)
		}
		return out
	}
	return fmt.Sprintf("PEND %v(%s)", j.Reasons.Main, s.ReasonDetail(j.Reasons.Main, j.Reasons.Detail))
}

// TestLimitForms: one case per limit form; every expected decision is
// worked out by hand in the case's comment. Jobs are considered in ID
// order (same submit time), first fit over hosts in order.
func TestLimitForms(t *testing.T) {
	tests := []struct {
		name   string
		spec   ct.Spec
		want   []string // per job, in ID order
		remark string
	}{
		{
			name: "users list, slots",
			spec: ct.Spec{Hosts: hosts(2, 4, -1), Limits: []cluster.Limit{lim("alice_slots", func(l *cluster.Limit) { l.Users, l.Slots = names("alice"), 2 })},
				Jobs: []ct.Job{{ID: 1, User: "alice", Min: 1}, {ID: 2, User: "alice", Min: 1}, {ID: 3, User: "alice", Min: 1}, {ID: 4, User: "bob", Min: 1}}},
			want: []string{"h1*1", "h1*1", "PEND LimitReached(alice_slots)", "h1*1"},
		},
		{
			name: "per_user all, slots",
			spec: ct.Spec{Hosts: hosts(2, 4, -1), Limits: []cluster.Limit{lim("user_slots", func(l *cluster.Limit) { l.Users, l.Slots = perAll, 2 })},
				Jobs: []ct.Job{{ID: 1, User: "alice", Min: 1}, {ID: 2, User: "alice", Min: 1}, {ID: 3, User: "alice", Min: 1},
					{ID: 4, User: "bob", Min: 1}, {ID: 5, User: "bob", Min: 1}, {ID: 6, User: "bob", Min: 1}}},
			want: []string{"h1*1", "h1*1", "PEND LimitReached(user_slots)", "h1*1", "h1*1", "PEND LimitReached(user_slots)"},
		},
		{
			name: "users all (one instance for everybody), slots",
			spec: ct.Spec{Hosts: hosts(2, 4, -1), Limits: []cluster.Limit{lim("everyone", func(l *cluster.Limit) { l.Users, l.Slots = all, 3 })},
				Jobs: []ct.Job{{ID: 1, User: "alice", Min: 1}, {ID: 2, User: "alice", Min: 1}, {ID: 3, User: "bob", Min: 1}, {ID: 4, User: "bob", Min: 1}}},
			want: []string{"h1*1", "h1*1", "h1*1", "PEND LimitReached(everyone)"},
		},
		{
			name: "per_queue all, jobs",
			spec: ct.Spec{Hosts: hosts(2, 4, -1),
				Queues: []cluster.Queue{{Name: "q1", Policy: cluster.PolicyFirstFit}, {Name: "q2", Policy: cluster.PolicyFirstFit}},
				Limits: []cluster.Limit{lim("queue_jobs", func(l *cluster.Limit) { l.Queues, l.Jobs = perAll, 1 })},
				Jobs:   []ct.Job{{ID: 1, Queue: "q1", Min: 2}, {ID: 2, Queue: "q1", Min: 1}, {ID: 3, Queue: "q2", Min: 1}}},
			// q1 first (same priority, configuration order): job 1 takes
			// q1's one job; job 2 is over it; q2's job 3 has its own.
			want: []string{"h1*2", "PEND LimitReached(queue_jobs)", "h1*1"},
		},
		{
			name: "queues list, slots",
			spec: ct.Spec{Hosts: hosts(1, 8, -1),
				Queues: []cluster.Queue{{Name: "short", Policy: cluster.PolicyFirstFit}, {Name: "long", Policy: cluster.PolicyFirstFit}},
				Limits: []cluster.Limit{lim("long_slots", func(l *cluster.Limit) { l.Queues, l.Slots = names("long"), 3 })},
				Jobs:   []ct.Job{{ID: 1, Queue: "long", Min: 2}, {ID: 2, Queue: "long", Min: 2}, {ID: 3, Queue: "short", Min: 4}}},
			// short first: 4 slots; long: 2 fit under 3, the next 2 do not.
			want: []string{"h1*2", "PEND LimitReached(long_slots)", "h1*4"},
		},
		{
			name: "per_host all, slots",
			spec: ct.Spec{Hosts: hosts(2, 4, -1), Limits: []cluster.Limit{lim("host_slots", func(l *cluster.Limit) { l.Hosts, l.Slots = perAll, 1 })},
				Jobs: []ct.Job{{ID: 1, Min: 1}, {ID: 2, Min: 1}, {ID: 3, Min: 1}}},
			want: []string{"h1*1", "h2*1", "PEND LimitReached(host_slots)"},
		},
		{
			name: "hosts list, slots, across users",
			spec: ct.Spec{Hosts: hosts(2, 4, -1), Limits: []cluster.Limit{lim("h1_slots", func(l *cluster.Limit) { l.Hosts, l.Slots = names("h1"), 2 })},
				Jobs: []ct.Job{{ID: 1, User: "a", Min: 4}, {ID: 2, User: "b", Min: 3}}},
			// Job 1: h1 would take 4 > 2, so h2 takes all 4. Job 2: 3
			// tasks; h2 is full and h1 may take only 2 more under the
			// limit: the limit bounds h1, h2 lacks slots; the tie goes to
			// the limit.
			want: []string{"h2*4", "PEND LimitReached(h1_slots)"},
		},
		{
			name: "per_user on a hosts list",
			spec: ct.Spec{Hosts: hosts(2, 4, -1), Limits: []cluster.Limit{lim("h1_per_user", func(l *cluster.Limit) { l.Users, l.Hosts, l.Slots = perAll, names("h1"), 1 })},
				Jobs: []ct.Job{{ID: 1, User: "alice", Min: 1}, {ID: 2, User: "alice", Min: 1}, {ID: 3, User: "bob", Min: 1}}},
			want: []string{"h1*1", "h2*1", "h1*1"},
		},
		{
			name: "projects list, jobs",
			spec: ct.Spec{Hosts: hosts(1, 8, -1), Limits: []cluster.Limit{lim("p1_jobs", func(l *cluster.Limit) { l.Projects, l.Jobs = names("p1"), 1 })},
				Jobs: []ct.Job{{ID: 1, Project: "p1", Min: 1}, {ID: 2, Project: "p1", Min: 1}, {ID: 3, Project: "p2", Min: 1}}},
			want: []string{"h1*1", "PEND LimitReached(p1_jobs)", "h1*1"},
		},
		{
			name: "per_project all, slots",
			spec: ct.Spec{Hosts: hosts(1, 8, -1), Limits: []cluster.Limit{lim("proj", func(l *cluster.Limit) { l.Projects, l.Slots = perAll, 3 })},
				Jobs: []ct.Job{{ID: 1, Project: "p1", Min: 3}, {ID: 2, Project: "p1", Min: 1}, {ID: 3, Project: "p2", Min: 3}}},
			want: []string{"h1*3", "PEND LimitReached(proj)", "h1*3"},
		},
		{
			name: "mem, every job",
			spec: ct.Spec{Hosts: hosts(2, 4, 8000), MemMethod: cluster.PerTask, Limits: []cluster.Limit{lim("mem_cap", func(l *cluster.Limit) {
				l.Users, l.Resources = all, []cluster.LimitResource{{Name: "mem", Max: 3000}}
			})},
				Jobs: []ct.Job{{ID: 1, Min: 2, ResReq: "rusage[mem=1000]"}, {ID: 2, Min: 2, ResReq: "rusage[mem=1000]"}, {ID: 3, Min: 1, ResReq: "rusage[mem=1000]"}}},
			// 2000 of 3000 after job 1; job 2 needs 2000; job 3 takes the last 1000.
			want: []string{"h1*2", "PEND LimitReached(mem_cap)", "h1*1"},
		},
		{
			name: "mem per host, every job",
			spec: ct.Spec{Hosts: hosts(2, 8, 8000), Limits: []cluster.Limit{lim("mem_cap", func(l *cluster.Limit) {
				l.Users, l.Resources = all, []cluster.LimitResource{{Name: "mem", Max: 3000}}
			})},
				Jobs: []ct.Job{{ID: 1, Min: 2, ResReq: "rusage[mem=1000]"}, {ID: 2, Min: 2, ResReq: "rusage[mem=1000]"}, {ID: 3, Min: 2, ResReq: "rusage[mem=1000] span[ptile=1]"}, {ID: 4, Min: 1, ResReq: "rusage[mem=1000]"}}},
			// Jobs 1 and 2 reserve 1000 each on h1 (one host each): 2000
			// of 3000. Job 3 needs two hosts, reserving 1000 on each, and
			// 1000 is left. Job 4 takes the last 1000.
			want: []string{"h1*2", "h1*2", "PEND LimitReached(mem_cap)", "h1*1"},
		},
		{
			name: "shared resource per user",
			spec: ct.Spec{Hosts: hosts(1, 8, -1), Shared: []cluster.Shared{{Name: "lic", Total: 4}},
				Limits: []cluster.Limit{lim("lic_user", func(l *cluster.Limit) {
					l.Users, l.Resources = perAll, []cluster.LimitResource{{Name: "lic", Max: 1}}
				})},
				Jobs: []ct.Job{{ID: 1, User: "alice", Min: 1, ResReq: "rusage[lic=1]"}, {ID: 2, User: "alice", Min: 1, ResReq: "rusage[lic=1]"}, {ID: 3, User: "bob", Min: 2, ResReq: "rusage[lic=1]"}}},
			want: []string{"h1*1", "PEND LimitReached(lic_user)", "h1*2"},
		},
		{
			name: "per_host all, jobs",
			spec: ct.Spec{Hosts: hosts(2, 4, -1), Limits: []cluster.Limit{lim("one_job_per_host", func(l *cluster.Limit) { l.Hosts, l.Jobs = perAll, 1 })},
				Jobs: []ct.Job{{ID: 1, Min: 4, ResReq: "span[ptile=2]"}, {ID: 2, Min: 1}}},
			// Job 1 spans both hosts, one job on each: job 2 finds none.
			want: []string{"h1*2 h2*2", "PEND LimitReached(one_job_per_host)"},
		},
		{
			name: "jobs: a job on two hosts counts once",
			spec: ct.Spec{Hosts: hosts(2, 4, -1), Limits: []cluster.Limit{lim("two_jobs", func(l *cluster.Limit) { l.Users, l.Jobs = all, 2 })},
				Jobs: []ct.Job{{ID: 1, Min: 4, ResReq: "span[ptile=2]"}, {ID: 2, Min: 1}, {ID: 3, Min: 1}}},
			want: []string{"h1*2 h2*2", "h1*1", "PEND LimitReached(two_jobs)"},
		},
		{
			// Carol fills h1. Alice's 3 tasks find h1 full and h2 with 2
			// slots: NotEnoughSlots (1 host). Bob may not use h2 at all: h1
			// full, h2 over his limit, one host each, and the tie goes to
			// the limit. Dave is like Alice: his limits (none) have room,
			// so he shares her diagnosis; Bob, under a limit on a hosts
			// list, must not.
			name: "pending reasons: a job under a host limit is diagnosed on its own",
			spec: ct.Spec{Hosts: hosts(2, 2, -1), Limits: []cluster.Limit{lim("bob_h2", func(l *cluster.Limit) { l.Users, l.Hosts, l.Slots = names("bob"), names("h2"), 0 })},
				Jobs: []ct.Job{{ID: 1, User: "carol", Min: 2}, {ID: 2, User: "alice", Min: 3}, {ID: 3, User: "bob", Min: 3}, {ID: 4, User: "dave", Min: 3}}},
			want: []string{"h1*2", "PEND NotEnoughSlots()", "PEND LimitReached(bob_h2)", "PEND NotEnoughSlots()"},
		},
		{
			// Host a (type A) is free, host b (type B) full. Ua's compound
			// job needs 2 tasks on type B: NotEnoughSlots. Ua's limit (4
			// slots) has room for the 3 tasks, so it is not why the job
			// pends, although it would stop host a taking more than 4;
			// ub, under no limit, shares the same diagnosis.
			name: "pending reasons: a limit with room is not the reason",
			spec: ct.Spec{Hosts: []ct.Host{{Name: "a", Slots: 8, Mem: -1, Type: "A"}, {Name: "b", Slots: 4, Mem: -1, Type: "B"}},
				Limits: []cluster.Limit{lim("ua_slots", func(l *cluster.Limit) { l.Users, l.Slots = names("ua"), 4 })},
				Jobs: []ct.Job{{ID: 1, User: "z", Min: 4, ResReq: "select[type==B]", Running: map[string]int{"b": 4}},
					{ID: 2, User: "ua", Min: 3, ResReq: "1*{select[type==A]} + 2*{select[type==B]}"},
					{ID: 3, User: "ub", Min: 3, ResReq: "1*{select[type==A]} + 2*{select[type==B]}"}}},
			want: []string{"b*4", "PEND NotEnoughSlots()", "PEND NotEnoughSlots()"},
		},
		{
			// U1's 5 tasks on one host find 4 + 4 free: SpanUnsatisfiable.
			// U2's 6 tasks then take h1*4 h2*2, leaving 2 slots: u3's same
			// request now pends for NotEnoughSlots; u1's diagnosis, made
			// before u2's job started, no longer holds.
			name: "pending reasons: a shared diagnosis ends when a job starts",
			spec: ct.Spec{Hosts: []ct.Host{{Name: "h1", Slots: 6, Mem: -1}, {Name: "h2", Slots: 4, Mem: -1}},
				Limits: []cluster.Limit{lim("u1_slots", func(l *cluster.Limit) { l.Users, l.Slots = names("u1"), 100 })},
				Jobs: []ct.Job{{ID: 1, User: "z", Min: 2, Running: map[string]int{"h1": 2}},
					{ID: 2, User: "u1", Min: 5, ResReq: "span[hosts=1]"},
					{ID: 3, User: "u2", Min: 6},
					{ID: 4, User: "u3", Min: 5, ResReq: "span[hosts=1]"}}},
			want: []string{"h1*2", "PEND SpanUnsatisfiable()", "h1*4 h2*2", "PEND NotEnoughSlots()"},
		},
		{
			name: "jobs across users",
			spec: ct.Spec{Hosts: hosts(1, 8, -1), Limits: []cluster.Limit{lim("two_jobs", func(l *cluster.Limit) { l.Users, l.Jobs = all, 2 })},
				Jobs: []ct.Job{{ID: 1, User: "a", Min: 3}, {ID: 2, User: "b", Min: 1}, {ID: 3, User: "c", Min: 1}}},
			want: []string{"h1*3", "h1*1", "PEND LimitReached(two_jobs)"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { checkCycle(t, tc.spec, tc.want) })
	}
}

// checkCycle runs one cycle at 0 over spec and checks each job's outcome
// against want (in job order), the state's invariants, and that no limit
// counter is over-committed.
func checkCycle(t *testing.T, spec ct.Spec, want []string) {
	t.Helper()
	s, err := runtime.New(ct.Build(spec), runtime.Options{Registry: plugins.NewInTreeRegistry()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Cycle(context.Background(), 0); err != nil {
		t.Fatal(err)
	}
	for i, j := range s.Jobs {
		if got := outcome(s, j); got != want[i] {
			t.Errorf("job %d (%s): got %q, want %q", j.Spec.ID, j.Spec.User, got, want[i])
		}
	}
	if err := s.State.CheckInvariants(); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < s.State.NumCounters(); i++ {
		if c := s.State.Counter(cluster.CounterID(i)); c.Used > c.Max {
			t.Errorf("counter %d of limit %d over-committed: %v > %v", i, c.Limit, c.Used, c.Max)
		}
	}
}

// TestSlack: a job's limits are slack when every limit that applies counts
// over all hosts and has room for the job's largest placement. Alice runs
// 2 of her 3 slots; a limit on host h2 binds only carol.
func TestSlack(t *testing.T) {
	spec := ct.Spec{Hosts: hosts(2, 8, -1), Limits: []cluster.Limit{
		lim("user_slots", func(l *cluster.Limit) { l.Users, l.Slots = perAll, 3 }),
		lim("carol_h2", func(l *cluster.Limit) { l.Users, l.Hosts, l.Slots = names("carol"), names("h2"), 4 }),
	}, Jobs: []ct.Job{
		{ID: 1, User: "alice", Min: 2, Running: map[string]int{"h1": 2}},
		{ID: 2, User: "alice", Min: 1},                      // room 1 for 1: slack
		{ID: 3, User: "alice", Min: 1, Max: 2},              // up to 2 in room 1: not
		{ID: 4, User: "bob", Min: 3},                        // room 3 for 3: slack
		{ID: 5, User: "bob", Min: 2, Max: 4},                // up to 4 in room 3: not
		{ID: 6, User: "carol", Min: 1},                      // under a hosts limit: not
		{ID: 7, User: "bob", Min: 3, ResReq: "1*{} + 2*{}"}, // compound, 3 in all: slack
	}}
	s, err := runtime.New(ct.Build(spec), runtime.Options{Registry: plugins.NewInTreeRegistry()})
	if err != nil {
		t.Fatal(err)
	}
	view := &framework.View{Cluster: s.Cluster, State: s.State}
	want := []bool{true, false, true, false, false, true}
	for i, j := range s.Jobs[1:] {
		if got := limitOf(t, s).Slack(j, view); got != want[i] {
			t.Errorf("job %d: Slack = %v, want %v", j.Spec.ID, got, want[i])
		}
	}
}

// TestPerHostLimitManyHosts: one job per host on 200 hosts (so the
// per-host counters span several pages of the plugin's table): jobs 1–200
// take h1–h200 in host order, job 201 finds every host at its limit.
func TestPerHostLimitManyHosts(t *testing.T) {
	spec := ct.Spec{Hosts: hosts(200, 4, -1), Limits: []cluster.Limit{lim("one_job_per_host", func(l *cluster.Limit) { l.Hosts, l.Jobs = perAll, 1 })}}
	for i := range 201 {
		spec.Jobs = append(spec.Jobs, ct.Job{ID: cluster.JobID(i + 1), Min: 1})
	}
	s, err := runtime.New(ct.Build(spec), runtime.Options{Registry: plugins.NewInTreeRegistry()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Cycle(context.Background(), 0); err != nil {
		t.Fatal(err)
	}
	for i, j := range s.Jobs {
		want := fmt.Sprintf("h%d*1", i+1)
		if i == 200 {
			want = "PEND LimitReached(one_job_per_host)"
		}
		if got := outcome(s, j); got != want {
			t.Fatalf("job %d: got %q, want %q", j.Spec.ID, got, want)
		}
	}
}

// TestBoundsName: HostBound and JobBound name the limit that sets each
// bound, the first in configuration order among those with the least
// room. h1 and h2 have 8 slots; alice runs 1 task on h1. For her 1-task
// job: h1's room is 3 − 1 = 2 under a3 and under b3 (a3 comes first and is
// named), 5 − 1 = 4 under user5; h2's is 3 under a3 and b3, 4 under user5
// and 1 under h2_only; in all, user5's 4 (the only limit with one instance
// over every host); per host, at most min(3, 3, 4) = 3.
func TestBoundsName(t *testing.T) {
	spec := ct.Spec{Hosts: hosts(2, 8, -1), Limits: []cluster.Limit{
		lim("a3", func(l *cluster.Limit) { l.Hosts, l.Slots = perAll, 3 }),
		lim("b3", func(l *cluster.Limit) { l.Hosts, l.Slots = perAll, 3 }),
		lim("user5", func(l *cluster.Limit) { l.Users, l.Slots = perAll, 5 }),
		lim("h2_only", func(l *cluster.Limit) { l.Hosts, l.Slots = names("h2"), 1 }),
	}, Jobs: []ct.Job{
		{ID: 1, User: "alice", Min: 1, Running: map[string]int{"h1": 1}},
		{ID: 2, User: "alice", Min: 1},
	}}
	s, err := runtime.New(ct.Build(spec), runtime.Options{Registry: plugins.NewInTreeRegistry()})
	if err != nil {
		t.Fatal(err)
	}
	view := &framework.View{Cluster: s.Cluster, State: s.State}
	j := s.Jobs[1]
	alt := &j.Req.Alts[0]
	term := &alt.Terms[0]
	type bound struct {
		n  int
		by string
	}
	name := func(by int32) string {
		if by < 0 {
			return "-"
		}
		return s.Cluster.Limits[by].Name
	}
	for h, want := range []bound{{2, "a3"}, {1, "h2_only"}} {
		n, by := limitOf(t, s).HostBound(j, alt, term, cluster.HostID(h), view)
		if got := (bound{n, name(by)}); got != want {
			t.Errorf("HostBound(h%d) = %v, want %v", h+1, got, want)
		}
	}
	total, perHost, by := limitOf(t, s).JobBound(j, alt, term, view)
	if total != 4 || perHost != 3 || name(by) != "user5" {
		t.Errorf("JobBound = %d, %d, %s; want 4, 3, user5", total, perHost, name(by))
	}
}

// limitOf returns the limit preparer s runs; it fails t when there is none.
func limitOf(t *testing.T, s *runtime.Scheduler) *limit.Plugin {
	t.Helper()
	for _, p := range s.Preparers() {
		if lp, ok := p.(*limit.Plugin); ok {
			return lp
		}
	}
	t.Fatal("the scheduler runs no limit preparer")
	return nil
}
