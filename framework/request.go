package framework

import (
	"fmt"
	"math"

	"github.com/xce-sched/xce/cluster"
	"github.com/xce-sched/xce/gpureq"
	"github.com/xce-sched/xce/resreq"
)

// Request is a job's resource requirement compiled against one cluster:
// names resolved to columns and resource IDs, select expressions compiled.
// Jobs with the same canonical requirement string and task count can share
// one Request.
type Request struct {
	// Alts are the alternatives, tried in order (at least one).
	Alts []Alternative
	// Canonical is the requirement's canonical string (resreq.Requirement.String).
	Canonical string
	// Rising: the select[] of some term may turn true on a host as free
	// amounts shrink (Term.Rising).
	Rising bool
}

// Alternative is one alternative of a Request: its terms and the shared
// resources the job reserves once if it is placed by this alternative
// (amounts > 0 only: a zero rusage[] amount needs nothing).
type Alternative struct {
	Terms  []Term
	Shared []cluster.SharedAmount
}

// Term is one compiled term (a simple requirement, or one `n*{...}` of a
// compound one).
type Term struct {
	// Tasks is the term's fixed task count for a compound term, 0 for the
	// single term of a simple requirement (whose task count is the job's).
	Tasks  int
	Select *resreq.Select
	// Static is the part of Select that reads no free amount (the
	// conjunction of its top-level && operands that do not read free
	// slots or a free consumable; all of Select when it reads none): a
	// host it rejects never matches Select, whatever runs where. It is
	// what the "can this request ever run" test evaluates.
	Static *resreq.Select
	// Rising: Select reads a free amount in a way that may turn it true on
	// a host as free amounts shrink (select[slots < 2]; not
	// select[mem > 1000], which can only turn false). What assumes that
	// a host ruled out stays ruled out within a cycle (the cycle cursor,
	// the unsatisfiable cache) is off for it.
	Rising bool
	Order  []int  // value-vector columns of order[] keys
	Desc   []bool // per Order key: descending
	// PerSlot, PerHost and PerJob are the term's rusage[] of host
	// resources, amounts > 0 only, split by how the cluster reserves
	// each resource (cluster.Cluster.Reserve, docs/reservation.md):
	// PerSlot for every task slot, PerHost once on every host the term
	// places tasks on, PerJob once on the first host the term places
	// tasks on.
	PerSlot []cluster.ResAmount
	PerHost []cluster.ResAmount
	PerJob  []cluster.ResAmount
	Span    resreq.Span
	Same    []int // value-vector columns of same[] attributes (see SameDefined)
}

// Compile resolves req against cluster c for a job of tasksMin..tasksMax
// tasks. It fails (a BadRequest for the job) when an attribute or resource
// is unknown, or when compound term counts do not add up to the task count:
// a compound requirement needs a fixed task count (tasksMin == tasksMax)
// equal to the sum of its terms' counts; an omitted last count takes the rest.
func Compile(req *resreq.Requirement, c *cluster.Cluster, tasksMin, tasksMax int) (*Request, error) {
	out := &Request{Canonical: req.String(), Alts: make([]Alternative, 0, len(req.Alternatives))}
	schema := c.Schema()
	for ai, alt := range req.Alternatives {
		a := Alternative{Terms: make([]Term, len(alt.Terms))}
		compound := len(alt.Terms) > 1 || alt.Terms[0].Count > 0
		sum := 0
		for ti, t := range alt.Terms {
			ct := &a.Terms[ti]
			sel, err := resreq.CompileSelect(t.Select, schema)
			if err != nil {
				return nil, err
			}
			ct.Select, ct.Static = sel, sel
			if t.Select != nil && readsFree(t.Select, c) {
				// Sub-expressions of a compiled expression compile.
				if ct.Static, err = resreq.CompileSelect(staticConjuncts(t.Select, c), schema); err != nil {
					return nil, err
				}
				ct.Rising = !falling(t.Select, c, true)
				out.Rising = out.Rising || ct.Rising
			}
			if ct.Order, ct.Desc, err = resreq.CompileOrder(t.Order, schema); err != nil {
				return nil, err
			}
			ct.Span = t.Span
			for _, name := range t.Same {
				col, _, ok := schema.Lookup(name)
				if !ok {
					return nil, fmt.Errorf("same[]: unknown attribute %q", name)
				}
				ct.Same = append(ct.Same, col)
			}
			for _, ru := range t.Rusage {
				// A zero amount reserves nothing and needs nothing (a host
				// without the resource can take such tasks), as the
				// loader's RunningAlloc holds it; the name must still exist.
				if r, ok := c.ResourceByName(ru.Name); ok {
					if g, isGPU := c.GPUResource(); isGPU && r == g && (ru.Value != math.Trunc(ru.Value) || ru.Value > gpureq.MaxDevices) {
						return nil, fmt.Errorf("rusage[]: %s=%v: a number of GPUs is a whole number from 0 to %d", ru.Name, ru.Value, gpureq.MaxDevices)
					}
					if ru.Value > 0 {
						ct.addRusage(c.Reserve(r), cluster.ResAmount{Res: r, Amount: ru.Value})
					}
				} else if sh, ok := c.SharedByName(ru.Name); ok {
					if ru.Value > 0 {
						a.Shared = addShared(a.Shared, sh, ru.Value)
					}
				} else if ru.Name == gpureq.Resource {
					return nil, fmt.Errorf("rusage[]: %s: no host of the cluster has GPUs (gpus: N; docs/gpus.md)", ru.Name)
				} else {
					return nil, fmt.Errorf("rusage[]: unknown resource %q", ru.Name)
				}
			}
			if compound {
				if t.Count == 0 && ti != len(alt.Terms)-1 {
					return nil, fmt.Errorf("alternative %d: only the last compound term may omit its task count", ai+1)
				}
				ct.Tasks = t.Count
				sum += t.Count
			}
		}
		if compound {
			if tasksMin != tasksMax {
				return nil, fmt.Errorf("a compound requirement needs a fixed task count, not %d,%d", tasksMin, tasksMax)
			}
			last := &a.Terms[len(a.Terms)-1]
			if last.Tasks == 0 {
				last.Tasks = tasksMax - sum
				sum = tasksMax
				if last.Tasks < 1 {
					return nil, fmt.Errorf("alternative %d: compound terms take %d tasks, leaving none of %d for the last term", ai+1, sum-last.Tasks, tasksMax)
				}
			}
			if sum != tasksMax {
				return nil, fmt.Errorf("alternative %d: compound terms ask for %d tasks, the job for %d", ai+1, sum, tasksMax)
			}
		}
		out.Alts = append(out.Alts, a)
	}
	return out, nil
}

