package runtime_test

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/xce-sched/xce/cluster"
	"github.com/xce-sched/xce/framework"
	ct "github.com/xce-sched/xce/internal/clustertest"
)

// The brute-force oracle of issue 29: on random small clusters (up to 4
// hosts of up to 4 slots, with and without mem, two types, some closed, an
// exclusive queue under each policy, jobs already running, some of them
// exclusive) and random pending jobs (simple or compound requests with
// select[], rusage[mem] and span[], exclusive or not, some waiting on a
// job that has not ended), one cycle's decisions are checked against
// every assignment of hosts to the jobs' terms:
//
//   - "can it ever run": a job pends BadRequest only if no assignment fits
//     the idle cluster with every host open (sound), and, for a simple
//     request or compound terms on single-slot hosts, where the
//     analysis's checks are complete, whenever none does (exact);
//   - the dependency gate: a job whose dependency is not met never starts,
//     and pends with Dependency unless it can never run (BadRequest, rule
//     1 of docs/pending-reasons.md);
//   - placement: every start is a valid assignment of the free state as
//     the cycle left it before that job (slots, mem, select[], span[],
//     compound terms, exclusivity both ways), and a simple request that
//     some assignment fits now starts (under firstfit, any admitted job;
//     under the other policies, the first admitted one).

// oHost is an oracle host.
type oHost struct {
	slots int
	mem   float64 // < 0: no mem
	typ   string
	open  bool
}

// oTerm is one term of an oracle request.
type oTerm struct {
	n     int
	span  int // 0: none; -1: span[hosts=1]; p > 0: span[ptile=p]
	selA  bool
	mem   float64 // rusage[mem], 0 none
	count bool    // compound: written "n*{...}"
}

// oJob is an oracle job.
type oJob struct {
	terms    []oTerm
	compound bool
	excl     bool
	dep      cluster.JobID // done(dep), 0 none
}

func (t oTerm) text() string {
	var parts []string
	if t.selA {
		parts = append(parts, "select[type==A]")
	}
	if t.mem > 0 {
		parts = append(parts, fmt.Sprintf("rusage[mem=%g]", t.mem))
	}
	switch {
	case t.span < 0:
		parts = append(parts, "span[hosts=1]")
	case t.span > 0:
		parts = append(parts, fmt.Sprintf("span[ptile=%d]", t.span))
	}
	return strings.Join(parts, " ")
}

func (j oJob) resreq() string {
	if !j.compound {
		return j.terms[0].text()
	}
	var parts []string
	for _, t := range j.terms {
		parts = append(parts, fmt.Sprintf("%d*{%s}", t.n, t.text()))
	}
	return strings.Join(parts, " + ")
}

func (j oJob) tasks() int {
	n := 0
	for _, t := range j.terms {
		n += t.n
	}
	return n
}

// oState is what the oracle knows of each host's use.
type oState struct {
	used  []int
	mem   []float64 // reserved
	excl  []bool    // runs an exclusive job
	perTk bool      // mem is reserved per task (else per host)
}

// capacity returns how many tasks of term t host h takes for job j in st
// (the idle cluster when st's use is all zero); openOnly: closed hosts
// take none.
func capacity(hosts []oHost, st *oState, j oJob, t oTerm, h int, openOnly bool) int {
	host := hosts[h]
	if openOnly && !host.open || t.selA && host.typ != "A" || st.excl[h] || j.excl && st.used[h] > 0 {
		return 0
	}
	n := host.slots - st.used[h]
	if t.mem > 0 {
		free := host.mem - st.mem[h]
		switch {
		case host.mem < 0:
			return 0
		case st.perTk:
			n = min(n, int(math.Floor(free/t.mem+1e-9)))
		case free+1e-9 < t.mem:
			return 0
		}
	}
	return max(n, 0)
}

