package runtime_test

import (
	"context"
	"fmt"
	"math"
	"testing"

	"pgregory.net/rapid"

	"github.com/xce-sched/xce/cluster"
	"github.com/xce-sched/xce/depend"
	"github.com/xce-sched/xce/framework"
	"github.com/xce-sched/xce/framework/plugins"
	"github.com/xce-sched/xce/framework/runtime"
	ct "github.com/xce-sched/xce/internal/clustertest"
	"github.com/xce-sched/xce/sim"
)

// TestPropertyAllFeatures (issue 14): over random traces mixing job
// arrays with caps, a license, limits on a user group and on a host group
// (per user), dependencies on earlier jobs (by ID, array, element
// and name, with every condition and operator), exit codes, exclusive
// jobs, a preemptive queue over the other (suspend or requeue), mem
// reserved per task, host or job, and every policy, over many cycles:
//   - no slot or memory is ever over-committed, suspended jobs' memory
//     included (State.CheckInvariants, bruteCheck, and a count of what
//     the running and suspended jobs hold);
//   - no array ever runs more elements than its cap;
//   - no exclusive job shares a host with another job;
//   - no license or limit is over-committed (limitCheck: a tally of the
//     running jobs);
//   - no GPU device is held by two jobs, and every running job holds as
//     many devices on each host as its ngpus_physical counts (deviceCheck;
//     some hosts have GPUs, some jobs ask for them with -gpu);
//   - no job starts unless its dependency holds on the jobs' states before
//     its cycle (an oracle of this test's own records: a job ended by t
//     when its end is at most t, started before t when its start is),
//     evaluated by depend.Eval;
//   - at the end, every job ran, or pends with a dependency that is not
//     satisfied by then (by the oracle), or with BadRequest.
func TestPropertyAllFeatures(t *testing.T) {
	checkRounds(t, propertyRounds/2, func(t *rapid.T) {
		policies := []cluster.Policy{cluster.PolicyFCFS, cluster.PolicyFirstFit, cluster.PolicyEASY, cluster.PolicyConservative}
		spec := ct.Spec{Queues: []cluster.Queue{
			{Name: "normal", Policy: rapid.SampledFrom(policies).Draw(t, "policy"), Picker: "priority", Exclusive: true,
				PreemptAction: rapid.SampledFrom([]cluster.PreemptAction{cluster.PreemptSuspend, cluster.PreemptRequeue}).Draw(t, "action")},
			{Name: "high", Priority: 10, Policy: rapid.SampledFrom(policies).Draw(t, "high policy"), Picker: "priority", Exclusive: true,
				Preemptive: []cluster.QueueID{0}},
		}}
		spec.MemMethod = rapid.SampledFrom([]cluster.ReserveMethod{cluster.PerTask, cluster.PerHost, cluster.PerJob}).Draw(t, "mem method")
		total := 0
		for i := range rapid.IntRange(1, 3).Draw(t, "hosts") {
			n := rapid.IntRange(1, 4).Draw(t, "slots")
			total += n
			spec.Hosts = append(spec.Hosts, ct.Host{Name: fmt.Sprintf("h%d", i), Slots: n, Mem: float64(rapid.IntRange(2, 8).Draw(t, "mem")),
				GPUs: rapid.IntRange(0, 3).Draw(t, "gpus")})
		}
		// A license pool; user group chem (alice and bob) and host group
		// first (h0); a limit on chem's slots together and one on each
		// user's jobs on the hosts of first.
		lic := rapid.IntRange(1, 2).Draw(t, "lic")
		spec.Shared = []cluster.Shared{{Name: "lic", Total: float64(lic)}}
		spec.UserGroups = []cluster.UserGroup{{Name: "chem", Members: []string{"alice", "bob"}}}
		spec.HostGroups = []cluster.HostGroup{{Name: "first", Members: []string{"h0"}}}
		chemSlots := rapid.IntRange(1, 4).Draw(t, "chem slots")
		firstJobs := rapid.IntRange(1, 2).Draw(t, "first jobs")
		spec.Limits = []cluster.Limit{
			{Name: "chem", Users: cluster.Consumers{Names: []string{"chem"}}, Slots: chemSlots, Jobs: -1},
			{Name: "first", Users: cluster.Consumers{All: true, PerConsumer: true}, Hosts: cluster.Consumers{Names: []string{"first"}}, Slots: -1, Jobs: firstJobs},
		}
		shapes := []string{"", "", "rusage[mem=1]", "span[hosts=1]", "rusage[lic=1]"}
		conds := []string{"done(%s)", "exit(%s)", "exit(%s, >0)", "exit(%s, 2)", "ended(%s)", "started(%s)", "%s"}
		id := cluster.JobID(1)
		for k := range rapid.IntRange(1, 10).Draw(t, "items") {
			rt := int64(rapid.IntRange(1, 20).Draw(t, "runtime"))
			base := ct.Job{Submit: int64(rapid.IntRange(0, 30).Draw(t, "submit")), Min: rapid.IntRange(1, total).Draw(t, "tasks"),
				ResReq: rapid.SampledFrom(shapes).Draw(t, "resreq"), Runtime: rt, Estimate: rt + int64(rapid.IntRange(0, 5).Draw(t, "over")),
				ExitCode: rapid.SampledFrom([]int{0, 0, 2, 3}).Draw(t, "exit code"), Name: rapid.SampledFrom([]string{"", "a", "b"}).Draw(t, "name"),
				Exclusive: rapid.IntRange(0, 3).Draw(t, "exclusive") == 0, Queue: rapid.SampledFrom([]string{"normal", "normal", "high"}).Draw(t, "queue"),
				User: rapid.SampledFrom([]string{"alice", "bob", "carol"}).Draw(t, "user")}
			if rapid.IntRange(0, 2).Draw(t, "gpu") == 0 {
				base.GPU = fmt.Sprintf("num=%d", rapid.IntRange(1, 2).Draw(t, "num"))
			}
			if id > 1 && rapid.Bool().Draw(t, "depends") {
				var terms []string
				for range rapid.IntRange(1, 3).Draw(t, "terms") {
					ref := fmt.Sprint(rapid.IntRange(1, int(id)-1).Draw(t, "ref"))
					if rapid.IntRange(0, 4).Draw(t, "by name") == 0 {
						ref = rapid.SampledFrom([]string{`"a"`, `"b"`}).Draw(t, "ref name")
					}
					term := fmt.Sprintf(rapid.SampledFrom(conds).Draw(t, "cond"), ref)
					if rapid.IntRange(0, 5).Draw(t, "not") == 0 {
						term = "!" + term
					}
					terms = append(terms, term)
				}
				expr := terms[0]
				for _, term := range terms[1:] {
					expr += rapid.SampledFrom([]string{" && ", " || "}).Draw(t, "op") + term
				}
				base.Depend = expr
			}
			n := 1
			if rapid.IntRange(0, 2).Draw(t, "array") == 0 {
				n = rapid.IntRange(1, 5).Draw(t, "elements")
			}
			limit := rapid.IntRange(0, 3).Draw(t, "cap")
			_ = k
			for e := range n {
				j := base
				j.ID = id + cluster.JobID(e)
				if n > 1 {
					j.Array, j.Index, j.ArrayLimit = id, int64(e+1), limit
				}
				spec.Jobs = append(spec.Jobs, j)
			}
			id += cluster.JobID(n)
		}
		c := ct.Build(spec)
		s, err := runtime.New(c, runtime.Options{Registry: plugins.NewInTreeRegistry()})
		if err != nil {
			t.Fatal(err)
		}
		start, end := map[cluster.JobID]int64{}, map[cluster.JobID]int64{}
		code := map[cluster.JobID]int{}
		for i := range c.Jobs {
			code[c.Jobs[i].ID] = c.Jobs[i].ExitCode
		}
		// look is the oracle's view of the jobs before the cycle at now.
		look := func(now int64, self *cluster.Job) depend.Lookup {
			one := func(j *cluster.Job) depend.Job {
				st, started := start[j.ID]
				en, ended := end[j.ID]
				switch {
				case ended && en <= now && code[j.ID] == 0:
					return depend.Job{State: depend.Done, Started: true}
				case ended && en <= now:
					return depend.Job{State: depend.Exit, ExitCode: code[j.ID], Started: true}
				case started && st < now:
					return depend.Job{State: depend.Running, Started: true}
				}
				return depend.Job{State: depend.Pending}
			}
			return func(r depend.Ref) []depend.Job {
				var out []depend.Job
				for i := range c.Jobs {
					j := &c.Jobs[i]
					switch {
					case r.Name != "":
						if j.Name == r.Name && j.User == self.User && j != self {
							out = append(out, one(j))
						}
					case r.Index != 0:
						if j.Array == cluster.JobID(r.ID) && j.ArrayIndex == r.Index {
							out = append(out, one(j))
						}
					case int64(j.ID) == r.ID && j.Array != j.ID, int64(j.Array) == r.ID:
						out = append(out, one(j))
					}
				}
				return out
			}
		}
		cycles := 0
		observe := func(e *sim.Event) {
			if cycles++; cycles > 10_000 {
				for _, j := range s.Jobs {
					t.Logf("job %d %v start %d end %d reasons %v %s depend %v array %d cap %d", j.Spec.ID, j.State, j.Start, j.End, j.Reasons.Main, j.Reasons.Note, j.Spec.Depend, j.Spec.Array, j.Spec.ArrayLimit)
				}
				t.Fatalf("t=%d: more than 10,000 cycles", e.Now)
			}
			for _, j := range e.Ended {
				end[j.Spec.ID] = j.End
			}

			if err := s.State.CheckInvariants(); err != nil {
				t.Fatalf("t=%d: %v", e.Now, err)
			}
			if err := bruteCheck(c, s, e.Now); err != nil {
				dumpJobs(t, s)
				t.Fatalf("after the cycle at %d: %v", e.Now, err)
			}
			if err := heldCheck(c, s); err != nil {
				t.Fatalf("after the cycle at %d: %v", e.Now, err)
			}
			if err := limitCheck(s, lic, chemSlots, firstJobs); err != nil {
				dumpJobs(t, s)
				t.Fatalf("after the cycle at %d: %v", e.Now, err)
			}
			if err := counterCheck(s); err != nil {
				dumpJobs(t, s)
				t.Fatalf("after the cycle at %d: %v", e.Now, err)
			}
			if err := deviceCheck(c, s); err != nil {
				t.Fatalf("after the cycle at %d: %v", e.Now, err)
			}
			running := map[cluster.JobID]int{}
			onHost := map[cluster.HostID][]*framework.Job{}
			for _, j := range s.Jobs {
				if j.State == framework.Running {
					for _, h := range j.Alloc.Hosts {
						onHost[h.Host] = append(onHost[h.Host], j)
					}
				}
			}
			for h, js := range onHost {
				for _, j := range js {
					if j.Spec.Exclusive && len(js) > 1 {
						t.Fatalf("t=%d: exclusive job %d shares host %d with %d other jobs", e.Now, j.Spec.ID, h, len(js)-1)
					}
				}
			}
			for _, j := range s.Jobs {
				if j.State == framework.Running && j.Spec.Array != 0 {
					running[j.Spec.Array]++
					if l := j.Spec.ArrayLimit; l > 0 && running[j.Spec.Array] > l {
						t.Fatalf("t=%d: array %d runs %d elements, over its cap of %d", e.Now, j.Spec.Array, running[j.Spec.Array], l)
					}
				}
			}
			for _, j := range e.Considered {
				if j.State != framework.Running || j.Start != e.Now {
					continue
				}
				if j.Requeues > 0 {
					start[j.Spec.ID] = e.Now
					continue // requeued: it met its dependency when it first started
				}
				if d := j.Spec.Depend; d != nil {
					if got := d.Eval(look(e.Now, j.Spec)); got != depend.Satisfied {
						t.Fatalf("t=%d: job %d started though %s is %d", e.Now, j.Spec.ID, d, got)
					}
				}
				start[j.Spec.ID] = e.Now
			}
			if err := runtime.CheckRunningByEnd(s, e.Now); err != nil {
				t.Fatalf("t=%d: %v", e.Now, err)
			}
			// Jobs this cycle requeued have not started, for the next.
			for _, j := range s.Preempted() {
				if j.State == framework.Pending {
					delete(start, j.Spec.ID)
				}
			}
		}
		if _, err := sim.Run(context.Background(), s, sim.Options{Until: math.MaxInt64, ZeroRuntimeEnds: true, Observe: observe}); err != nil {
			t.Fatal(err)
		}
		last := int64(math.MaxInt64 / 4)
		for _, j := range s.Jobs {
			if j.State == framework.Done || j.Reasons.Main == framework.BadRequest || j.Reasons.Stuck {
				continue
			}
			if d := j.Spec.Depend; d == nil || d.Eval(look(last, j.Spec)) == depend.Satisfied {
				t.Fatalf("job %d did not complete: %v %v (%s)", j.Spec.ID, j.State, j.Reasons.Main, j.Reasons.Note)
			}
		}
	})
}

