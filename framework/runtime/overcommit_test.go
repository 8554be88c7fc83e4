package runtime_test

import (
	"context"
	"fmt"
	"math"
	"slices"
	"testing"

	"pgregory.net/rapid"

	"github.com/xce-sched/xce/cluster"
	"github.com/xce-sched/xce/framework"
	"github.com/xce-sched/xce/framework/plugins"
	"github.com/xce-sched/xce/framework/runtime"
	ct "github.com/xce-sched/xce/internal/clustertest"
	"github.com/xce-sched/xce/sim"
)

// tallyShape is a resource requirement of the multi-cycle property with
// what it reserves, written down by hand: mem per slot (MB) and licenses
// per job. Compound requests reserve per term; their per-host amounts are
// taken from the allocation and only bounded here (mem at most the
// largest per-slot amount of a term).
type tallyShape struct {
	rr       string
	mem, lic float64
	compound bool
}

var tallyShapes = []tallyShape{
	{rr: ""},
	{rr: "rusage[mem=1]", mem: 1},
	{rr: "rusage[mem=2] span[ptile=2]", mem: 2},
	{rr: "rusage[lic=1]", lic: 1},
	{rr: "rusage[mem=1:lic=2] span[hosts=1]", mem: 1, lic: 2},
	{rr: "span[ptile=1]"},
	{rr: "1*{rusage[mem=2]} + {rusage[lic=1]}", mem: 2, lic: 1, compound: true},
}

// genConsumers draws one consumer dimension of a limit over names.
func genConsumers(t *rapid.T, label string, names []string) cluster.Consumers {
	switch rapid.IntRange(-3, 4).Draw(t, label) { // unset half of the time
	case 1:
		return cluster.Consumers{Names: []string{rapid.SampledFrom(names).Draw(t, label+" name")}}
	case 2:
		return cluster.Consumers{All: true}
	case 3:
		return cluster.Consumers{All: true, PerConsumer: true}
	case 4:
		return cluster.Consumers{Names: names[:rapid.IntRange(1, len(names)).Draw(t, label+" names")], PerConsumer: true}
	}
	return cluster.Consumers{} // unset: every consumer, one instance
}

