package runtime

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/xce-sched/xce/cluster"
	"github.com/xce-sched/xce/framework"
	"github.com/xce-sched/xce/resreq"
)

// allVetoed returns the first alternative's job-level reason when every
// alternative has one, else None.
func (r *Runner) allVetoed() reasonKey {
	for _, v := range r.altVeto {
		if v.reason == framework.None {
			return reasonKey{}
		}
	}
	if len(r.altVeto) == 0 {
		return reasonKey{}
	}
	return r.altVeto[0]
}

// pendBadRequest records that job's request can never run here.
func (r *Runner) pendBadRequest(job *framework.Job, err error) {
	job.Reasons = framework.PendReasons{Main: framework.BadRequest, Detail: -1, Stuck: true}
	if err != nil {
		job.Reasons.Note = err.Error()
	}
}

// hostRank orders host reasons by how far the host got through the checks;
// a host that fails every term keeps the reason of the term it got furthest
// with.
func hostRank(r framework.Reason) int {
	switch r {
	case framework.HostClosed, framework.HostUnavail:
		return 0
	case framework.HostSelect:
		return 1
	case framework.HostSame: // checked after select[]
		return 2
	case framework.HostNotEnoughSlots:
		return rankSlots
	case framework.HostNotEnoughResource:
		return 4
	case framework.HostLimit:
		return 5
	}
	return 6
}

// rankSlots is the hostRank of the first capacity reason.
const rankSlots = 3

// pend chooses job's main reason and counts its host reasons after every
// plan failed (docs/pending-reasons.md):
//
//  1. BadRequest when no alternative could run even on an empty cluster
//     (more tasks than the queue's hosts have slots, span[hosts=1] larger
//     than any host, more of a shared resource than exists);
//  2. SharedResource or LimitReached when every alternative failed the
//     job-level checks (the first alternative's reason);
//  3. SameUnsatisfiable or SpanUnsatisfiable when, for some alternative,
//     the hosts that can take tasks have enough capacity in total but the
//     plans could not use it (same[] present or rejected: Same; else Span);
//  4. when no host can take a task and none for a capacity reason (only
//     closed/unavailable state, select[] or same[] rule them out):
//     SameUnsatisfiable if some host satisfies select[] but does not
//     define a same[] attribute, else NoHostMatch;
//  5. otherwise the capacity reason counted on the most hosts, counting
//     for a host that cannot take a task why not (slots, a resource, a
//     limit) and for a host that can take some tasks what stops it taking
//     more than it can (a resource or a limit, when below its free slots);
//     ties go to the more specific reason: limit, then resource, then slots.
//
// Host reasons say why a host cannot take even one task of any term of any
// tried alternative; hosts that could take a task have none.
func (r *Runner) pend(job *framework.Job, out outcome) {
	pr := &job.Reasons
	pr.Detail = -1
	if note := r.neverFits(job); note != "" {
		pr.Main, pr.Note, pr.Stuck = framework.BadRequest, note, true
		return
	}
	pr.Stuck = r.isStuck(job)
	if veto := r.allVetoed(); veto.reason != framework.None {
		pr.Main, pr.Detail = veto.reason, veto.detail
		if veto.reason == framework.SharedResource {
			for _, alt := range job.Req.Alts {
				for _, sh := range alt.Shared {
					if !cluster.Within(sh.Amount, r.view.State.SharedFree(sh.Shared)) && !slices.Contains(pr.Shared, int32(sh.Shared)) {
						pr.Shared = append(pr.Shared, int32(sh.Shared))
					}
				}
			}
		}
		return
	}
	d := r.sharedDiagnosis(job)
	pr.Hosts = d.counts
	switch {
	case d.enough && (out.rejected || d.same):
		pr.Main = framework.SameUnsatisfiable
	case d.enough:
		pr.Main = framework.SpanUnsatisfiable
	case d.capacity == (reasonKey{}) && !d.anyUsable && d.noSameValue:
		pr.Main = framework.SameUnsatisfiable
	case d.capacity == (reasonKey{}) && !d.anyUsable:
		pr.Main = framework.NoHostMatch
	case d.capacity != (reasonKey{}):
		pr.Main, pr.Detail = mainOf(d.capacity.reason), d.capacity.detail
	default:
		pr.Main = framework.NotEnoughSlots
	}
}

