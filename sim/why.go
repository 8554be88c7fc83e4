package sim

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/xce-sched/xce/cluster"
	"github.com/xce-sched/xce/framework"
	"github.com/xce-sched/xce/internal/live"
	"github.com/xce-sched/xce/resreq"
)

// Suggestion is one change to a pending job's request that lets it start
// now or sooner than its forecast, checked by simulating the cluster with
// the change (xce why, docs/forecast.md): Change as the user would write
// it on the command line ("-n 4", "-q short", `-R "..."`), What in words,
// the changed request (Tasks, Queue, ResReq), and the job's start with
// it (Start, in the snapshot's seconds; Now when that is the snapshot's
// now).
type Suggestion struct {
	Change string `json:"change"`
	What   string `json:"what"`
	Tasks  int    `json:"tasks"`
	Queue  string `json:"queue"`
	ResReq string `json:"resreq"`
	Start  int64  `json:"start"`
	Now    bool   `json:"now"`
}

// Suggest looks for the smallest changes to pending job id of snapshot c
// (live.Core.Snapshot, taken at now, with its kept reservations) that let it start now, or sooner
// than it starts unchanged: fewer tasks (the largest count below its
// minimum that starts now), less of a host resource (per task, host or
// job, as the cluster reserves it) in its
// rusage (the largest amount that starts now), another open queue, one
// select[] term dropped, a wider span (span[hosts=1] dropped, or a
// smaller ptile). Every suggestion is the job's forecast with the change
// made, on its own copy of the snapshot (Forecasts); only those that
// start the job now or sooner are returned, in that order of kinds. base
// is the job's forecast unchanged (nil: it never starts). The resource
// requirement changes are tried on a requirement of one alternative and
// one term only. ctx bounds the search: what was found when it ends is
// returned with ctx's error.
func Suggest(ctx context.Context, c *cluster.Cluster, reserved map[cluster.JobID]live.Reserved, id cluster.JobID, now int64, reg framework.Registry) (base *Forecast, out []Suggestion, err error) {
	i := slices.IndexFunc(c.Jobs, func(j cluster.Job) bool { return j.ID == id })
	if i < 0 || len(c.Jobs[i].RunningOn) > 0 {
		return nil, nil, fmt.Errorf("job %d is not pending in the snapshot", id)
	}
	orig := c.Jobs[i]
	start := func(j cluster.Job) (*Forecast, error) {
		cp := *c
		cp.Jobs = slices.Clone(c.Jobs)
		cp.Jobs[i] = j
		fc, err := Forecasts(ctx, &cp, reserved, reg)
		if err != nil {
			return nil, err
		}
		if f, ok := fc[id]; ok {
			return &f, nil
		}
		return nil, nil
	}
	if base, err = start(orig); err != nil {
		return nil, nil, err
	}
	if base != nil && base.Start <= now {
		return base, nil, nil // it starts now as it is
	}
	sooner := func(f *Forecast) bool { return f != nil && (base == nil || f.Start < base.Start) }
	add := func(j cluster.Job, f *Forecast, change, what string) {
		out = append(out, Suggestion{Change: change, What: what, Tasks: j.TasksMin, Queue: c.Queues[j.Queue].Name,
			ResReq: j.ResReq, Start: f.Start, Now: f.Start <= now})
	}
	startsNow := func(j cluster.Job) (*Forecast, bool) {
		f, e := start(j)
		if e != nil && err == nil {
			err = e
		}
		return f, f != nil && f.Start <= now
	}

	// Fewer tasks: the largest count below the minimum that starts now
	// (a search that assumes fewer tasks never fit worse).
	if orig.TasksMin > 1 {
		lo, hi := 0, orig.TasksMin-1 // hi: the largest count still untried
		var best *Forecast
		for lo < hi && ctx.Err() == nil {
			mid := (lo + hi + 1) / 2
			j := orig
			j.TasksMin, j.TasksMax = mid, mid
			if f, ok := startsNow(j); ok {
				lo, best = mid, f
			} else {
				hi = mid - 1
			}
		}
		if best != nil {
			j := orig
			j.TasksMin, j.TasksMax = lo, lo
			add(j, best, fmt.Sprintf("-n %d", lo), fmt.Sprintf("%d %s instead of %d", lo, plural(lo, "task", "tasks"), orig.TasksMin))
		}
	}

	term := simpleTerm(orig.Req)
	// Less of a host resource (per task, host or job, as the cluster
	// reserves it): the largest amount that starts now.
	if term != nil {
		for k, ru := range term.Rusage {
			r, ok := c.ResourceByName(ru.Name)
			if !ok || ru.Value < 2 || ctx.Err() != nil {
				continue
			}
			per := strings.ReplaceAll(c.Reserve(r).String(), "_", " ") // e.g. "per host"
			lo, hi := 0.0, math.Floor(ru.Value)-1
			var best *Forecast
			for lo < hi && ctx.Err() == nil {
				mid := math.Floor((lo + hi + 1) / 2)
				j, ok := withTerm(orig, func(t *resreq.Term) { t.Rusage[k].Value = mid })
				if !ok {
					break
				}
				if f, now := startsNow(j); now {
					lo, best = mid, f
				} else {
					hi = mid - 1
				}
			}
			if best != nil {
				j, _ := withTerm(orig, func(t *resreq.Term) { t.Rusage[k].Value = lo })
				add(j, best, fmt.Sprintf("-R %q", j.ResReq), fmt.Sprintf("%s=%s %s instead of %s", ru.Name, num(lo), per, num(ru.Value)))
			}
		}
	}

	// Another open queue.
	for q := range c.Queues {
		if cluster.QueueID(q) == orig.Queue || c.Queues[q].Closed || ctx.Err() != nil {
			continue
		}
		j := orig
		j.Queue = cluster.QueueID(q)
		if j.Estimate == 0 {
			j.Estimate = c.Queues[q].DefaultRunLimit
			j.Runtime = j.Estimate
		}
		if f, _ := startsNow(j); sooner(f) {
			add(j, f, "-q "+c.Queues[q].Name, "in queue "+c.Queues[q].Name)
		}
	}

	// One select[] term dropped.
	if term != nil && term.Select != nil {
		conj := conjuncts(term.Select)
		for k := range conj {
			if ctx.Err() != nil {
				break
			}
			rest := slices.Delete(slices.Clone(conj), k, k+1)
			j, ok := withTerm(orig, func(t *resreq.Term) { t.Select = conjunction(rest) })
			if !ok {
				continue
			}
			if f, _ := startsNow(j); sooner(f) {
				dropped := (&resreq.Term{Select: conj[k]}).String()
				add(j, f, fmt.Sprintf("-R %q", j.ResReq), "without "+dropped)
			}
		}
	}

	// A wider span: span[hosts=1] dropped, or a smaller ptile (the largest
	// that helps).
	if term != nil {
		var spans []resreq.Span
		switch term.Span.Kind {
		case resreq.SpanHostsOne:
			spans = []resreq.Span{{}}
		case resreq.SpanPtile:
			for p := term.Span.Ptile - 1; p >= 1; p-- {
				spans = append(spans, resreq.Span{Kind: resreq.SpanPtile, Ptile: p})
			}
			spans = append(spans, resreq.Span{})
		}
		for _, sp := range spans {
			if ctx.Err() != nil {
				break
			}
			j, ok := withTerm(orig, func(t *resreq.Term) { t.Span = sp })
			if !ok {
				continue
			}
			if f, _ := startsNow(j); sooner(f) {
				what := "spread over as many hosts as needed"
				if sp.Kind == resreq.SpanPtile {
					what = fmt.Sprintf("at most %d tasks a host", sp.Ptile)
				}
				add(j, f, fmt.Sprintf("-R %q", j.ResReq), what)
				break
			}
		}
	}
	if err == nil {
		err = ctx.Err()
	}
	return base, out, err
}

