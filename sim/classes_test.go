package sim_test

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/xce-sched/xce/cluster"
	"github.com/xce-sched/xce/framework"
	"github.com/xce-sched/xce/framework/plugins"
	"github.com/xce-sched/xce/framework/runtime"
	ct "github.com/xce-sched/xce/internal/clustertest"
	"github.com/xce-sched/xce/sim"
)

// genClassCluster draws a cluster of runs of alike hosts (mostly of one
// slot, which HostClasses makes classes of) and other hosts, one or two
// queues, maybe a per-user slot limit, a license pool, and jobs whose
// requests do not tell members apart (select[], order[] and same[] on
// static attributes, rusage[] of mem and the license, span[]).
func genClassCluster(t *rapid.T, policies []cluster.Policy) ct.Spec {
	spec := ct.Spec{
		Shared:    []cluster.Shared{{Name: "lic", Total: float64(rapid.IntRange(0, 3).Draw(t, "lic"))}},
		MemMethod: rapid.SampledFrom([]cluster.ReserveMethod{cluster.PerHost, cluster.PerTask, cluster.PerJob}).Draw(t, "memMethod"),
	}
	for r := range rapid.IntRange(1, 4).Draw(t, "runs") {
		n := rapid.IntRange(1, 6).Draw(t, "runLen")
		slots := 1
		if rapid.IntRange(0, 3).Draw(t, "multi") == 0 {
			slots = rapid.IntRange(2, 4).Draw(t, "slots")
		}
		typ := rapid.SampledFrom([]string{"A", "B"}).Draw(t, "type")
		mem := float64(rapid.IntRange(0, 3).Draw(t, "mem"))
		status := cluster.HostOK
		if rapid.IntRange(0, 7).Draw(t, "closed") == 0 {
			status = cluster.HostClosed
		}
		for i := range n {
			spec.Hosts = append(spec.Hosts, ct.Host{Name: fmt.Sprintf("r%dh%d", r, i), Slots: slots, Mem: mem, Type: typ, Status: status})
		}
	}
	spec.Queues = []cluster.Queue{{Name: "normal", Priority: 1, Policy: rapid.SampledFrom(policies).Draw(t, "policy")}}
	if rapid.Bool().Draw(t, "twoQueues") {
		// A host list in host order: the first hosts.
		var hs []cluster.HostID
		for h := range rapid.IntRange(1, len(spec.Hosts)).Draw(t, "queueHosts") {
			hs = append(hs, cluster.HostID(h))
		}
		// At most one queue plans reservations: a second one plans on a
		// busy-first order that the per-host run computes once a cycle
		// and a host class from the hosts idle when it plans
		// (docs/host-classes.md).
		second := policies
		if spec.Queues[0].Policy == cluster.PolicyEASY {
			second = slices.DeleteFunc(slices.Clone(policies), func(p cluster.Policy) bool { return p == cluster.PolicyEASY })
		}
		spec.Queues = append(spec.Queues, cluster.Queue{Name: "short", Priority: 2, Policy: rapid.SampledFrom(second).Draw(t, "policy2"), Hosts: hs})
	}
	if rapid.Bool().Draw(t, "limit") {
		spec.Limits = []cluster.Limit{{Name: "peruser", Users: cluster.Consumers{All: true, PerConsumer: true}, Slots: rapid.IntRange(1, 6).Draw(t, "limitSlots"), Jobs: -1}}
	}
	reqs := []string{
		"", "", "select[type==A]", "select[maxmem>=2]", "rusage[mem=1]", "rusage[mem=2]", "rusage[lic=1]",
		"span[hosts=1]", "span[ptile=1]", "span[ptile=2]", "same[type]", "order[-maxmem]", "order[type]",
		"rusage[mem=1] span[ptile=1]", "select[type==B] rusage[lic=1] span[hosts=1]",
		"2*{select[type==A]} + {rusage[mem=1]}", "{span[hosts=1]} || {span[ptile=1]}", "{select[type==A]} || {select[type==B] rusage[mem=1]}",
	}
	for i := range rapid.IntRange(1, 25).Draw(t, "jobs") {
		run := int64(rapid.IntRange(0, 30).Draw(t, "runtime"))
		min := rapid.IntRange(1, 6).Draw(t, "tasks")
		j := ct.Job{
			ID: cluster.JobID(i + 1), User: fmt.Sprintf("u%d", rapid.IntRange(0, 2).Draw(t, "user")),
			Submit: int64(rapid.IntRange(0, 40).Draw(t, "submit")), Min: min, Max: min + rapid.IntRange(0, 2).Draw(t, "range"),
			ResReq: rapid.SampledFrom(reqs).Draw(t, "resreq"), Runtime: run, Estimate: run + int64(rapid.IntRange(0, 10).Draw(t, "slack")),
			Queue: spec.Queues[rapid.IntRange(0, len(spec.Queues)-1).Draw(t, "queue")].Name,
		}
		if strings.Contains(j.ResReq, "{") {
			j.Max = j.Min // a compound request has a fixed task count
		}
		spec.Jobs = append(spec.Jobs, j)
	}
	return spec
}