// termFits reports whether hosts of capacities caps can take term t in
// its shape: in all; all on one; ptile hosts that take p and one more
// that takes the remainder.
func termFits(t oTerm, caps []int) bool {
	switch {
	case t.span < 0:
		for _, c := range caps {
			if c >= t.n {
				return true
			}
		}
		return false
	case t.span > 0:
		full, rem := t.n/t.span, t.n%t.span
		f, o := 0, 0
		for _, c := range caps {
			if c >= t.span {
				f++
			} else if rem > 0 && c >= rem {
				o++
			}
		}
		return f >= full && (rem == 0 || f+o >= full+1)
	}
	sum := 0
	for _, c := range caps {
		sum += c
	}
	return sum >= t.n
}

// fits reports whether some assignment of distinct hosts to j's terms
// (a host to one term at most) gives every term its tasks in its shape.
func fits(hosts []oHost, st *oState, j oJob, openOnly bool) bool {
	a := make([]int, len(hosts))
	var try func(h int) bool
	try = func(h int) bool {
		if h == len(hosts) {
			for ti, t := range j.terms {
				var caps []int
				for x := range hosts {
					if a[x] == ti {
						caps = append(caps, capacity(hosts, st, j, t, x, openOnly))
					}
				}
				if !termFits(t, caps) {
					return false
				}
			}
			return true
		}
		for ti := -1; ti < len(j.terms); ti++ {
			if ti >= 0 && capacity(hosts, st, j, j.terms[ti], h, openOnly) == 0 {
				continue
			}
			a[h] = ti
			if try(h + 1) {
				return true
			}
		}
		return false
	}
	return try(0)
}

// matches reports whether every term of j has a host whose type its
// select[] takes, open or not.
func matches(hosts []oHost, j oJob) bool {
	for _, t := range j.terms {
		some := false
		for _, h := range hosts {
			some = some || !t.selA || h.typ == "A"
		}
		if !some {
			return false
		}
	}
	return true
}

// validStart returns, when alloc (tasks per host, by host index) is an
// assignment of j's terms on st: every host to one term, the
// tasks it takes within its capacity, each term its tasks in its shape
// (span[hosts=1]: one host; ptile: p on each host but one, which takes
// the remainder), the term of each host (-1: none), else nil.
func validStart(hosts []oHost, st *oState, j oJob, alloc []int) []int {
	var used []int
	for h, k := range alloc {
		if k > 0 {
			used = append(used, h)
		}
	}
	a := make([]int, len(used))
	var try func(i int) bool
	try = func(i int) bool {
		if i == len(used) {
			for ti, t := range j.terms {
				sum, n, off := 0, 0, 0
				for x, h := range used {
					if a[x] != ti {
						continue
					}
					k := alloc[h]
					sum, n = sum+k, n+1
					if t.span > 0 && k != t.span {
						off++
						if k != t.n%t.span {
							return false
						}
					}
				}
				if sum != t.n || t.span < 0 && n != 1 || off > 1 {
					return false
				}
			}
			return true
		}
		for ti, t := range j.terms {
			if alloc[used[i]] <= capacity(hosts, st, j, t, used[i], true) {
				a[i] = ti
				if try(i + 1) {
					return true
				}
			}
		}
		return false
	}
	if !try(0) {
		return nil
	}
	terms := make([]int, len(hosts))
	for i := range terms {
		terms[i] = -1
	}
	for x, h := range used {
		terms[h] = a[x]
	}
	return terms
}

// take adds j's start on alloc to st, each host serving terms[host].
func take(st *oState, j oJob, alloc, terms []int) {
	for h, k := range alloc {
		if k == 0 {
			continue
		}
		st.used[h] += k
		st.excl[h] = st.excl[h] || j.excl
		if m := j.terms[terms[h]].mem; m > 0 {
			if st.perTk {
				st.mem[h] += m * float64(k)
			} else {
				st.mem[h] += m
			}
		}
	}
}