// simpleTerm returns the only term of a requirement of one alternative and
// one term, or nil.
func simpleTerm(r *resreq.Requirement) *resreq.Term {
	if r == nil || len(r.Alternatives) != 1 || len(r.Alternatives[0].Terms) != 1 {
		return nil
	}
	return r.Alternatives[0].Terms[0]
}

// withTerm returns j with its only term changed by edit (on a copy), its
// ResReq the canonical form; false when the result does not parse.
func withTerm(j cluster.Job, edit func(t *resreq.Term)) (cluster.Job, bool) {
	r, err := resreq.Parse(j.ResReq) // a fresh copy to edit
	if err != nil || simpleTerm(r) == nil {
		return j, false
	}
	edit(simpleTerm(r))
	s := r.String()
	if j.Req, err = resreq.Parse(s); err != nil {
		return j, false
	}
	j.ResReq = s
	return j, true
}

// conjuncts flattens a select expression's top-level && chain.
func conjuncts(e resreq.Expr) []resreq.Expr {
	if b, ok := e.(*resreq.Binary); ok && b.Op == resreq.OpAnd {
		return append(conjuncts(b.X), conjuncts(b.Y)...)
	}
	return []resreq.Expr{e}
}

// conjunction joins es with && (nil for none: no select section).
func conjunction(es []resreq.Expr) resreq.Expr {
	if len(es) == 0 {
		return nil
	}
	e := es[0]
	for _, x := range es[1:] {
		e = &resreq.Binary{Op: resreq.OpAnd, X: e, Y: x}
	}
	return e
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func num(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
