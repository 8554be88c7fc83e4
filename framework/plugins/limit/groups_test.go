package limit_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/xce-sched/xce/cluster"
	"github.com/xce-sched/xce/framework/plugins"
	"github.com/xce-sched/xce/framework/runtime"
	ct "github.com/xce-sched/xce/internal/clustertest"
)

// chemGroups: chem = {alice, bob}; all_chem = chem + carol = {alice, bob,
// carol}. Dave is in no group.
var chemGroups = []cluster.UserGroup{
	{Name: "chem", Members: []string{"alice", "bob"}},
	{Name: "all_chem", Members: []string{"chem", "carol"}},
}

// gpuGroups: gpu_hosts = {h1, h2}; big = gpu_hosts + h3 = {h1, h2, h3}.
var gpuGroups = []cluster.HostGroup{
	{Name: "gpu_hosts", Members: []string{"h1", "h2"}},
	{Name: "big", Members: []string{"gpu_hosts", "h3"}},
}

// jobsOf returns 1-slot jobs of the users, IDs from 1 in order.
func jobsOf(users ...string) []ct.Job {
	var js []ct.Job
	for i, u := range users {
		js = append(js, ct.Job{ID: cluster.JobID(i + 1), User: u, Min: 1})
	}
	return js
}

// TestLimitGroups: limits naming user groups and host groups, with LSF's
// lsb.resources semantics: USERS=group is one limit for the group's
// members together, PER_USER=group one per member, subgroups recursively;
// likewise HOSTS and PER_HOST with host groups. Every decision is worked
// out by hand in the case's comment; jobs are considered in ID order,
// first fit over hosts in order.
func TestLimitGroups(t *testing.T) {
	tests := []struct {
		name string
		spec ct.Spec
		want []string // per job, in ID order
	}{
		{
			// chem's 2 slots are alice's and bob's together: alice and
			// bob take them, alice's second job is over; carol and dave
			// are not in chem.
			name: "users: [chem]: one instance for the members together",
			spec: ct.Spec{Hosts: hosts(2, 4, -1), UserGroups: chemGroups,
				Limits: []cluster.Limit{lim("chem_slots", func(l *cluster.Limit) { l.Users, l.Slots = names("chem"), 2 })},
				Jobs:   jobsOf("alice", "bob", "alice", "carol", "dave")},
			want: []string{"h1*1", "h1*1", "PEND LimitReached(chem_slots)", "h1*1", "h1*1"},
		},
		{
			// Each of alice and bob has 2 slots: the third job of each
			// pends; carol is not in chem and runs all three (7 slots of
			// h1's 8 in all).
			name: "per_user: [chem]: one instance per member",
			spec: ct.Spec{Hosts: hosts(2, 8, -1), UserGroups: chemGroups,
				Limits: []cluster.Limit{lim("chem_each", func(l *cluster.Limit) {
					l.Users, l.Slots = cluster.Consumers{Names: []string{"chem"}, PerConsumer: true}, 2
				})},
				Jobs: jobsOf("alice", "alice", "alice", "bob", "bob", "bob", "carol", "carol", "carol")},
			want: []string{"h1*1", "h1*1", "PEND LimitReached(chem_each)", "h1*1", "h1*1", "PEND LimitReached(chem_each)", "h1*1", "h1*1", "h1*1"},
		},
		{
			// all_chem holds chem's members and carol: 3 slots for the
			// three of them; carol's second job is the fourth; dave is
			// free.
			name: "users: [all_chem]: a subgroup's members count with the group",
			spec: ct.Spec{Hosts: hosts(2, 4, -1), UserGroups: chemGroups,
				Limits: []cluster.Limit{lim("all_chem_slots", func(l *cluster.Limit) { l.Users, l.Slots = names("all_chem"), 3 })},
				Jobs:   jobsOf("alice", "bob", "carol", "carol", "dave")},
			want: []string{"h1*1", "h1*1", "h1*1", "PEND LimitReached(all_chem_slots)", "h1*1"},
		},
		{
			// One running job for each of all_chem's members, chem's
			// through the subgroup: alice's and carol's second jobs pend,
			// dave's run.
			name: "per_user: [all_chem]: each member, recursively",
			spec: ct.Spec{Hosts: hosts(2, 4, -1), UserGroups: chemGroups,
				Limits: []cluster.Limit{lim("one_job", func(l *cluster.Limit) {
					l.Users, l.Jobs = cluster.Consumers{Names: []string{"all_chem"}, PerConsumer: true}, 1
				})},
				Jobs: jobsOf("alice", "alice", "carol", "carol", "dave", "dave")},
			want: []string{"h1*1", "PEND LimitReached(one_job)", "h1*1", "PEND LimitReached(one_job)", "h1*1", "h1*1"},
		},
		{
			// chem and dave share one instance of 2 slots: alice and
			// dave take it, bob is over; carol is outside.
			name: "users: [chem, dave]: a group and a user in one instance",
			spec: ct.Spec{Hosts: hosts(2, 4, -1), UserGroups: chemGroups,
				Limits: []cluster.Limit{lim("mixed", func(l *cluster.Limit) { l.Users, l.Slots = names("chem", "dave"), 2 })},
				Jobs:   jobsOf("alice", "dave", "bob", "carol")},
			want: []string{"h1*1", "h1*1", "PEND LimitReached(mixed)", "h1*1"},
		},
		{
			// 2 slots on h1 and h2 together: jobs 1 and 2 take h1; job 3
			// finds both gpu hosts at the limit and takes h3.
			name: "hosts: [gpu_hosts]: one instance over the group's hosts",
			spec: ct.Spec{Hosts: hosts(3, 4, -1), HostGroups: gpuGroups,
				Limits: []cluster.Limit{lim("gpu_slots", func(l *cluster.Limit) { l.Hosts, l.Slots = names("gpu_hosts"), 2 })},
				Jobs:   jobsOf("u", "u", "u")},
			want: []string{"h1*1", "h1*1", "h3*1"},
		},
		{
			// One slot on each of h1, h2 and (through gpu_hosts inside
			// big) h3; h4 is not limited and takes the rest.
			name: "per_host: [big]: each host of a nested host group",
			spec: ct.Spec{Hosts: hosts(4, 4, -1), HostGroups: gpuGroups,
				Limits: []cluster.Limit{lim("one_slot", func(l *cluster.Limit) {
					l.Hosts, l.Slots = cluster.Consumers{Names: []string{"big"}, PerConsumer: true}, 1
				})},
				Jobs: jobsOf("u", "u", "u", "u", "u")},
			want: []string{"h1*1", "h2*1", "h3*1", "h4*1", "h4*1"},
		},
		{
			// chem's members may hold 1 slot on the gpu hosts together:
			// alice takes h1's; bob's job finds h1 and h2 at the limit
			// and goes to h3; carol is not in chem and takes h1.
			name: "users: [chem] on hosts: [gpu_hosts]",
			spec: ct.Spec{Hosts: hosts(3, 4, -1), UserGroups: chemGroups, HostGroups: gpuGroups,
				Limits: []cluster.Limit{lim("chem_gpu", func(l *cluster.Limit) { l.Users, l.Hosts, l.Slots = names("chem"), names("gpu_hosts"), 1 })},
				Jobs:   jobsOf("alice", "bob", "carol")},
			want: []string{"h1*1", "h3*1", "h1*1"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { checkCycle(t, tc.spec, tc.want) })
	}
}

// TestLimitGroupInstances: per_user: [chem] creates one instance per
// member that has a job, named by the member; users: [chem] one instance
// for the group.
func TestLimitGroupInstances(t *testing.T) {
	spec := ct.Spec{Hosts: hosts(1, 8, -1), UserGroups: chemGroups, Limits: []cluster.Limit{
		lim("each", func(l *cluster.Limit) {
			l.Users, l.Slots = cluster.Consumers{Names: []string{"chem"}, PerConsumer: true}, 2
		}),
		lim("together", func(l *cluster.Limit) { l.Users, l.Slots = names("chem"), 4 }),
	}, Jobs: jobsOf("alice", "bob", "carol", "bob")}
	s, err := runtime.New(ct.Build(spec), runtime.Options{Registry: plugins.NewInTreeRegistry()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Cycle(context.Background(), 0); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, in := range limitOf(t, s).Instances() {
		got = append(got, fmt.Sprintf("%s/%s=%v", s.Cluster.Limits[in.Limit].Name, in.User, s.State.Counter(in.First).Used))
	}
	// alice: each/alice and together (created in that order), bob:
	// each/bob; carol is under no limit. Bob's two jobs: 2 slots.
	want := []string{"each/alice=1", "together/=3", "each/bob=2"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("instances %v, want %v", got, want)
	}
}