func addShared(s []cluster.SharedAmount, id cluster.SharedID, v float64) []cluster.SharedAmount {
	for i := range s {
		if s[i].Shared == id {
			s[i].Amount += v
			return s
		}
	}
	return append(s, cluster.SharedAmount{Shared: id, Amount: v})
}

func (t *Term) addRusage(m cluster.ReserveMethod, ra cluster.ResAmount) {
	switch m {
	case cluster.PerTask:
		t.PerSlot = append(t.PerSlot, ra)
	case cluster.PerJob:
		t.PerJob = append(t.PerJob, ra)
	default:
		t.PerHost = append(t.PerHost, ra)
	}
}

// Plain reports whether t has no select[], no rusage[] of host resources
// and no same[]: any open host can take as many of its tasks as it has
// free slots.
func (t *Term) Plain() bool {
	return t.Select.All() && len(t.PerSlot) == 0 && len(t.PerHost) == 0 && len(t.PerJob) == 0 && len(t.Same) == 0
}

// HostAmount returns what placing nslots tasks of t on one host reserves
// there of resource r: nslots × its per-slot amount, plus its per-host
// amount, plus its per-job amount when first (the term's first host).
func (t *Term) HostAmount(r cluster.ResID, nslots int, first bool) float64 {
	v := 0.0
	for _, ra := range t.PerSlot {
		if ra.Res == r {
			v += ra.Amount * float64(nslots)
		}
	}
	for _, ra := range t.PerHost {
		if ra.Res == r {
			v += ra.Amount
		}
	}
	if first {
		for _, ra := range t.PerJob {
			if ra.Res == r {
				v += ra.Amount
			}
		}
	}
	return v
}

// SameDefined reports whether a host with value vector vals defines every
// same[] attribute of t. Only such hosts take tasks of t, whatever the
// task count or span: LSF allocates a same[] job "only on hosts that have
// the same value" (docs/resreq.md), and a host without the attribute has
// no value.
func (t *Term) SameDefined(vals []float64) bool {
	for _, col := range t.Same {
		if x := vals[col]; x != x {
			return false
		}
	}
	return true
}

// Compound reports whether alternative a has fixed per-term task counts.
func (a *Alternative) Compound() bool { return a.Terms[0].Tasks > 0 }

// TaskRange returns the fewest and the most tasks a placement of a job of
// spec can have under alternative a: the job's task counts for a simple
// alternative, the terms' fixed total (both ways) for a compound one.
func (a *Alternative) TaskRange(spec *cluster.Job) (lo, hi int) {
	if !a.Compound() {
		return spec.TasksMin, spec.TasksMax
	}
	n := 0
	for _, t := range a.Terms {
		n += t.Tasks
	}
	return n, n
}
