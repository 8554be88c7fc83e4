package runtime_test

import (
	"fmt"
	"testing"

	"github.com/xce-sched/xce/cluster"
	"github.com/xce-sched/xce/framework"
	"github.com/xce-sched/xce/framework/plugins/parjob"
	"github.com/xce-sched/xce/framework/plugins/seqjob"
	"github.com/xce-sched/xce/framework/runtime"
	ct "github.com/xce-sched/xce/internal/clustertest"
)

// hostKind is a host shape the combinatorial test combines; each is taken
// with 1, 2 and 3 slots. "used" hosts run one task of a job holding
// rusage[mem=2]. An empty typ is a host without a type, a negative mem one
// without mem.
type hostKind struct {
	typ    string
	mem    float64
	closed bool
	used   bool
}

var hostKinds = []hostKind{
	{"A", 4, false, false},
	{"B", 2, false, false},
	{"A", 4, true, false},
	{"A", 4, false, true},
}

// undefinedKinds add a host that defines neither type nor mem.
var undefinedKinds = []hostKind{
	{"A", 4, false, false},
	{"", -1, false, false},
	{"B", 2, false, true},
}

// oracleJob is one enumerated job shape.
type oracleJob struct {
	min, max int
	span     string // "", "span[hosts=1]", "span[hosts=-1]", "span[ptile=N]"
	ptile    int    // 0 unless span is ptile
	hosts1   bool
	mem      int  // per-slot rusage[mem], 0 none
	memZero  bool // rusage[mem=0] (needs nothing)
	selA     bool // select[type==A]
	same     bool // same[type]
}

func (j oracleJob) resreq() string {
	s := ""
	if j.selA {
		s += "select[type==A] "
	}
	if j.mem > 0 || j.memZero {
		s += fmt.Sprintf("rusage[mem=%d] ", j.mem)
	}
	s += j.span
	if j.same {
		s += " same[type]"
	}
	return s
}

// oracleJobs lists every job shape of up to 4 tasks: each span form, per
// slot mem 0 (none), 1 or 2, with and without select[type==A] and same[].
func oracleJobs() []oracleJob {
	return jobShapes([]int{0, 1, 2}, []bool{false, true})
}

// undefinedJobs lists the shapes that hosts without type or mem tell
// apart: each span form, no mem, rusage[mem=0] or rusage[mem=1], with and
// without same[type].
func undefinedJobs() []oracleJob {
	var jobs []oracleJob
	for _, j := range jobShapes([]int{0, 1}, []bool{false}) {
		jobs = append(jobs, j)
		if j.mem == 0 {
			j.memZero = true
			jobs = append(jobs, j)
		}
	}
	return jobs
}

func jobShapes(mems []int, sels []bool) []oracleJob {
	var jobs []oracleJob
	spans := []struct {
		s      string
		ptile  int
		hosts1 bool
	}{{"", 0, false}, {"span[hosts=-1]", 0, false}, {"span[hosts=1]", 0, true}, {"span[ptile=1]", 1, false}, {"span[ptile=2]", 2, false}, {"span[ptile=3]", 3, false}}
	for min := 1; min <= 4; min++ {
		for max := min; max <= 4; max++ {
			for _, sp := range spans {
				for _, mem := range mems {
					for _, sel := range sels {
						for _, same := range []bool{false, true} {
							jobs = append(jobs, oracleJob{min, max, sp.s, sp.ptile, sp.hosts1, mem, false, sel, same})
						}
					}
				}
			}
		}
	}
	return jobs
}

// oracleHost is what the brute force sees of a host.
type oracleHost struct {
	ok       bool
	typ      string
	slots    int     // free
	mem      float64 // free
	slotsTot int
}