// heldCheck counts, from the jobs alone, what the running jobs hold and
// what the suspended ones keep (their memory), and checks it against each
// host's slots and mem.
func heldCheck(c *cluster.Cluster, s *runtime.Scheduler) error {
	nres := len(c.Resources)
	slots := make([]int, len(c.Hosts))
	used := make([]float64, len(c.Hosts)*nres)
	for _, j := range s.Jobs {
		var a *cluster.JobAlloc
		switch j.State {
		case framework.Running:
			a = j.Alloc
		case framework.Suspended:
			a = j.Held
			if a == nil {
				continue
			}
			for _, h := range a.Hosts {
				if h.Slots != 0 {
					return fmt.Errorf("suspended job %d keeps %d slots on host %d", j.Spec.ID, h.Slots, h.Host)
				}
			}
		default:
			continue
		}
		for _, h := range a.Hosts {
			slots[h.Host] += h.Slots
			for _, r := range h.Res {
				used[int(h.Host)*nres+int(r.Res)] += r.Amount
			}
		}
	}
	for h := range c.Hosts {
		if slots[h] > c.Hosts[h].Slots {
			return fmt.Errorf("host %s: %d slots held, of %d", c.Hosts[h].Name, slots[h], c.Hosts[h].Slots)
		}
		for r, name := range c.Resources {
			if u, capacity := used[h*nres+r], c.Hosts[h].Capacity[r]; u > capacity+1e-9 {
				return fmt.Errorf("host %s: %v %s held, of %v", c.Hosts[h].Name, u, name, capacity)
			}
		}
	}
	return nil
}