// genLimitRun draws a cluster with mem, one license, one or two queues
// under the given policies, limits of every form, and a trace with any
// estimates and, sometimes, a job running in the snapshot.
func genLimitRun(t *rapid.T, policies []cluster.Policy) (ct.Spec, map[cluster.JobID]tallyShape) {
	spec := ct.Spec{Shared: []cluster.Shared{{Name: "lic", Total: float64(rapid.IntRange(0, 3).Draw(t, "lic"))}}, MemMethod: cluster.PerTask}
	var hosts []string
	total := 0
	for i := range 4 - rapid.IntRange(0, 3).Draw(t, "hosts short of 4") {
		n := rapid.IntRange(1, 4).Draw(t, "slots")
		total += n
		hosts = append(hosts, fmt.Sprintf("h%d", i))
		spec.Hosts = append(spec.Hosts, ct.Host{Name: hosts[i], Slots: n, Mem: float64(rapid.IntRange(-1, 8).Draw(t, "mem"))})
	}
	queues := []string{"q0", "q1"}[:len(policies)]
	for i, p := range policies {
		spec.Queues = append(spec.Queues, cluster.Queue{Name: queues[i], Policy: p, Picker: "priority", Priority: rapid.IntRange(0, 1).Draw(t, "queue priority")})
	}
	users, projects := []string{"u0", "u1", "u2"}, []string{"p0", "p1"}
	// Groups, nested, which limits may name (docs/limits.md): ug1 holds
	// ug0 and a user, hg1 holds hg0 and a host.
	userNames, hostNames := users, hosts
	if rapid.Bool().Draw(t, "groups") {
		ug0 := rapid.SliceOfNDistinct(rapid.SampledFrom(users), 1, 2, rapid.ID[string]).Draw(t, "ug0")
		hg0 := rapid.SliceOfNDistinct(rapid.SampledFrom(hosts), 1, 2, rapid.ID[string]).Draw(t, "hg0")
		spec.UserGroups = []cluster.UserGroup{{Name: "ug0", Members: ug0}, {Name: "ug1", Members: []string{"ug0", rapid.SampledFrom(users).Draw(t, "ug1 user")}}}
		spec.HostGroups = []cluster.HostGroup{{Name: "hg0", Members: hg0}, {Name: "hg1", Members: []string{"hg0", rapid.SampledFrom(hosts).Draw(t, "hg1 host")}}}
		userNames = []string{"ug0", "ug1", "u0", "u1", "u2"}
		hostNames = append([]string{"hg0", "hg1"}, hosts...)
	}
	for i := range rapid.IntRange(1, 3).Draw(t, "limits") {
		l := cluster.Limit{Name: fmt.Sprintf("L%d", i), Slots: -1, Jobs: -1,
			Users: genConsumers(t, "users", userNames), Queues: genConsumers(t, "queues", queues),
			Projects: genConsumers(t, "projects", projects), Hosts: genConsumers(t, "hosts", hostNames)}
		for k := range rapid.IntRange(1, 3).Draw(t, "limited") {
			switch rapid.IntRange(0, 3).Draw(t, fmt.Sprint("resource ", k)) {
			case 0:
				l.Slots = rapid.IntRange(0, 6).Draw(t, "max slots")
			case 1:
				l.Jobs = rapid.IntRange(0, 3).Draw(t, "max jobs")
			case 2:
				l.Resources = append(l.Resources, cluster.LimitResource{Name: "mem", Max: float64(rapid.IntRange(0, 8).Draw(t, "max mem"))})
			case 3:
				if !l.Hosts.Set() { // a license counts once per job: no host dimension
					l.Resources = append(l.Resources, cluster.LimitResource{Name: "lic", Max: float64(rapid.IntRange(0, 2).Draw(t, "max lic"))})
				}
			}
		}
		spec.Limits = append(spec.Limits, l)
	}
	shapes := map[cluster.JobID]tallyShape{}
	for i := range rapid.IntRange(1, 10).Draw(t, "jobs") {
		sh := rapid.SampledFrom(tallyShapes).Draw(t, "shape")
		// Small times, so that submissions often fall on other jobs'
		// estimated ends (where reservations start).
		rt := int64(rapid.IntRange(1, 12).Draw(t, "runtime"))
		j := ct.Job{ID: cluster.JobID(i + 1), User: rapid.SampledFrom(users).Draw(t, "user"), Project: rapid.SampledFrom(projects).Draw(t, "project"),
			Queue: rapid.SampledFrom(queues).Draw(t, "queue"), Submit: int64(rapid.IntRange(0, 12).Draw(t, "submit")),
			Min: total - rapid.IntRange(0, total-1).Draw(t, "tasks short of all"), ResReq: sh.rr, Runtime: rt,
			Estimate: int64(rapid.IntRange(1, 15).Draw(t, "estimate"))}
		if i == 0 && !sh.compound && rapid.IntRange(0, 3).Draw(t, "not running") < 3 {
			// A job of the snapshot, on its first host.
			j.Min, j.Running = 1, map[string]int{hosts[0]: 1}
		}
		if i > 0 && rapid.Bool().Draw(t, "submit at an estimated end") {
			// Where a reservation may start: another job's estimated end
			// (if it started on submission).
			k := spec.Jobs[rapid.IntRange(0, i-1).Draw(t, "after job")]
			j.Submit = k.Submit + k.Estimate
		}
		shapes[j.ID] = sh
		spec.Jobs = append(spec.Jobs, j)
	}
	return spec, shapes
}