// cycleLog replays c to its end and returns, for every cycle, every job's
// state, start and pending reasons, one line each, and the scheduler.
func cycleLog(t *rapid.T, c *cluster.Cluster, perEvent bool) ([]string, *runtime.Scheduler) {
	s, err := runtime.New(c, runtime.Options{Registry: plugins.NewInTreeRegistry()})
	if err != nil {
		t.Fatal(err)
	}
	var log []string
	observe := func(e *sim.Event) {
		if err := s.State.CheckInvariants(); err != nil {
			t.Fatalf("t=%d: %v", e.Now, err)
		}
		for _, j := range s.Jobs {
			r := &j.Reasons
			line := fmt.Sprintf("t=%d job %d %v start %d", e.Now, j.Spec.ID, j.State, j.Start)
			if j.State == framework.Pending {
				line += fmt.Sprintf(" reason %v/%d stuck %v %q hosts %v shared %v", r.Main, r.Detail, r.Stuck, r.Note, r.Hosts, r.Shared)
			}
			log = append(log, line)
		}
	}
	if _, err := sim.Run(context.Background(), s, sim.Options{Until: math.MaxInt64, ZeroRuntimeEnds: true, Observe: observe, PerEvent: perEvent}); err != nil {
		t.Fatal(err)
	}
	return log, s
}

// TestPropertyHostClasses: with the alike single-slot hosts made host
// classes (Cluster.HostClasses), fcfs, firstfit and EASY decide exactly
// as with every host its own entry: in every cycle every job has the same
// state, start time and pending reasons, host counts included (the
// per-host run is the oracle).
func TestPropertyHostClasses(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		spec := genClassCluster(t, []cluster.Policy{cluster.PolicyFCFS, cluster.PolicyFirstFit, cluster.PolicyEASY})
		perHost := ct.Build(spec)
		classed, n, err := perHost.HostClasses()
		if err != nil {
			t.Fatal(err)
		}
		if n > 0 && classed.NumHosts() != len(perHost.Hosts) {
			t.Fatalf("%d hosts in %d entries (%d classes), want %d", classed.NumHosts(), len(classed.Hosts), n, len(perHost.Hosts))
		}
		perEvent := rapid.Bool().Draw(t, "perEvent")
		want, _ := cycleLog(t, perHost, perEvent)
		got, _ := cycleLog(t, classed, perEvent)
		for i := range min(len(want), len(got)) {
			if want[i] != got[i] {
				t.Fatalf("%d classes: line %d:\n got %s\nwant %s", n, i, got[i], want[i])
			}
		}
		if len(want) != len(got) {
			t.Fatalf("%d lines, want %d", len(got), len(want))
		}
	})
}

// TestPropertyHostClassesConservative: under conservative backfilling a
// reservation on a class is a count of members, so decisions may differ
// from the per-host run (on purpose: no reservation holds particular
// hosts); nothing is ever over-committed, and every job that starts
// ends. (A job may pend for good: one that waits for a closed host, or
// whose compound terms no placement satisfies, which the idle-cluster
// analysis does not always see.)
func TestPropertyHostClassesConservative(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		spec := genClassCluster(t, []cluster.Policy{cluster.PolicyConservative})
		classed, _, err := ct.Build(spec).HostClasses()
		if err != nil {
			t.Fatal(err)
		}
		_, s := cycleLog(t, classed, rapid.Bool().Draw(t, "perEvent")) // checks the state's invariants every cycle
		for _, j := range s.Jobs {
			if j.State == framework.Running || j.State == framework.Suspended {
				t.Fatalf("job %d still %v when no event is left", j.Spec.ID, j.State)
			}
		}
	})
}