func drawTerm(t *rapid.T, compound bool) oTerm {
	term := oTerm{n: rapid.IntRange(1, 4).Draw(t, "n"), selA: rapid.Bool().Draw(t, "select"), count: compound,
		mem: rapid.SampledFrom([]float64{0, 0, 800, 2000}).Draw(t, "rusage mem")}
	switch rapid.IntRange(0, 3).Draw(t, "span") {
	case 1:
		term.span = -1
	case 2:
		term.span = rapid.IntRange(1, 3).Draw(t, "ptile")
	}
	return term
}

// TestPropertyOracleGates runs the oracle on 10,000 random clusters (100
// rapid runs of its default 100; each case takes well under a
// millisecond). testdata/mutate.sh shows it catches mutations of the
// analysis, the gates and exclusive sizing.
func TestPropertyOracleGates(t *testing.T) {
	for range 100 {
		rapid.Check(t, func(t *rapid.T) { checkOracleGates(t, oracleDraws{}) })
	}
}

// TestPropertyOraclePlacement is the oracle on the shape where sizing and
// exclusivity meet: 2 to 4 open hosts, one or two jobs running, one simple
// job pending under firstfit, with nothing to hold it back: it starts if
// and only if some assignment fits the free hosts (10,000 cases).
func TestPropertyOraclePlacement(t *testing.T) {
	for range 100 {
		rapid.Check(t, func(t *rapid.T) { checkOracleGates(t, oracleDraws{placement: true}) })
	}
}

// oracleDraws narrows what checkOracleGates draws.
type oracleDraws struct {
	// placement: 2-4 open hosts, 1-2 running jobs, one simple pending job
	// without a dependency, firstfit.
	placement bool
}