// tally checks the running jobs against every host, the license and every
// limit instance, written from docs/limits.md without the scheduler's
// state or limit counters: per host, slots and mem; the license; per limit
// instance (the consumers it is per, and the host for a per-host limit),
// slots and mem on the limit's hosts, jobs (once per job, or once per
// host for a per-host limit) and licenses once per job.
func tally(c *cluster.Cluster, s *runtime.Scheduler, shapes map[cluster.JobID]tallyShape) error {
	slots := make([]int, len(c.Hosts))
	mem := make([]float64, len(c.Hosts))
	lic := 0.0
	type inst struct {
		limit                  int
		user, queue, proj, hst string
	}
	type use struct{ slots, jobs, mem, lic float64 }
	usage := map[inst]*use{}
	// members lists what each group stands for, subgroups expanded by hand.
	members := map[string][]string{}
	var expand func(groups map[string][]string, name string) []string
	expand = func(groups map[string][]string, name string) []string {
		ms, isGroup := groups[name]
		if !isGroup {
			return []string{name}
		}
		var out []string
		for _, m := range ms {
			out = append(out, expand(groups, m)...)
		}
		return out
	}
	ug, hg := map[string][]string{}, map[string][]string{}
	for _, g := range c.UserGroups {
		ug[g.Name] = g.Members
	}
	for _, g := range c.HostGroups {
		hg[g.Name] = g.Members
	}
	for name := range ug {
		members[name] = expand(ug, name)
	}
	for name := range hg {
		members[name] = expand(hg, name)
	}
	in := func(cs cluster.Consumers, name string) bool {
		if !cs.Set() || cs.All {
			return true
		}
		for _, n := range cs.Names {
			if n == name || slices.Contains(members[n], name) {
				return true
			}
		}
		return false
	}
	per := func(cs cluster.Consumers, name string) string {
		if cs.PerConsumer {
			return name
		}
		return ""
	}
	for _, j := range s.Jobs {
		if j.State != framework.Running {
			continue
		}
		sh := shapes[j.Spec.ID]
		jobLic := 0.0
		for _, x := range j.Alloc.Shared {
			jobLic += x.Amount
		}
		if j.Spec.RunningOn == nil && !sh.compound && math.Abs(jobLic-sh.lic) > 1e-9 {
			return fmt.Errorf("job %d holds %v lic, its request %v", j.Spec.ID, jobLic, sh.lic)
		}
		lic += jobLic
		queue := c.Queues[j.Spec.Queue].Name
		for _, ha := range j.Alloc.Hosts {
			m := 0.0
			for _, r := range ha.Res {
				m += r.Amount
			}
			want := sh.mem * float64(ha.Slots)
			if !sh.compound && math.Abs(m-want) > 1e-9 || sh.compound && m > want+1e-9 {
				return fmt.Errorf("job %d holds %v mem on %s for %d slots of %q", j.Spec.ID, m, c.Hosts[ha.Host].Name, ha.Slots, sh.rr)
			}
			slots[ha.Host] += ha.Slots
			mem[ha.Host] += m
		}
		for li, l := range c.Limits {
			if !in(l.Users, j.Spec.User) || !in(l.Queues, queue) || !in(l.Projects, j.Spec.Project) {
				continue
			}
			k := inst{limit: li, user: per(l.Users, j.Spec.User), queue: per(l.Queues, queue), proj: per(l.Projects, j.Spec.Project)}
			counted := false
			for _, ha := range j.Alloc.Hosts {
				name := c.Hosts[ha.Host].Name
				if !in(l.Hosts, name) {
					continue
				}
				hk := k
				hk.hst = per(l.Hosts, name)
				u := usage[hk]
				if u == nil {
					u = &use{}
					usage[hk] = u
				}
				u.slots += float64(ha.Slots)
				for _, r := range ha.Res {
					u.mem += r.Amount
				}
				if !counted || l.Hosts.PerConsumer {
					u.jobs++
				}
				if !counted {
					u.lic += jobLic
				}
				counted = true
			}
		}
	}
	for h, host := range c.Hosts {
		if slots[h] > host.Slots {
			return fmt.Errorf("host %s: %d slots of %d", host.Name, slots[h], host.Slots)
		}
		capMem := math.NaN() // no mem
		if len(host.Capacity) > 0 {
			capMem = host.Capacity[0]
		}
		if mem[h] > 0 && !(mem[h] <= capMem+1e-9) {
			return fmt.Errorf("host %s: %v mem of %v", host.Name, mem[h], capMem)
		}
	}
	if lic > c.Shared[0].Total+1e-9 {
		return fmt.Errorf("lic: %v of %v", lic, c.Shared[0].Total)
	}
	for k, u := range usage {
		l := c.Limits[k.limit]
		over := l.Slots >= 0 && u.slots > float64(l.Slots) || l.Jobs >= 0 && u.jobs > float64(l.Jobs)
		for _, r := range l.Resources {
			v := u.mem
			if r.Name == "lic" {
				v = u.lic
			}
			over = over || v > r.Max+1e-9
		}
		if over {
			return fmt.Errorf("limit %s instance %+v: %+v", l.Name, k, *u)
		}
	}
	return nil
}

