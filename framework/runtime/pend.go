package runtime

import (
	"cmp"
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
	case framework.HostLimit, framework.HostExclusive:
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
//  2. LimitReached, naming a limit, when no alternative could run on the
//     empty cluster under the maxima of the limits that apply to the job
//     (limitVerdict); like BadRequest it is Stuck;
//  3. SharedResource or LimitReached when every alternative failed the
//     job-level checks (the first alternative's reason);
//  4. SameUnsatisfiable or SpanUnsatisfiable when, for some alternative,
//     the hosts that can take tasks have enough capacity in total but the
//     plans could not use it (same[] present or rejected: Same; else Span);
//  5. when no host can take a task and none for a capacity reason (only
//     closed/unavailable state, select[] or same[] rule them out):
//     SameUnsatisfiable if some host satisfies select[] but does not
//     define a same[] attribute, else NoHostMatch;
//  6. otherwise the capacity reason counted on the most hosts, counting
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
	v := r.limitVerdict(job)
	if v.never.reason != framework.None {
		pr.Main, pr.Detail, pr.Stuck = v.never.reason, v.never.detail, true
		return
	}
	pr.Stuck = v.stuck
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
	case framework.HostExclusive:
		return framework.ExclusiveHost
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
	if e, ok := r.diags.get(k); ok && e.placed == r.placed {
		return e.d
	}
	r.bare = true
	d := r.diagnose(job)
	r.bare = false
	r.diags.set(k, sharedDiag{d, r.placed})
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
	d := diagnosis{counts: sc.counts[:0]} // built in scratch, interned at the end
	plain := len(sc.alts) == 1 && r.plain(job)
	hosts := c.Queues[job.Spec.Queue].Hosts
	n := len(c.Hosts)
	if hosts != nil {
		n = len(hosts)
	}
	classes := c.HasClasses()
	for i := 0; i < n; i++ {
		h := cluster.HostID(i)
		if hosts != nil {
			h = hosts[i]
		}
		if classes && c.IsClass(h) {
			r.diagnoseClass(job, h, plain, &d)
			continue
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
	sc.counts = d.counts
	d.counts = sc.intern(d.counts)
	return d
}

// intern returns a slice equal to counts that the caller may keep (nil
// when counts is empty): one of the last few it returned, when one is
// equal, else a copy. Host counts are never written once made (they are
// shared already: by the jobs of a class, and of a shared diagnosis), and
// from one cycle to the next they are often the same.
func (sc *diagScratch) intern(counts []framework.HostReasonCount) []framework.HostReasonCount {
	if len(counts) == 0 {
		return nil
	}
	for _, c := range sc.recent {
		if slices.Equal(c, counts) {
			return c
		}
	}
	c := slices.Clone(counts)
	if len(sc.recent) < recentCounts {
		sc.recent = append(sc.recent, c)
	} else {
		sc.recent[sc.next] = c
		sc.next = (sc.next + 1) % recentCounts
	}
	return c
}

// recentCounts is how many host counts diagScratch.intern keeps.
const recentCounts = 8

// diagnoseClass adds host class h to job's diagnosis d: its members as
// diagnose would count them one by one. An idle member is what check
// sees on the class for one task; a busy one fails every term that
// select[] and same[] let through for want of a slot.
func (r *Runner) diagnoseClass(job *framework.Job, h cluster.HostID, plain bool, d *diagnosis) {
	sc := &r.diag
	members, idle := r.view.Members(h), r.view.State.FreeSlots(h)
	if reason := r.hostState[h]; reason != framework.None {
		d.counts = addHostReason(d.counts, reasonKey{reason, -1}, members)
		return
	}
	if plain {
		if idle > 0 {
			d.anyUsable = true
			sc.sums[0] += idle
		}
		if busy := members - idle; busy > 0 {
			d.counts = addHostReason(d.counts, reasonKey{framework.HostNotEnoughSlots, -1}, busy)
		}
		return
	}
	idleBest, busyBest := reasonKey{detail: -1}, reasonKey{detail: -1}
	usable := false
	better := func(best *reasonKey, k reasonKey) {
		if best.reason == framework.None || hostRank(k.reason) > hostRank(best.reason) {
			*best = k
		}
	}
	for k, ai := range sc.alts {
		alt := &job.Req.Alts[ai]
		for ti := range alt.Terms {
			reason, detail := r.check(job, alt, &alt.Terms[ti], 1, nil, h, false)
			if reason != framework.None && hostRank(reason) < rankSlots {
				better(&idleBest, reasonKey{reason, detail})
				better(&busyBest, reasonKey{reason, detail})
				continue
			}
			better(&busyBest, reasonKey{framework.HostNotEnoughSlots, -1})
			if reason == framework.None {
				usable = true
				sc.sums[sc.offs[k]+ti] += idle // a member takes one task
				continue
			}
			better(&idleBest, reasonKey{reason, detail})
		}
	}
	if idle > 0 {
		if usable {
			d.anyUsable = true
		} else if idleBest.reason != framework.None {
			d.counts = addHostReason(d.counts, idleBest, idle)
		}
	}
	if busy := members - idle; busy > 0 && busyBest.reason != framework.None {
		d.counts = addHostReason(d.counts, busyBest, busy)
	}
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

// WantsSlotsOnly reports whether job is one FitsNowPlain answers for: when
// too few slots are free in all, want of slots (NotEnoughSlots) is the
// only reason it can pend for.
func (r *Runner) WantsSlotsOnly(job *framework.Job) bool {
	_, known := r.FitsNowPlain(job)
	return known
}

// diagScratch holds diagnose's buffers between calls.
type diagScratch struct {
	counts []framework.HostReasonCount // the diagnosis being made
	// recent are the host counts intern returned last, next the one it
	// replaces next.
	recent           [][]framework.HostReasonCount
	next             int
	alts, offs, sums []int
	caps             []capRun  // altNeverFits: the matching hosts' capacities
	joint            jointCaps // altNeverFits: every term's, for the terms together
	bounds           []framework.HostReasonCount
	// limits: altNeverFits, bounded: per limit, the matching hosts it
	// bounds below their capacity.
	limits []framework.HostReasonCount
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
