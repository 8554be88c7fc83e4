package fairshare_test

import (
	"context"
	"math"
	"testing"

	"github.com/xce-sched/xce/cluster"
	"github.com/xce-sched/xce/framework"
	"github.com/xce-sched/xce/framework/plugins"
	"github.com/xce-sched/xce/framework/plugins/fairshare"
	"github.com/xce-sched/xce/framework/runtime"
	ct "github.com/xce-sched/xce/internal/clustertest"
)

func fairQueue(shares ...cluster.UserShare) cluster.Queue {
	return cluster.Queue{Name: "fs", Policy: cluster.PolicyFirstFit, Picker: fairshare.Name, Shares: shares, HalfLife: 3600}
}

// TestPriority pins the dynamic priority formula on hand-computed values:
// shares 3, a 2-slot job running from t=0: at t=3600 it has used 2
// slot-hours, so 3 / (2×0.7 + (1+2)×3) = 3/10.4. It ends then; its 2
// slot-hours decay with a half-life of 3600 s to 1 at t=7200, with no slot
// in use: 3 / (1×0.7 + 1×3) = 3/3.7.
func TestPriority(t *testing.T) {
	c := ct.Build(ct.Spec{Hosts: []ct.Host{{Name: "h", Slots: 4, Mem: -1}}, Queues: []cluster.Queue{fairQueue(cluster.UserShare{User: "alice", Shares: 3})}})
	p := fairshare.New(c, 0)
	job := &framework.Job{Spec: &cluster.Job{ID: 1, User: "alice"}, Alloc: &cluster.JobAlloc{Hosts: []cluster.HostAlloc{{Host: 0, Slots: 2}}}, Start: 0}
	if got, want := p.Priority("alice", 0, 0), 3.0/3; got != want {
		t.Errorf("idle: got %v, want %v", got, want)
	}
	p.JobStarted(job, 0)
	if got, want := p.Priority("alice", 3600, 0), 3/10.4; math.Abs(got-want) > 1e-12 {
		t.Errorf("running: got %v, want %v", got, want)
	}
	p.JobFinished(job, 3600)
	if got, want := p.Priority("alice", 7200, 0), 3/3.7; math.Abs(got-want) > 1e-12 {
		t.Errorf("history: got %v, want %v", got, want)
	}
	// An unlisted user has the default share of 1 and no usage.
	if got, want := p.Priority("bob", 7200, 0), 1.0/3; got != want {
		t.Errorf("default share: got %v, want %v", got, want)
	}
}

// TestOrder: alice has 2 shares, bob 1; each submits three 1-slot jobs;
// 4 slots. Worked by hand: alice 2/3 > bob 1/3 → a1; alice 2/6 = bob 1/3,
// tie to the earlier job → b1; alice 2/6 > bob 1/6 → a2; 2/9 > 1/6 → a3;
// then b2, b3. The first four run.
func TestOrder(t *testing.T) {
	spec := ct.Spec{
		Hosts:  []ct.Host{{Name: "h", Slots: 4, Mem: -1}},
		Queues: []cluster.Queue{fairQueue(cluster.UserShare{User: "alice", Shares: 2}, cluster.UserShare{User: "bob", Shares: 1})},
		Jobs: []ct.Job{
			{ID: 1, User: "alice", Submit: 0, Min: 1}, {ID: 2, User: "alice", Submit: 1, Min: 1}, {ID: 3, User: "alice", Submit: 2, Min: 1},
			{ID: 4, User: "bob", Submit: 0, Min: 1}, {ID: 5, User: "bob", Submit: 1, Min: 1}, {ID: 6, User: "bob", Submit: 2, Min: 1},
		},
	}
	s, err := runtime.New(ct.Build(spec), runtime.Options{Registry: plugins.NewInTreeRegistry()})
	if err != nil {
		t.Fatal(err)
	}
	jobs, err := s.Cycle(context.Background(), 2)
	if err != nil {
		t.Fatal(err)
	}
	var order []cluster.JobID
	var running []cluster.JobID
	for _, j := range jobs {
		order = append(order, j.Spec.ID)
		if j.State == framework.Running {
			running = append(running, j.Spec.ID)
		}
	}
	if want := []cluster.JobID{1, 4, 2, 3, 5, 6}; !equal(order, want) {
		t.Errorf("order %v, want %v", order, want)
	}
	if want := []cluster.JobID{1, 4, 2, 3}; !equal(running, want) {
		t.Errorf("running %v, want %v", running, want)
	}
}

