package runtime_test

import (
	"context"
	"fmt"
	"reflect"
	"testing"

	"pgregory.net/rapid"

	"github.com/xce-sched/xce/cluster"
	"github.com/xce-sched/xce/framework"
	"github.com/xce-sched/xce/framework/plugins"
	"github.com/xce-sched/xce/framework/runtime"
	ct "github.com/xce-sched/xce/internal/clustertest"
)

// fataler is what decisionsOf needs of a *testing.T or a *rapid.T.
type fataler interface{ Fatal(args ...any) }

// decisionsOf runs one cycle, after every job's submission, and renders
// every job's decision; it also returns the scheduler.
func decisionsOf(t fataler, c *cluster.Cluster, noCache bool) ([]string, *runtime.Scheduler) {
	s, err := runtime.New(c, runtime.Options{Registry: plugins.NewInTreeRegistry(), NoUnsatCache: noCache})
	if err != nil {
		t.Fatal(err)
	}
	jobs, err := s.Cycle(context.Background(), 1<<40)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, j := range jobs {
		if j.State == framework.Running {
			out = append(out, fmt.Sprintf("%d RUN %v", j.Spec.ID, j.Alloc.Hosts))
		} else {
			out = append(out, fmt.Sprintf("%d PEND", j.Spec.ID))
		}
	}
	return out, s
}

// TestPropertyUnsatCache: over random clusters, limits and many jobs of few
// distinct shapes and users, a cycle places exactly the same jobs on the
// same hosts with the unsatisfiable cache as without it. (A cached job
// carries the reasons its class pended with earlier in the cycle; a fresh
// attempt might word them differently, since resources only shrank since.)
func TestPropertyUnsatCache(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		spec := genCluster(t)
		users := []string{"alice", "bob", "carol"}
		if rapid.Bool().Draw(t, "user limit") {
			spec.Limits = append(spec.Limits, cluster.Limit{Name: "per_user", Users: cluster.Consumers{All: true, PerConsumer: true},
				Slots: rapid.IntRange(0, 6).Draw(t, "user slots"), Jobs: -1})
		}
		if rapid.Bool().Draw(t, "host limit") {
			spec.Limits = append(spec.Limits, cluster.Limit{Name: "per_host", Hosts: cluster.Consumers{All: true, PerConsumer: true},
				Slots: -1, Jobs: rapid.IntRange(1, 3).Draw(t, "host jobs")})
		}
		n := rapid.IntRange(1, 40).Draw(t, "jobs")
		for i := range n {
			min := rapid.IntRange(1, 4).Draw(t, "min")
			spec.Jobs = append(spec.Jobs, ct.Job{ID: cluster.JobID(i + 1), User: rapid.SampledFrom(users).Draw(t, "user"),
				Min: min, Max: rapid.IntRange(min, 5).Draw(t, "max"), ResReq: genResReq(t)})
		}
		with, _ := decisionsOf(t, ct.Build(spec), false)
		without, _ := decisionsOf(t, ct.Build(spec), true)
		if !reflect.DeepEqual(with, without) {
			t.Fatalf("decisions differ with the cache:\n%v\nwithout:\n%v", with, without)
		}
	})
}

// countingPreparer counts the per-host checks that reach the prepare
// fan-out; it puts every job in one class.
type countingPreparer struct{ calls int }

func (*countingPreparer) Name() string { return "counting" }
func (p *countingPreparer) PrepareHost(*framework.AllocRequest, cluster.HostID) (framework.Reason, int32) {
	p.calls++
	return framework.None, -1
}
func (*countingPreparer) Class(*framework.Job) int32 { return 0 }

// TestUnsatCacheSkipsHosts: three identical jobs that cannot run (two open
// hosts, each with one free slot; 2-slot span[hosts=1] jobs). With the
// cache only the first is tried on hosts, the others take its main reason;
// without it each is tried in full.
func TestUnsatCacheSkipsHosts(t *testing.T) {
	spec := ct.Spec{
		Hosts: []ct.Host{{Name: "a", Slots: 2, Mem: -1}, {Name: "b", Slots: 2, Mem: -1}},
		Jobs: []ct.Job{
			{ID: 1, Min: 2, Running: map[string]int{"a": 1, "b": 1}},
			{ID: 2, Min: 2, ResReq: "span[hosts=1]"}, {ID: 3, Min: 2, ResReq: "span[hosts=1]"}, {ID: 4, Min: 2, ResReq: "span[hosts=1]"},
		},
	}
	calls := map[bool]int{}
	for _, noCache := range []bool{false, true} {
		p := &countingPreparer{}
		s, err := runtime.New(ct.Build(spec), runtime.Options{Registry: plugins.NewInTreeRegistry(), Preparers: []framework.Preparer{p}, NoUnsatCache: noCache})
		if err != nil {
			t.Fatal(err)
		}
		p.calls = 0 // the running job's limits were charged through it
		jobs, err := s.Cycle(context.Background(), 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, j := range jobs {
			if j.State != framework.Pending || j.Reasons.Main != framework.SpanUnsatisfiable {
				t.Fatalf("job %d: %v %v, want PEND SpanUnsatisfiable (2 slots free in all, 1 per host)", j.Spec.ID, j.State, j.Reasons.Main)
			}
		}
		calls[noCache] = p.calls
	}
	if calls[false] == 0 || calls[true] != 3*calls[false] {
		t.Errorf("prepare calls with cache %d, without %d: want 3× as many without", calls[false], calls[true])
	}
}