// valid reports whether giving x[h] tasks to each host is a valid
// allocation of job j, judged from first principles (docs/allocation.md):
// a host without mem takes no task that reserves mem (rusage[mem=0]
// reserves nothing), and a host without a type no task of a same[type]
// job (LSF: only hosts that have the same value; docs/resreq.md). The job
// reserves mem by method m (docs/reservation.md): k times its amount on a
// host of k tasks (per task), its amount on each host (per host), or its
// amount on one host of the allocation, which must then have room for it,
// and nothing on the others (per job).
func valid(j oracleJob, m cluster.ReserveMethod, hosts []oracleHost, x []int) bool {
	n, used, typ := 0, 0, ""
	var sizes []int
	jobHost := m != cluster.PerJob || j.mem == 0 // some host has room for the per-job amount
	for h, k := range x {
		if k == 0 {
			continue
		}
		hh := hosts[h]
		need := 0
		switch m {
		case cluster.PerTask:
			need = k * j.mem
		case cluster.PerHost:
			need = j.mem
		case cluster.PerJob:
			// Only that host reserves mem: the others, as for
			// rusage[mem=0], need none (nor the resource).
			jobHost = jobHost || float64(j.mem) <= hh.mem
		}
		if !hh.ok || k > hh.slots || need > 0 && !(float64(need) <= hh.mem) || (j.selA && hh.typ != "A") {
			return false
		}
		if j.same && hh.typ == "" {
			return false
		}
		if j.same && used > 0 && hh.typ != typ {
			return false
		}
		typ = hh.typ
		n += k
		used++
		sizes = append(sizes, k)
	}
	if n < j.min || n > j.max || used == 0 || !jobHost {
		return false
	}
	switch {
	case j.hosts1:
		return used == 1
	case j.ptile > 0:
		// LSF ptile: every host gets exactly ptile tasks but one, which
		// gets the remainder.
		short := 0
		for _, k := range sizes {
			if k > j.ptile {
				return false
			}
			if k < j.ptile {
				short++
			}
		}
		return short == 0 && n%j.ptile == 0 || short == 1 && n%j.ptile != 0 && contains(sizes, n%j.ptile)
	}
	return true
}

func contains(s []int, v int) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// bestN returns the largest task count of any valid allocation, 0 if none.
func bestN(j oracleJob, m cluster.ReserveMethod, hosts []oracleHost) int {
	best := 0
	x := make([]int, len(hosts))
	var rec func(h int)
	rec = func(h int) {
		if h == len(hosts) {
			if valid(j, m, hosts, x) {
				n := 0
				for _, k := range x {
					n += k
				}
				best = max(best, n)
			}
			return
		}
		for k := 0; k <= min(hosts[h].slots, 4); k++ {
			x[h] = k
			rec(h + 1)
		}
		x[h] = 0
	}
	rec(0)
	return best
}

// TestCombinatorialOracle enumerates every cluster of up to 3 hosts of up
// to 3 slots built from hostKinds and every oracleJob, and checks the
// runner against the brute force: it places a job iff some valid
// allocation exists, with the largest valid task count, and what it
// returns is itself valid.
func TestCombinatorialOracle(t *testing.T) {
	checkOracle(t, hostKinds, oracleJobs())
}

// TestCombinatorialOracleUndefined is TestCombinatorialOracle over clusters
// with a host that defines neither type nor mem, and jobs with
// rusage[mem=0] and same[type] (issue 11 §3, §4).
func TestCombinatorialOracleUndefined(t *testing.T) {
	checkOracle(t, undefinedKinds, undefinedJobs())
}

// checkOracle runs the combinatorial test over every cluster of up to 3
// hosts built from kinds and every job of jobs, under each way of
// reserving mem.
func checkOracle(t *testing.T, hostKinds []hostKind, jobs []oracleJob) {
	for _, m := range []cluster.ReserveMethod{cluster.PerTask, cluster.PerHost, cluster.PerJob} {
		t.Run(m.String(), func(t *testing.T) { checkOracleMethod(t, hostKinds, jobs, m) })
	}
}