// TestPropertyLimitsMultiCycle: over random multi-cycle runs under every
// policy (and two queues under two policies), with limits of every form
// (naming nested user and host groups too),
// host mem and a license, and any estimates, no host, license or limit
// instance is ever over-committed at any event time, by an independent
// tally. A snapshot that is over a limit from the start (accepted: the
// limit may have been lowered) is skipped.
func TestPropertyLimitsMultiCycle(t *testing.T) {
	all := []cluster.Policy{cluster.PolicyFCFS, cluster.PolicyFirstFit, cluster.PolicyEASY, cluster.PolicyConservative}
	// 5,000 cases: the over-commits this property is after need an overrun,
	// a reservation across hosts and an event at its start to coincide.
	checkRounds(t, 2*propertyRounds+10, func(t *rapid.T) {
		// Backfilling plans across cycles: drawn more often.
		all := append(all, cluster.PolicyEASY, cluster.PolicyConservative, cluster.PolicyConservative)
		policies := []cluster.Policy{rapid.SampledFrom(all).Draw(t, "policy")}
		if rapid.IntRange(0, 3).Draw(t, "two queues") == 0 {
			policies = append(policies, rapid.SampledFrom(all).Draw(t, "second policy"))
		}
		spec, shapes := genLimitRun(t, policies)
		c := ct.Build(spec)
		s, err := runtime.New(c, runtime.Options{Registry: plugins.NewInTreeRegistry()})
		if err != nil {
			t.Skip("snapshot over-commits a host:", err)
		}
		if err := tally(c, s, shapes); err != nil {
			t.Skip("snapshot over a limit:", err)
		}
		observe := func(e *sim.Event) {
			if err := tally(c, s, shapes); err != nil {
				t.Fatalf("t=%d: %v", e.Now, err)
			}
		}
		if _, err := sim.Run(context.Background(), s, sim.Options{Until: math.MaxInt64, ZeroRuntimeEnds: true, Observe: observe}); err != nil {
			t.Fatal(err)
		}
	})
}

// TestLimitOverReservedStart is the multi-cycle over-commit the issue
// found: job 17, reserved for t = 41 on a×1 + b×3 under limit L (5
// slots), must not start while job 7 (past its 30 s estimate) and job 14
// still hold 2 of L's slots; it starts when job 7 ends at 111. Job 22
// fits a host at 41 but would take L over once job 17 starts: it pends.
func TestLimitOverReservedStart(t *testing.T) {
	spec := ct.Spec{
		Hosts:  []ct.Host{{Name: "a", Slots: 2, Mem: -1}, {Name: "b", Slots: 4, Mem: -1}},
		Queues: []cluster.Queue{{Name: "normal", Policy: cluster.PolicyConservative, Picker: "priority"}},
		Limits: []cluster.Limit{{Name: "L", Slots: 5, Jobs: -1}},
		Jobs: []ct.Job{
			{ID: 7, Submit: 11, Min: 1, Runtime: 100, Estimate: 30},
			{ID: 14, Min: 1, Running: map[string]int{"b": 1}},
			{ID: 17, Submit: 11, Min: 4},
			{ID: 22, Submit: 41, Min: 1},
		},
	}
	for _, tc := range []struct {
		until int64
		want  []string
	}{
		{41, []string{"RUN@11 a*1", "RUN@0 b*1", "PEND LimitReached reserved@42 b*3 a*1", "PEND Priority"}},
		{300, []string{"DONE@11-111", "RUN@0 b*1", "RUN@111 b*3 a*1", "PEND LimitReached"}},
	} {
		c, s := runPolicy(t, spec, cluster.PolicyConservative, tc.until)
		for i, j := range s.Jobs {
			if got := state(c, j); got != tc.want[i] {
				t.Errorf("until %d: job %d: %s, want %s", tc.until, j.Spec.ID, got, tc.want[i])
			}
		}
		for k := range s.State.NumCounters() {
			if ctr := s.State.Counter(cluster.CounterID(k)); ctr.Used > ctr.Max {
				t.Errorf("until %d: limit counter %d: %v of %v", tc.until, k, ctr.Used, ctr.Max)
			}
		}
	}
}