func equal(a, b []cluster.JobID) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestOrderGroups: hierarchical fairshare (docs/fairshare.md, "User
// groups"): shares may go to user groups, whose members divide the
// group's share. All jobs take one slot; the orders are worked out by hand
// from priority = shares / ((hist + running) × 0.7 + (1 + slots) × 3)
// with no history, at each level of the share tree, ties to the account
// whose next job comes first (submit, then ID).
func TestOrderGroups(t *testing.T) {
	chem := cluster.UserGroup{Name: "chem", Members: []string{"alice", "bob"}}
	share := func(u string, n int) cluster.UserShare { return cluster.UserShare{User: u, Shares: n} }
	tests := []struct {
		name   string
		groups []cluster.UserGroup
		shares []cluster.UserShare
		jobs   []ct.Job
		want   []cluster.JobID
		flat   []cluster.JobID // the order were chem's members plain users of 1 share
	}{
		{
			// chem (alice, bob) and dave have 1 share each, so chem's two
			// members together get as many turns as dave alone:
			//  1. chem 1/3 = dave 1/3; chem's next is alice's job 1 (alice
			//     and bob tie at 1/3, job 1 before 4), before dave's 7: 1.
			//  2. chem 1/6 < dave 1/3: 7.
			//  3. chem 1/6 = dave 1/6; in chem bob 1/3 > alice 1/6: job 4
			//     before 8: 4.
			//  4. chem 1/9 < dave 1/6: 8.
			//  5. chem 1/9 = dave 1/9; alice 1/6 = bob 1/6, job 2 before
			//     5, before 9: 2.
			//  6. chem 1/12 < dave 1/9: 9; then bob 5 (1/6 > 1/9), alice
			//     3 and bob 6 (1/9 each, 3 first).
			name:   "a group's members share its turns",
			groups: []cluster.UserGroup{chem},
			shares: []cluster.UserShare{share("chem", 1), share("dave", 1)},
			jobs: []ct.Job{{ID: 1, User: "alice"}, {ID: 2, User: "alice"}, {ID: 3, User: "alice"},
				{ID: 4, User: "bob"}, {ID: 5, User: "bob"}, {ID: 6, User: "bob"},
				{ID: 7, User: "dave"}, {ID: 8, User: "dave"}, {ID: 9, User: "dave"}},
			want: []cluster.JobID{1, 7, 4, 8, 2, 9, 5, 3, 6},
			flat: []cluster.JobID{1, 4, 7, 2, 5, 8, 3, 6, 9},
		},
		{
			// Alice runs a 2-slot job (started now: no run time yet), which
			// weighs on chem: chem 1/(3×3) = 1/9 < dave 1/3, so dave's two
			// jobs go first (1/6 > 1/9 after the first); then bob's, who
			// is at 1/3 in chem. Flat, bob (1/3) would tie dave and go
			// first with job 1.
			name:   "a member's running job weighs on the group",
			groups: []cluster.UserGroup{chem},
			shares: []cluster.UserShare{share("chem", 1), share("dave", 1)},
			jobs: []ct.Job{{ID: 10, User: "alice", Min: 2, Running: map[string]int{"h": 2}},
				{ID: 1, User: "bob"}, {ID: 2, User: "bob"}, {ID: 3, User: "dave"}, {ID: 4, User: "dave"}},
			want: []cluster.JobID{3, 4, 1, 2},
			flat: []cluster.JobID{1, 3, 2, 4},
		},
		{
			// all_chem gives chem 3 shares and carol (default) 1; at the
			// top all_chem and dave (default) have 1 each:
			//  1. all_chem 1/3 = dave 1/3; all_chem's next: chem 3/3 >
			//     carol 1/3, alice's job 1, before dave's 5: 1.
			//  2. all_chem 1/6 < dave 1/3: 5.
			//  3. all_chem alone; chem 3/6 > carol 1/3: alice's 2.
			//  4, 5. carol's 3 and 4.
			name: "nested groups with shares of their own",
			groups: []cluster.UserGroup{chem, {Name: "all_chem", Members: []string{"chem", "carol"},
				Shares: []cluster.UserShare{share("chem", 3), share("default", 1)}}},
			shares: []cluster.UserShare{share("all_chem", 1), share("default", 1)},
			jobs: []ct.Job{{ID: 1, User: "alice"}, {ID: 2, User: "alice"}, {ID: 3, User: "carol"}, {ID: 4, User: "carol"},
				{ID: 5, User: "dave"}},
			want: []cluster.JobID{1, 5, 2, 3, 4},
			flat: []cluster.JobID{1, 3, 5, 2, 4},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, flat := range []bool{false, true} {
				spec := ct.Spec{Hosts: []ct.Host{{Name: "h", Slots: 100, Mem: -1}},
					Queues: []cluster.Queue{fairQueue(tc.shares...)}, UserGroups: tc.groups, Jobs: tc.jobs}
				want := tc.want
				if flat {
					// Without groups, every user has the default share 1.
					spec.Queues, spec.UserGroups, want = []cluster.Queue{fairQueue()}, nil, tc.flat
				}
				s, err := runtime.New(ct.Build(spec), runtime.Options{Registry: plugins.NewInTreeRegistry()})
				if err != nil {
					t.Fatal(err)
				}
				jobs, err := s.Cycle(context.Background(), 0)
				if err != nil {
					t.Fatal(err)
				}
				var order []cluster.JobID
				for _, j := range jobs {
					order = append(order, j.Spec.ID)
				}
				if !equal(order, want) {
					t.Errorf("flat %v: order %v, want %v", flat, order, want)
				}
			}
		})
	}
}

