package submit

import (
	"strings"

	"github.com/xce-sched/xce/resreq"
)

// mergeResReq returns the job's resource requirement from its -R values
// (docs/submit.md, -R): none gives ""; one (or one that is not blank) is
// kept as written; several simple requirements are merged into one, in
// canonical form: select[] expressions joined by &&, order[] keys,
// rusage[] entries and same[] attributes concatenated, span[] from the
// one -R that has it. A name given twice in the merged order[], rusage[]
// or same[], span[] in two -R, or a compound or alternative requirement
// with another -R is an error at the later -R.
func mergeResReq(parts []reqPart) (string, *resreq.Requirement, *Error) {
	var keep []reqPart
	for _, p := range parts {
		if strings.TrimSpace(p.w.val) != "" {
			keep = append(keep, p)
		}
	}
	switch len(keep) {
	case 0:
		r, _ := resreq.Parse("")
		return "", r, nil
	case 1:
		return keep[0].w.val, keep[0].req, nil
	}
	hasSpan := false
	// Names seen in the merged order[], rusage[] and same[]: maps, so that
	// merging stays linear in the -R values' length.
	orders, usages, sames := map[string]bool{}, map[string]bool{}, map[string]bool{}
	m := &resreq.Term{}
	for i := range keep {
		p := &keep[i]
		if len(p.req.Alternatives) != 1 || len(p.req.Alternatives[0].Terms) != 1 || p.req.Alternatives[0].Terms[0].Count != 0 {
			return "", nil, p.w.errAt(-1, "-R", "a compound or alternative requirement must be the job's only -R")
		}
		t := p.req.Alternatives[0].Terms[0]
		if t.Select != nil {
			if m.Select == nil {
				m.Select = t.Select
			} else {
				m.Select = &resreq.Binary{Op: resreq.OpAnd, X: m.Select, Y: t.Select}
			}
		}
		for _, k := range t.Order {
			if orders[k.Name] {
				return "", nil, p.w.errAt(-1, "-R", "order key %s is also in an earlier -R", quote(k.Name))
			}
			orders[k.Name] = true
			m.Order = append(m.Order, k)
		}
		for _, u := range t.Rusage {
			if usages[u.Name] {
				return "", nil, p.w.errAt(-1, "-R", "rusage resource %s is also in an earlier -R", quote(u.Name))
			}
			usages[u.Name] = true
			m.Rusage = append(m.Rusage, u)
		}
		for _, a := range t.Same {
			if sames[a] {
				return "", nil, p.w.errAt(-1, "-R", "same attribute %s is also in an earlier -R", quote(a))
			}
			sames[a] = true
			m.Same = append(m.Same, a)
		}
		if t.Span.Kind != resreq.SpanNone {
			if hasSpan {
				return "", nil, p.w.errAt(-1, "-R", "span[] is also in an earlier -R")
			}
			m.Span, hasSpan = t.Span, true
		}
	}
	req := &resreq.Requirement{Alternatives: []*resreq.Compound{{Terms: []*resreq.Term{m}}}}
	text := req.String()
	if len(text) > MaxResReq {
		return "", nil, keep[len(keep)-1].w.errAt(-1, "-R", "the merged requirement is longer than %d bytes", MaxResReq)
	}
	// Parse the merged text so that Req's columns are the text's.
	r, err := resreq.Parse(text)
	if err != nil {
		e := keep[len(keep)-1].w.errAt(-1, "-R", "the merged requirement %s does not parse: %v", quote(text), err)
		e.Err = err
		return "", nil, e
	}
	return text, r, nil
}

// compoundTasks returns, for each compound alternative of r, the sum of
// its terms' counts and whether its last term omits its count.
func compoundTasks(r *resreq.Requirement) (sums []int64, open []bool) {
	for _, alt := range r.Alternatives {
		if len(alt.Terms) == 1 && alt.Terms[0].Count == 0 {
			continue
		}
		var s int64
		for _, t := range alt.Terms {
			s += int64(t.Count)
		}
		sums = append(sums, s)
		open = append(open, alt.Terms[len(alt.Terms)-1].Count == 0)
	}
	return sums, open
}

// resolveTasks returns the job's task counts: -n's, checked against a
// compound requirement as the scheduler will (framework.Compile: a fixed
// count equal to the terms' sum, an omitted last count taking the rest);
// without -n, a compound requirement's total, else 1.
func resolveTasks(f *fields, r *resreq.Requirement, rw word) (lo, hi int, err *Error) {
	if f.set[optTasks] {
		lo, hi = f.tasksMin, f.tasksMax
		if err := f.at[optTasks].report("-n", compoundProblem(r, lo, hi)); err != nil {
			return 0, 0, err
		}
		return lo, hi, nil
	}
	sums, open := compoundTasks(r)
	if len(sums) == 0 {
		return 1, 1, nil
	}
	for i, s := range sums {
		switch {
		case open[i]:
			return 0, 0, rw.errAt(-1, "-R", "a compound requirement whose last term omits its count needs -n")
		case s != sums[0]:
			return 0, 0, rw.errAt(-1, "-R", "compound alternatives ask for %d and %d tasks; one -n cannot match both", sums[0], s)
		case s > MaxTasks:
			return 0, 0, rw.errAt(-1, "-R", "the compound terms ask for %d tasks, more than %d", s, MaxTasks)
		}
	}
	return int(sums[0]), int(sums[0]), nil
}