// TestReservationsAcrossQueues: conservative reservations next to a queue
// under another policy, worked by hand on one host of 4 slots.
//
//   - A firstfit queue of higher priority starts job 4 (3 slots, 10–50)
//     at t = 10, over job 3's kept reservation (4 slots at 20–30): in the
//     same cycle job 3 is re-planned to 50, and job 5 (1 slot, 5 s),
//     arriving then, is reserved at 20, when job 2 frees its slot, which
//     stays free until 50; it runs 20–25.
//   - A firstfit queue of lower priority respects the conservative queue's
//     reservation: job 3 (1 slot, 100 s) would delay job 2 (4 slots at
//     10–20), so it waits, with Priority, and starts at 20.
func TestReservationsAcrossQueues(t *testing.T) {
	h0 := []ct.Host{{Name: "h0", Slots: 4, Mem: -1}}
	hiFirst := ct.Spec{Hosts: h0,
		Queues: []cluster.Queue{{Name: "hi", Priority: 100, Policy: cluster.PolicyFirstFit, Picker: "priority"},
			{Name: "cons", Policy: cluster.PolicyConservative, Picker: "priority"}},
		Jobs: []ct.Job{
			{ID: 1, Queue: "hi", Min: 3, Running: map[string]int{"h0": 3}, Runtime: 10, Estimate: 10},
			{ID: 2, Queue: "cons", Min: 1, Running: map[string]int{"h0": 1}, Runtime: 20, Estimate: 20},
			{ID: 3, Queue: "cons", Min: 4, Runtime: 10, Estimate: 10},
			{ID: 4, Queue: "hi", Submit: 10, Min: 3, Runtime: 40, Estimate: 40},
			{ID: 5, Queue: "cons", Submit: 10, Min: 1, Runtime: 5, Estimate: 5},
		}}
	consFirst := ct.Spec{Hosts: h0,
		Queues: []cluster.Queue{{Name: "cons", Priority: 100, Policy: cluster.PolicyConservative, Picker: "priority"},
			{Name: "low", Policy: cluster.PolicyFirstFit, Picker: "priority"}},
		Jobs: []ct.Job{
			{ID: 1, Queue: "cons", Min: 2, Running: map[string]int{"h0": 2}, Runtime: 10, Estimate: 10},
			{ID: 2, Queue: "cons", Min: 4, Runtime: 10, Estimate: 10},
			{ID: 3, Queue: "low", Min: 1, Runtime: 100, Estimate: 100},
		}}
	for _, tc := range []struct {
		name  string
		spec  ct.Spec
		until int64
		want  []string
	}{
		{"higher firstfit, t=10", hiFirst, 10, []string{"DONE@0-10", "RUN@0 h0*1", "PEND NotEnoughSlots reserved@50 h0*4", "RUN@10 h0*3", "PEND NotEnoughSlots reserved@20 h0*1"}},
		{"higher firstfit, to the end", hiFirst, 1000, []string{"DONE@0-10", "DONE@0-20", "DONE@50-60", "DONE@10-50", "DONE@20-25"}},
		{"lower firstfit, t=0", consFirst, 0, []string{"RUN@0 h0*2", "PEND NotEnoughSlots reserved@10 h0*4", "PEND Priority"}},
		{"lower firstfit, to the end", consFirst, 1000, []string{"DONE@0-10", "DONE@10-20", "DONE@20-120"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, s := runQueues(t, tc.spec, tc.until)
			for i, j := range s.Jobs {
				if got := state(c, j); got != tc.want[i] {
					t.Errorf("job %d: %s, want %s", j.Spec.ID, got, tc.want[i])
				}
			}
		})
	}
}