func mainOf(host framework.Reason) framework.Reason {
	switch host {
	case framework.HostNotEnoughResource:
		return framework.NotEnoughResource
	case framework.HostLimit:
		return framework.LimitReached
	}
	return framework.NotEnoughSlots
}

// diagKey names a shared host diagnosis: the request, queue and task
// count, and which alternatives the job-level checks ruled out.
type diagKey struct {
	static staticKey
	vetoed uint64 // bit i: alternative i was ruled out
}

// sharedDiagnosis returns job's host diagnosis. When every preparer is
// slack for job (framework.Slacker: its limits have room for all of it),
// limits are not why it pends: the diagnosis is made without the
// preparers, and so is the same for every such job with the same request,
// queue, task count and vetoed alternatives, whatever its user. It is
// shared among them until the next job is placed (then the hosts have
// changed, and the next one is made afresh).
func (r *Runner) sharedDiagnosis(job *framework.Job) diagnosis {
	if !r.allSlack || len(r.altVeto) > 64 {
		return r.diagnose(job)
	}
	for _, sl := range r.slackers {
		if !sl.Slack(job, &r.view) {
			return r.diagnose(job)
		}
	}
	k := diagKey{static: staticKey{job.Req, job.Spec.Queue, job.Spec.TasksMin, job.Spec.TasksMax}}
	for i, v := range r.altVeto {
		if v.reason != framework.None {
			k.vetoed |= 1 << i
		}
	}
	if e, ok := r.diags[k]; ok && e.placed == r.placed {
		return e.d
	}
	r.bare = true
	d := r.diagnose(job)
	r.bare = false
	r.diags[k] = sharedDiag{d, r.placed}
	return d
}

// sharedDiag is a shared diagnosis and the runner's placement count when
// it was made.
type sharedDiag struct {
	d      diagnosis
	placed uint64
}

type reasonKey struct {
	reason framework.Reason
	detail int32
}

type diagnosis struct {
	counts    []framework.HostReasonCount
	capacity  reasonKey // most frequent capacity reason, zero if none
	anyUsable bool      // some host can take a task of some term
	enough    bool      // some alternative has enough capacity in total
	same      bool      // that alternative has same[]
	// noSameValue: some host passes select[] of a term but does not
	// define its same[] attributes (host reason HostSame).
	noSameValue bool
}