// TestGroupPriority: a group account's usage is its members' together.
// Alice (2 slots) and bob (1 slot) run from t=0 in chem (2 shares); at
// t=3600 chem has 3 slot-hours and 3 slots: 2 / (3×0.7 + 4×3) = 2/14.1;
// alice's own account, 1 share of chem's: 1 / (2×0.7 + 3×3) = 1/10.4.
func TestGroupPriority(t *testing.T) {
	c := ct.Build(ct.Spec{Hosts: []ct.Host{{Name: "h", Slots: 4, Mem: -1}},
		Queues:     []cluster.Queue{fairQueue(cluster.UserShare{User: "chem", Shares: 2})},
		UserGroups: []cluster.UserGroup{{Name: "chem", Members: []string{"alice", "bob"}}}})
	p := fairshare.New(c, 0)
	for i, x := range []struct {
		user  string
		slots int
	}{{"alice", 2}, {"bob", 1}} {
		p.JobStarted(&framework.Job{Spec: &cluster.Job{ID: cluster.JobID(i + 1), User: x.user},
			Alloc: &cluster.JobAlloc{Hosts: []cluster.HostAlloc{{Host: 0, Slots: x.slots}}}}, 0)
	}
	if got, ok := p.GroupPriority("alice", "chem", 3600); !ok || math.Abs(got-2/14.1) > 1e-12 {
		t.Errorf("chem: got %v %v, want %v", got, ok, 2/14.1)
	}
	if got, want := p.Priority("alice", 3600, 0), 1/10.4; math.Abs(got-want) > 1e-12 {
		t.Errorf("alice: got %v, want %v", got, want)
	}
	if _, ok := p.GroupPriority("dave", "chem", 3600); ok {
		t.Error("dave is charged through chem")
	}
}