// dumpJobs logs every job's state, for a failure's diagnosis.
func dumpJobs(t *rapid.T, s *runtime.Scheduler) {
	for _, j := range s.Jobs {
		var res any
		if j.Reserved != nil {
			res = *j.Reserved.Alloc
		}
		t.Logf("job %d queue %d %v submit %d start %d end %d est %d suspended %d alloc %v reserved %+v on %v cycle %d preemptions %d reason %v",
			j.Spec.ID, j.Spec.Queue, j.State, j.Spec.Submit, j.Start, j.End, j.Spec.Estimate, j.SuspendedFor, j.Alloc, j.Reserved, res, j.Cycle, j.Preemptions, j.Reasons.Main)
	}
}

// counterCheck checks that every counter of the state (limits, and the
// exclusive preparer's) counts exactly what the running jobs' allocations
// charge it: a counter left charged by a job that no longer runs would
// hold jobs back for ever.
func counterCheck(s *runtime.Scheduler) error {
	used := make([]float64, s.State.NumCounters())
	for _, j := range s.Jobs {
		if j.State != framework.Running {
			continue
		}
		for _, h := range j.Alloc.Hosts {
			for _, c := range h.Counters {
				used[c.Counter] += c.Amount
			}
		}
	}
	for id, u := range used {
		if got := s.State.Counter(cluster.CounterID(id)).Used; got != u {
			return fmt.Errorf("counter %d counts %v, the running jobs charge it %v", id, got, u)
		}
	}
	return nil
}