// diagnose evaluates every host of the job's queue against every term of
// the alternatives that passed shared prep, as if placing one task.
func (r *Runner) diagnose(job *framework.Job) diagnosis {
	c := r.view.Cluster
	st := r.view.State
	// Scratch: the tried alternatives, and per (alternative, term) the
	// total capacity, flat with offsets.
	sc := &r.diag
	sc.alts, sc.offs, sc.sums, sc.bounds = sc.alts[:0], sc.offs[:0], sc.sums[:0], sc.bounds[:0]
	for ai := range job.Req.Alts {
		if r.altVeto[ai].reason == framework.None {
			sc.alts = append(sc.alts, ai)
			sc.offs = append(sc.offs, len(sc.sums))
			for range job.Req.Alts[ai].Terms {
				sc.sums = append(sc.sums, 0)
			}
		}
	}
	d := diagnosis{}
	plain := len(sc.alts) == 1 && r.plain(job)
	hosts := c.Queues[job.Spec.Queue].Hosts
	n := len(c.Hosts)
	if hosts != nil {
		n = len(hosts)
	}
	for i := 0; i < n; i++ {
		h := cluster.HostID(i)
		if hosts != nil {
			h = hosts[i]
		}
		if plain {
			// A request with no select[], rusage[] or limits: a host is
			// closed, full, or can take its free slots.
			switch free := st.FreeSlots(h); {
			case r.hostState[h] != framework.None:
				d.counts = addHostReason(d.counts, reasonKey{r.hostState[h], -1}, 1)
			case free == 0:
				d.counts = addHostReason(d.counts, reasonKey{framework.HostNotEnoughSlots, -1}, 1)
			default:
				d.anyUsable = true
				sc.sums[0] += free
			}
			continue
		}
		best, usable := reasonKey{detail: -1}, false
		for k, ai := range sc.alts {
			alt := &job.Req.Alts[ai]
			for ti := range alt.Terms {
				term := &alt.Terms[ti]
				reason, detail := r.check(job, alt, term, 1, nil, h, false)
				if reason == framework.None {
					usable = true
					capa := r.capacity(job, alt, term, h)
					sc.sums[sc.offs[k]+ti] += capa
					if capa < st.FreeSlots(h) {
						reason, detail := r.check(job, alt, term, capa+1, nil, h, false)
						sc.bounds = addHostReason(sc.bounds, reasonKey{reason, detail}, 1)
					}
					continue
				}
				if best.reason == framework.None || hostRank(reason) > hostRank(best.reason) {
					best = reasonKey{reason, detail}
				}
			}
		}
		if usable {
			d.anyUsable = true
			continue
		}
		if best.reason != framework.None {
			d.counts = addHostReason(d.counts, best, 1)
		}
	}
	for k, ai := range sc.alts {
		alt := &job.Req.Alts[ai]
		ok := true
		for ti := range alt.Terms {
			need := alt.Terms[ti].Tasks
			if need == 0 {
				need = job.Spec.TasksMin
			}
			if sc.sums[sc.offs[k]+ti] < need {
				ok = false
			}
		}
		if ok {
			d.enough = true
			for ti := range alt.Terms {
				d.same = d.same || len(alt.Terms[ti].Same) > 0
			}
		}
	}
	d.noSameValue = slices.ContainsFunc(d.counts, func(hc framework.HostReasonCount) bool { return hc.Reason == framework.HostSame })
	slices.SortFunc(d.counts, func(a, b framework.HostReasonCount) int {
		return cmp.Or(cmp.Compare(b.Hosts, a.Hosts), cmp.Compare(a.Reason, b.Reason), cmp.Compare(a.Detail, b.Detail))
	})
	// The capacity reason, counted over blocked hosts and bounded ones.
	merged := sc.bounds
	for _, hc := range d.counts {
		if hostRank(hc.Reason) >= rankSlots {
			merged = addHostReason(merged, reasonKey{hc.Reason, hc.Detail}, hc.Hosts)
		}
	}
	sc.bounds = merged
	top := 0
	for _, hc := range merged {
		k := reasonKey{hc.Reason, hc.Detail}
		if hostRank(k.reason) < rankSlots {
			continue
		}
		rk, rb := hostRank(k.reason), hostRank(d.capacity.reason)
		if hc.Hosts > top || hc.Hosts == top && (rk > rb || rk == rb && k.detail < d.capacity.detail) {
			top, d.capacity = hc.Hosts, k
		}
	}
	return d
}

// plain reports whether job's request is one simple term with no select[],
// rusage[] or shared needs, and no preparer (limit) takes part (none is
// installed, or the diagnosis is bare): a host then takes as many of its
// tasks as it has free slots, if it is open.
func (r *Runner) plain(job *framework.Job) bool {
	if len(r.preparers) > 0 && !r.bare || len(job.Req.Alts) != 1 || len(job.Req.Alts[0].Terms) != 1 || len(job.Req.Alts[0].Shared) > 0 {
		return false
	}
	return job.Req.Alts[0].Terms[0].Plain()
}

// FitsNowPlain answers "would job fit now?" without a host walk when it
// can: for a plain request without span[] or same[] on a queue without a
// host list, in a cluster with every host open, the job fits iff the free
// slots add up to its minimum task count. known is false otherwise.
func (r *Runner) FitsNowPlain(job *framework.Job) (fits, known bool) {
	if job.Req == nil || !r.allOpen || !r.plain(job) || r.view.Cluster.Queues[job.Spec.Queue].Hosts != nil {
		return false, false
	}
	t := &job.Req.Alts[0].Terms[0]
	if len(t.Same) > 0 || (t.Span.Kind != resreq.SpanNone && t.Span.Kind != resreq.SpanHostsAny) {
		return false, false
	}
	return r.view.State.TotalFreeSlots() >= job.Spec.TasksMin, true
}