func checkOracleGates(t *rapid.T, d oracleDraws) {
	// lo: a bound of the general draws, or of the narrowed ones.
	lo := func(general, narrowed int) int {
		if d.placement {
			return narrowed
		}
		return general
	}
	policies := allPolicies
	if d.placement {
		policies = []cluster.Policy{cluster.PolicyFirstFit}
	}
	policy := rapid.SampledFrom(policies).Draw(t, "policy")
	perTask := rapid.Bool().Draw(t, "mem per task")
	var hosts []oHost
	spec := ct.Spec{Queues: []cluster.Queue{{Name: "normal", Policy: policy, Picker: "priority", Exclusive: true}}}
	if perTask {
		spec.MemMethod = cluster.PerTask
	}
	// A third of the clusters have single-slot hosts only, where the
	// analysis of compound terms is exact.
	singleSlot, most := true, 4
	if rapid.IntRange(0, 2).Draw(t, "single-slot") == 0 {
		most = 1
	}
	for h := range rapid.IntRange(lo(1, 2), 4).Draw(t, "hosts") {
		host := oHost{slots: rapid.IntRange(1, most).Draw(t, "slots"), mem: rapid.SampledFrom([]float64{-1, 1000, 4000}).Draw(t, "mem"),
			typ: rapid.SampledFrom([]string{"A", "B"}).Draw(t, "type"), open: d.placement || rapid.IntRange(0, 4).Draw(t, "closed") > 0}
		singleSlot = singleSlot && host.slots == 1
		hosts = append(hosts, host)
		status := cluster.HostOK
		if !host.open {
			status = cluster.HostClosed
		}
		spec.Hosts = append(spec.Hosts, ct.Host{Name: fmt.Sprintf("h%d", h), Slots: host.slots, Mem: host.mem, Type: host.typ, Status: status})
	}
	st := &oState{used: make([]int, len(hosts)), mem: make([]float64, len(hosts)), excl: make([]bool, len(hosts)), perTk: perTask}
	// Jobs already running, without mem.
	id := cluster.JobID(1)
	for range rapid.IntRange(lo(0, 1), 2).Draw(t, "running") {
		h := rapid.IntRange(0, len(hosts)-1).Draw(t, "on")
		free := hosts[h].slots - st.used[h]
		if free == 0 || st.excl[h] {
			continue
		}
		excl := st.used[h] == 0 && rapid.Bool().Draw(t, "running exclusive")
		k := rapid.IntRange(1, free).Draw(t, "running tasks")
		spec.Jobs = append(spec.Jobs, ct.Job{ID: id, Min: k, Runtime: 100, Estimate: 100, Exclusive: excl, Running: map[string]int{spec.Hosts[h].Name: k}})
		st.used[h] += k
		st.excl[h] = excl
		id++
	}
	// Pending jobs.
	first := id
	var jobs []oJob
	n := rapid.IntRange(1, lo(3, 1)).Draw(t, "pending")
	for range n {
		j := oJob{compound: !d.placement && rapid.Bool().Draw(t, "compound"), excl: rapid.IntRange(0, 3).Draw(t, "exclusive") == 0}
		terms := 1
		if j.compound {
			terms = rapid.IntRange(2, 3).Draw(t, "terms")
		}
		for range terms {
			j.terms = append(j.terms, drawTerm(t, j.compound))
		}
		if !d.placement && rapid.IntRange(0, 2).Draw(t, "depend") == 0 {
			// A pending job (which ends at 10 at the earliest) or a running one.
			if j.dep = cluster.JobID(rapid.IntRange(1, int(first)+n-1).Draw(t, "on job")); j.dep == id {
				j.dep = 0 // not on itself
			}
		}
		jobs = append(jobs, j)
		cj := ct.Job{ID: id, Min: j.tasks(), ResReq: j.resreq(), Runtime: 10, Estimate: 10, Exclusive: j.excl}
		if j.dep != 0 {
			cj.Depend = fmt.Sprintf("done(%d)", j.dep)
		}
		spec.Jobs = append(spec.Jobs, cj)
		id++
	}
	c, s := runQueues(t, spec, 0)

	idle := &oState{used: make([]int, len(hosts)), mem: make([]float64, len(hosts)), excl: make([]bool, len(hosts)), perTk: perTask}
	admittedBefore := false
	for i, oj := range jobs {
		job := s.Jobs[int(first)-1+i]
		r := job.Reasons
		ever := fits(hosts, idle, oj, false)
		// A request whose select[] matches no host is left to NoHostMatch.
		exact := (!oj.compound || singleSlot) && matches(hosts, oj)
		label := fmt.Sprintf("job %d %q x%d excl=%v dep=%d: %s (%s)", job.Spec.ID, oj.resreq(), oj.tasks(), oj.excl, oj.dep, state(c, job), r.Note)
		if job.State == framework.Pending && r.Main == framework.BadRequest && ever {
			t.Fatalf("%s: BadRequest, but an assignment fits the idle cluster", label)
		}
		if !ever && exact && (job.State != framework.Pending || r.Main != framework.BadRequest) {
			t.Fatalf("%s: no assignment fits the idle cluster, want BadRequest", label)
		}
		if !ever && job.State != framework.Pending {
			t.Fatalf("%s: started, but no assignment fits the idle cluster", label)
		}
		if oj.dep != 0 {
			switch {
			case job.State != framework.Pending:
				t.Fatalf("%s: started before done(%d)", label, oj.dep)
			case r.Main != framework.BadRequest && r.Main != framework.Dependency:
				t.Fatalf("%s: want Dependency (or BadRequest)", label)
			}
			continue
		}
		alloc := make([]int, len(hosts))
		if job.State == framework.Running {
			for _, ha := range job.Alloc.Hosts {
				alloc[ha.Host] += ha.Slots
			}
			terms := validStart(hosts, st, oj, alloc)
			if terms == nil {
				t.Fatalf("%s: not a valid assignment of the free hosts %+v", label, st)
			}
			take(st, oj, alloc, terms)
		} else if !oj.compound && (policy == cluster.PolicyFirstFit || !admittedBefore) && r.Main != framework.BadRequest && fits(hosts, st, oj, true) {
			t.Fatalf("%s: pends, but an assignment fits the free hosts %+v", label, st)
		}
		if r.Main != framework.BadRequest {
			admittedBefore = true
		}
	}
}