// TestHostClassesFormed pins which hosts HostClasses groups: runs of
// consecutive alike single-slot hosts, split by type, memory, status and
// queue host lists; multi-slot hosts stay alone.
func TestHostClassesFormed(t *testing.T) {
	h := func(name string, slots int, mem float64, typ string) ct.Host {
		return ct.Host{Name: name, Slots: slots, Mem: mem, Type: typ}
	}
	spec := ct.Spec{
		Hosts: []ct.Host{h("a1", 1, 4, "A"), h("a2", 1, 4, "A"), h("a3", 1, 4, "A"), h("b1", 1, 4, "B"),
			h("m1", 2, 4, "A"), h("a4", 1, 4, "A"), h("a5", 1, 4, "A"), h("c1", 1, 8, "A"), h("c2", 1, 8, "A"), h("c3", 1, 8, "A")},
		Queues: []cluster.Queue{{Name: "normal", Policy: cluster.PolicyFCFS}, {Name: "part", Policy: cluster.PolicyFCFS, Hosts: []cluster.HostID{7, 8}}},
	}
	c, n, err := ct.Build(spec).HostClasses()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range c.Hosts {
		got = append(got, fmt.Sprintf("%s/%d", e.Name, e.NumHosts()))
	}
	want := []string{"a1..a3/3", "b1/1", "m1/1", "a4..a5/2", "c1..c2/2", "c3/1"}
	if n != 3 || !slices.Equal(got, want) {
		t.Fatalf("%d classes %v, want 3 %v", n, got, want)
	}
	if q := c.Queues[1].Hosts; !slices.Equal(q, []cluster.HostID{4}) {
		t.Fatalf("queue part's hosts %v, want [4] (c1..c2)", q)
	}
	if c.NumHosts() != 10 {
		t.Fatalf("NumHosts %d, want 10", c.NumHosts())
	}
	// What tells members apart keeps every host its own entry.
	for _, tc := range []struct {
		name string
		edit func(s *ct.Spec)
	}{
		{"a request on hname", func(s *ct.Spec) { s.Jobs = []ct.Job{{ID: 1, Min: 1, ResReq: "select[hname==a1]"}} }},
		{"a request on free slots", func(s *ct.Spec) { s.Jobs = []ct.Job{{ID: 1, Min: 1, ResReq: "select[slots>0]"}} }},
		{"a request on free mem", func(s *ct.Spec) { s.Jobs = []ct.Job{{ID: 1, Min: 1, ResReq: "order[mem]"}} }},
		{"same[hname]", func(s *ct.Spec) { s.Jobs = []ct.Job{{ID: 1, Min: 1, ResReq: "same[hname]"}} }},
		{"an exclusive job", func(s *ct.Spec) { s.Jobs = []ct.Job{{ID: 1, Min: 1, Exclusive: true}} }},
		{"a running job", func(s *ct.Spec) { s.Jobs = []ct.Job{{ID: 1, Min: 1, Running: map[string]int{"a1": 1}, Start: 0}} }},
		{"a per-host limit", func(s *ct.Spec) {
			s.Limits = []cluster.Limit{{Name: "l", Hosts: cluster.Consumers{All: true, PerConsumer: true}, Slots: 1, Jobs: -1}}
		}},
		{"a preemptive queue", func(s *ct.Spec) { s.Queues[1].Preemptive = []cluster.QueueID{0}; s.Queues[1].Priority = 9 }},
		{"a queue host list out of order", func(s *ct.Spec) { s.Queues[1].Hosts = []cluster.HostID{8, 7} }},
	} {
		s := spec
		s.Queues = slices.Clone(spec.Queues)
		s.Queues[1].Hosts = slices.Clone(spec.Queues[1].Hosts)
		tc.edit(&s)
		base := ct.Build(s)
		c, n, err := base.HostClasses()
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if n != 0 || c != base {
			t.Errorf("%s: %d classes, want none", tc.name, n)
		}
	}
}