// diagScratch holds diagnose's buffers between calls.
type diagScratch struct {
	alts, offs, sums []int
	caps             []int // altNeverFits: the matching hosts' capacities
	bounds           []framework.HostReasonCount
}

// capacity returns how many tasks of term host h can take now, as the
// runner's own check decides (limits included): the largest k, at most the
// host's free slots and per-slot rusage allow, for which the check passes.
// The check is monotone in k, so a binary search finds it. The caller has
// checked that k = 1 passes.
func (r *Runner) capacity(job *framework.Job, alt *framework.Alternative, term *framework.Term, h cluster.HostID) int {
	lo, hi := 1, max(r.view.Capacity(h, term), 1)
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if reason, _ := r.check(job, alt, term, mid, nil, h, false); reason == framework.None {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return lo
}

func addHostReason(counts []framework.HostReasonCount, k reasonKey, n int) []framework.HostReasonCount {
	for i := range counts {
		if counts[i].Reason == k.reason && counts[i].Detail == k.detail {
			counts[i].Hosts += n
			return counts
		}
	}
	return append(counts, framework.HostReasonCount{Reason: k.reason, Detail: k.detail, Hosts: n})
}

// neverFits returns why no alternative of job could run even on an empty
// cluster (every host of the queue open and idle), or "" when one could. An
// alternative whose select[] no host matches is left to NoHostMatch: it
// returns "" when that is the only obstacle.
func (r *Runner) neverFits(job *framework.Job) string {
	key := staticKey{job.Req, job.Spec.Queue, job.Spec.TasksMin, job.Spec.TasksMax}
	if why, ok := r.never[key]; ok {
		return why
	}
	why := r.neverFitsUncached(job)
	r.never[key] = why
	return why
}

// staticKey identifies what neverFits depends on: the request, the queue
// and the task count (the idle cluster does not change).
type staticKey struct {
	req      *framework.Request
	queue    cluster.QueueID
	min, max int
}

func (r *Runner) neverFitsUncached(job *framework.Job) string {
	why := ""
	for ai := range job.Req.Alts {
		altWhy, noMatch := r.altNeverFits(job, &job.Req.Alts[ai], false)
		if altWhy == "" && !noMatch {
			return ""
		}
		if why == "" {
			why = altWhy
		}
	}
	return why
}

// NeverFits returns why job can never run on this cluster (its BadRequest
// note), or "".
func (r *Runner) NeverFits(job *framework.Job) string {
	if job.Req == nil {
		if job.ReqErr != nil {
			return job.ReqErr.Error()
		}
		return "no request"
	}
	return r.neverFits(job)
}

// isStuck reports whether job could not run even with every open host
// idle and none of its limits used: each alternative fails on the open
// hosts, or a limit's job-level pass refuses it with nothing used.
func (r *Runner) isStuck(job *framework.Job) bool {
	key := r.classOf(job)
	if s, ok := r.stuck[key]; ok {
		return s
	}
	idle := framework.View{Cluster: r.view.Cluster, State: r.empty}
	fits := r.openFits(job)
	stuck := true
	for ai := range job.Req.Alts {
		alt := &job.Req.Alts[ai]
		if !fits[ai] {
			continue
		}
		tasks := minTasks(job)
		vetoed := false
		for _, p := range r.jobPreparers {
			if reason, _ := p.PrepareJob(job, alt, tasks, &idle); reason != framework.None {
				vetoed = true
				break
			}
		}
		if !vetoed {
			stuck = false
			break
		}
	}
	r.stuck[key] = stuck
	return stuck
}

// openFits returns, per alternative of job, whether it could run on the
// queue's open hosts with nothing running (limits aside); cached, as
// neverFits, per request, queue and task count.
func (r *Runner) openFits(job *framework.Job) []bool {
	key := staticKey{job.Req, job.Spec.Queue, job.Spec.TasksMin, job.Spec.TasksMax}
	if fits, ok := r.openFit[key]; ok {
		return fits
	}
	fits := make([]bool, len(job.Req.Alts))
	for ai := range job.Req.Alts {
		why, noMatch := r.altNeverFits(job, &job.Req.Alts[ai], true)
		fits[ai] = why == "" && !noMatch
	}
	r.openFit[key] = fits
	return fits
}

// altNeverFits checks one alternative against the idle cluster (only its
// open hosts when openOnly): shared
// totals; per term, the matching hosts' capacity (slots bounded by per-slot
// rusage) in all, on one host for span[hosts=1], and in hosts of ptile
// tasks for span[ptile=N]; and enough distinct hosts for all terms (the
// hosts of a plan are distinct). noMatch is set when a term matches no host.
// A host matches when the static part of the term's select[] holds on it
// (framework.Term.Static): a condition on free slots or a free consumable
// may hold on a busy host that it fails on an idle one (select[slots < 2]),
// so it never makes a request "never".
func (r *Runner) altNeverFits(job *framework.Job, alt *framework.Alternative, openOnly bool) (why string, noMatch bool) {
	c := r.view.Cluster
	empty := framework.View{Cluster: c, State: r.empty}
	q := job.Spec.Queue
	for _, sh := range alt.Shared {
		if total := c.Shared[sh.Shared].Total; !cluster.Within(sh.Amount, total) {
			return fmt.Sprintf("needs %v of shared resource %s, the cluster has %v", sh.Amount, c.Shared[sh.Shared].Name, total), false
		}
	}
	minHosts := 0
	for ti := range alt.Terms {
		t := &alt.Terms[ti]
		need := t.Tasks
		if need == 0 {
			need = job.Spec.TasksMin
		}
		total, largest, matching, slots := 0, 0, 0, 0
		caps := r.diag.caps[:0]
		for h := range c.Hosts {
			id := cluster.HostID(h)
			vals := r.empty.HostVals(id)
			if !c.QueueHasHost(q, id) || !t.Static.Match(vals) || !t.SameDefined(vals) || openOnly && r.hostState[id] != framework.None {
				continue
			}
			matching++
			n := empty.Capacity(id, t)
			slots += c.Hosts[h].Slots
			total += n
			largest = max(largest, n)
			caps = append(caps, n)
		}
		r.diag.caps = caps
		if matching == 0 {
			noMatch = true
			continue
		}
		bound := ""
		if total < slots {
			bound = " (per-slot rusage[] bounds them below their slots)"
		}
		switch t.Span.Kind {
		case resreq.SpanHostsOne:
			minHosts++
			if need > largest {
				return fmt.Sprintf("span[hosts=1] needs %d tasks on one host, the largest matching host takes %d%s", need, largest, bound), false
			}
		case resreq.SpanPtile:
			p := t.Span.Ptile
			fullNeed, rem := need/p, need%p
			full, other := 0, 0
			for _, n := range caps {
				if n >= p {
					full++
				} else if rem > 0 && n >= rem {
					other++
				}
			}
			minHosts += fullNeed
			if rem > 0 {
				minHosts++
			}
			if full < fullNeed || rem > 0 && full+other < fullNeed+1 {
				return fmt.Sprintf("span[ptile=%d] needs %s that take %d tasks each%s; the matching hosts that can: %d", p, plural(fullNeed, "host"), p, remText(rem), full), false
			}
		default:
			minHosts++
		}
		if need > total {
			return fmt.Sprintf("needs %s, the matching hosts take %d in all%s", plural(need, "task"), total, bound), false
		}
	}
	if nh := empty.NumHosts(q); len(alt.Terms) > 1 && minHosts > nh && !openOnly {
		return fmt.Sprintf("the compound terms need %d distinct hosts, the queue has %d", minHosts, nh), false
	}
	return "", noMatch
}

func remText(rem int) string {
	if rem == 0 {
		return ""
	}
	return fmt.Sprintf(" and one more that takes %d", rem)
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}