// limitCheck tallies, from the running jobs alone, the license pool (lic
// in all), the slots of user group chem (alice and bob together, at most
// chemSlots) and each user's jobs on host h0 (host group first, at most
// firstJobs); a suspended job holds none of them.
func limitCheck(s *runtime.Scheduler, lic, chemSlots, firstJobs int) error {
	lics, chem := 0.0, 0
	onFirst := map[string]int{}
	for _, j := range s.Jobs {
		if j.State != framework.Running {
			continue
		}
		for _, sh := range j.Alloc.Shared {
			lics += sh.Amount
		}
		if u := j.Spec.User; u == "alice" || u == "bob" {
			chem += j.Alloc.Slots()
		}
		for _, h := range j.Alloc.Hosts {
			if h.Host == 0 {
				onFirst[j.Spec.User]++
			}
		}
	}
	if lics > float64(lic) {
		return fmt.Errorf("running jobs hold %v licenses of %d", lics, lic)
	}
	if chem > chemSlots {
		return fmt.Errorf("user group chem runs %d slots, over its limit of %d", chem, chemSlots)
	}
	for u, n := range onFirst {
		if n > firstJobs {
			return fmt.Errorf("user %s runs %d jobs on host group first, over the limit of %d", u, n, firstJobs)
		}
	}
	return nil
}