func checkOracleMethod(t *testing.T, hostKinds []hostKind, jobs []oracleJob, m cluster.ReserveMethod) {
	var shapes [][2]int // (kind, slots)
	for k := range hostKinds {
		for s := 1; s <= 3; s++ {
			shapes = append(shapes, [2]int{k, s})
		}
	}
	var clusters [][][2]int
	var gen func(prefix [][2]int)
	gen = func(prefix [][2]int) {
		if len(prefix) > 0 {
			clusters = append(clusters, append([][2]int(nil), prefix...))
		}
		if len(prefix) == 3 {
			return
		}
		for _, s := range shapes {
			gen(append(prefix, s))
		}
	}
	gen(nil)
	if testing.Short() || raceEnabled {
		// Every 8th cluster: still every host kind, size and job shape.
		var sample [][][2]int
		for i := 0; i < len(clusters); i += 8 {
			sample = append(sample, clusters[i])
		}
		clusters = sample
	}
	seq, par := seqjob.New(), parjob.New()
	checked := 0
	for _, shape := range clusters {
		spec := ct.Spec{MemMethod: m}
		running := map[string]int{}
		for i, hs := range shape {
			k := hostKinds[hs[0]]
			name := fmt.Sprintf("h%d", i)
			st := cluster.HostOK
			if k.closed {
				st = cluster.HostClosed
			}
			spec.Hosts = append(spec.Hosts, ct.Host{Name: name, Slots: hs[1], Mem: k.mem, Type: k.typ, Status: st})
			if k.used {
				running[name] = 1
			}
		}
		if len(running) > 0 {
			spec.Jobs = append(spec.Jobs, ct.Job{ID: 1, Min: len(running), ResReq: "rusage[mem=2]", Running: running})
		}
		for i, j := range jobs {
			spec.Jobs = append(spec.Jobs, ct.Job{ID: cluster.JobID(100 + i), Min: j.min, Max: j.max, ResReq: j.resreq()})
		}
		c := ct.Build(spec)
		base := cluster.NewState(c)
		for i := range c.Jobs {
			if len(c.Jobs[i].RunningOn) > 0 {
				base.Take(c.RunningAlloc(&c.Jobs[i]))
			}
		}
		hosts := make([]oracleHost, len(c.Hosts))
		for h := range c.Hosts {
			id := cluster.HostID(h)
			hosts[h] = oracleHost{ok: c.Hosts[h].Status == cluster.HostOK, typ: c.Hosts[h].Type, slots: base.FreeSlots(id), mem: base.Free(id, 0), slotsTot: c.Hosts[h].Slots}
		}
		off := len(c.Jobs) - len(jobs)
		for i, j := range jobs {
			spec := &c.Jobs[off+i]
			req, err := framework.Compile(spec.Req, c, spec.TasksMin, spec.TasksMax)
			if err != nil {
				if len(c.Resources) == 0 && (j.mem > 0 || j.memZero) {
					continue // no host defines mem: an unknown resource
				}
				t.Fatalf("%s: %v", j.resreq(), err)
			}
			job := &framework.Job{Spec: spec, Req: req}
			st := base.Clone()
			r := runtime.NewRunner(st, runtime.NewMemCommitter())
			a := framework.Allocator(par)
			if seqjob.Handles(job) {
				a = seq
			}
			placed, err := r.Allocate(job, a)
			if err != nil {
				t.Fatal(err)
			}
			want := bestN(j, m, hosts)
			desc := fmt.Sprintf("cluster %v job -n %d,%d %q", hosts, j.min, j.max, j.resreq())
			if !placed {
				if want > 0 {
					t.Fatalf("%s: pending (%v) but %d tasks fit", desc, job.Reasons.Main, want)
				}
				if !st.Equal(base) {
					t.Fatalf("%s: pending job changed the state", desc)
				}
				continue
			}
			x := make([]int, len(hosts))
			for _, ha := range job.Alloc.Hosts {
				if x[ha.Host] != 0 {
					t.Fatalf("%s: host %d used twice", desc, ha.Host)
				}
				x[ha.Host] = ha.Slots
			}
			if !valid(j, m, hosts, x) {
				t.Fatalf("%s: invalid allocation %v", desc, x)
			}
			if n := job.Alloc.Slots(); n != want {
				t.Fatalf("%s: placed %d tasks, the largest valid allocation has %d", desc, n, want)
			}
			if err := st.CheckInvariants(); err != nil {
				t.Fatalf("%s: %v", desc, err)
			}
			checked++
		}
	}
	t.Logf("%d clusters × %d jobs, %d placements checked", len(clusters), len(jobs), checked)
}
