package runtime

import (
	"slices"

	"github.com/xce-sched/xce/cluster"
	"github.com/xce-sched/xce/framework"
)

// The host walk: how one plan's buckets claim hosts (docs/allocation.md).

// tryPlan claims one host per bucket of plan (a bucket's Count hosts; a
// host class gives several of its members at once), or rolls back and
// returns false when a bucket finds no host.
func (r *Runner) tryPlan(job *framework.Job, plan *framework.Plan, alt *framework.Alternative) bool {
	r.newAttempt()
	r.claims = slices.Grow(r.claims, min(len(plan.Buckets), 1024)) // grows with the largest plan only
	r.termsSeen = append(r.termsSeen[:0], make([]bool, len(alt.Terms))...)
	defer func() { r.first = true }()
	// resume is where the walk for the next host of the same bucket shape
	// goes on: after the last host claimed, or at it when it is a host
	// class with idle members left.
	resume := -1
	var prev framework.Bucket
	for b, bk := range plan.Buckets {
		term := &alt.Terms[bk.Term]
		cands := r.candidates(job, bk.Term, term)
		pins := plan.PinFor(bk.Term)
		same := b > 0 && prev.Slots == bk.Slots && prev.Term == bk.Term
		prev = bk
		for left := bk.Hosts(); left > 0; {
			wasFirst := r.first
			r.first = !r.termsSeen[bk.Term] && len(term.PerJob) > 0
			r.termsSeen[bk.Term] = true
			start, key, useCursor := 0, cursorKey{}, false
			switch {
			case same && wasFirst == r.first:
				// Continue where the previous identical bucket stopped:
				// every host before that point failed or is claimed by
				// this plan.
				start = resume
			case len(pins) == 0 && term.Order == nil && !term.Rising:
				key = cursorKey{job.Req, job.Spec.Queue, plan.Alt, bk.Term, bk.Slots, r.first}
				start, _ = r.cursor.get(key)
				useCursor = true
			}
			want := left
			if r.first {
				want = 1 // the host with the per-job rusage; the others walk afresh
			}
			pos, firstOpen, took := r.walk(job, alt, term, bk, b, pins, cands, start, useCursor, want)
			if useCursor {
				r.cursor.set(key, firstOpen)
			}
			if pos < 0 {
				r.rollback()
				return false
			}
			left -= took
			resume = pos + 1
			if h := hostAt(cands, pos); r.view.Cluster.IsClass(h) && r.view.State.FreeSlots(h) > 0 {
				resume = pos
			}
			same = true
		}
	}
	return true
}

// hostAt returns the host at position i of cands (nil: all hosts in
// order).
func hostAt(cands []cluster.HostID, i int) cluster.HostID {
	if cands == nil {
		return cluster.HostID(i)
	}
	return cands[i]
}

// walk looks for the first host from position start of cands (nil: all
// hosts in order) that takes bucket bk, and claims it: one host, or on a
// host class as many of its idle members as it can of the want hosts the
// bucket still needs. It returns the position of the claimed host (-1 if
// none), how many hosts it claimed there and, when track is set, the
// first position at or after start whose host the term alone does not
// rule out (claimed by this plan, vetoed or over-filled by a preparer, or
// the one chosen); hosts between start and it fail this bucket for every
// job with the same term until resources are released.
func (r *Runner) walk(job *framework.Job, alt *framework.Alternative, term *framework.Term, bk framework.Bucket, b int, pins []framework.Pin, cands []cluster.HostID, start int, track bool, want int) (pos, firstOpen, took int) {
	n := len(cands)
	if cands == nil {
		n = len(r.mark)
	}
	firstOpen = -1
	for i := start; i < n; i++ {
		h := hostAt(cands, i)
		class := r.view.Cluster.IsClass(h)
		if r.mark[h] == r.epoch {
			if firstOpen < 0 {
				firstOpen = i // claimed by this plan: free again after a rollback
			}
			if !class {
				continue
			}
		}
		if reason, _ := r.check(job, alt, term, bk.Slots, pins, h, cands == nil); reason != framework.None {
			if track && firstOpen < 0 && r.termFits(job, term, bk.Slots, h, cands == nil) {
				firstOpen = i // only a preparer ruled it out: another job may fit
			}
			continue
		}
		took = 1
		if class {
			idle := r.view.State.FreeSlots(h)
			if r.walkBusy != nil && len(term.Order) == 0 && r.walkBusy[i] {
				idle -= r.keep[h] // the busy members' place: the idle ones come later
			}
			if idle <= 0 {
				if track && firstOpen < 0 {
					firstOpen = i // its idle members come later, and another plan may free these
				}
				continue
			}
			if took = min(want, idle); took > 1 && !r.prepareMembers(job, alt, term, took, h) {
				if track && firstOpen < 0 {
					firstOpen = i // a preparer ruled out so many: another job may fit
				}
				continue
			}
		}
		r.claim(h, b)
		if firstOpen < 0 {
			firstOpen = i
		}
		return i, firstOpen, took
	}
	if firstOpen < 0 {
		firstOpen = n
	}
	return -1, firstOpen, 0
}

// prepareMembers rebuilds r.req for placing one task of term on each of
// m idle members of host class h (check passed for one) and checks the
// limit counters the preparers charge for all of them: a member's own
// needs are those check saw, so only the counters add up. It reports
// whether they fit.
func (r *Runner) prepareMembers(job *framework.Job, alt *framework.Alternative, term *framework.Term, m int, h cluster.HostID) bool {
	if reason, _ := r.prepare(job, alt, term, m, h); reason != framework.None {
		return false
	}
	st := r.view.State
	for _, ca := range r.req.Host.Counters {
		if ca.Amount > 0 && !cluster.Within(ca.Amount, st.CounterFree(ca.Counter)) {
			return false
		}
	}
	return true
}

// check decides whether host h can take nslots tasks of term: the cheap
// pre-filter, then the prepare fan-out that rebuilds the per-host request,
// then the authoritative check of that request against the host's free
// counters. It returns None, or the host reason and its detail (a resource
// or limit number, -1 when the reason has none).
func (r *Runner) check(job *framework.Job, alt *framework.Alternative, term *framework.Term, nslots int, pins []framework.Pin, h cluster.HostID, checkQueue bool) (framework.Reason, int32) {
	if reason := r.hostState[h]; reason != framework.None {
		return reason, -1
	}
	st := r.view.State
	vals := st.HostVals(h)
	// Pre-filter.
	if checkQueue && !r.view.Cluster.QueueHasHost(job.Spec.Queue, h) {
		return framework.HostSelect, -1
	}
	if !term.Select.Match(vals) {
		return framework.HostSelect, -1
	}
	if !term.SameDefined(vals) {
		return framework.HostSame, -1
	}
	for _, p := range pins {
		if vals[p.Col] != p.Value {
			return framework.HostSame, -1
		}
	}
	if free := vals[cluster.ColSlots]; free < float64(nslots) || nslots > 1 && r.view.Cluster.IsClass(h) {
		return framework.HostNotEnoughSlots, -1 // a member of a class has one slot
	}
	// Prepare fan-out: a fresh per-host request for this candidate.
	if reason, detail := r.prepare(job, alt, term, nslots, h); reason != framework.None {
		return reason, detail
	}
	// Authoritative check.
	if r.req.Host.Slots > st.FreeSlots(h) {
		return framework.HostNotEnoughSlots, -1
	}
	for _, ra := range r.req.Host.Res {
		if !cluster.Within(ra.Amount, st.Free(h, ra.Res)) { // NaN: the host lacks the resource
			return framework.HostNotEnoughResource, int32(ra.Res)
		}
	}
	for _, ca := range r.req.Host.Counters {
		if ca.Amount > 0 && !cluster.Within(ca.Amount, st.CounterFree(ca.Counter)) {
			if c := st.Counter(ca.Counter); c.Reason != 0 {
				return framework.Reason(c.Reason), -1 // a plugin's own counter
			}
			return framework.HostLimit, st.Counter(ca.Counter).Limit
		}
	}
	return framework.None, -1
}

// termFits reports whether nslots tasks of term alone fit host h now: the
// checks before the prepare fan-out, and what the term's own rusage
// reserves there (per-job rusage when r.first).
// When it is false no job with this term fits h, whatever its preparers
// add.
func (r *Runner) termFits(job *framework.Job, term *framework.Term, nslots int, h cluster.HostID, checkQueue bool) bool {
	if r.hostState[h] != framework.None || checkQueue && !r.view.Cluster.QueueHasHost(job.Spec.Queue, h) {
		return false
	}
	st := r.view.State
	vals := st.HostVals(h)
	if !term.Select.Match(vals) || !term.SameDefined(vals) || vals[cluster.ColSlots] < float64(nslots) || nslots > 1 && r.view.Cluster.IsClass(h) {
		return false
	}
	// A resource has one reserve method: each amount stands alone.
	for _, ru := range term.PerSlot {
		if !cluster.Within(ru.Amount*float64(nslots), st.Free(h, ru.Res)) {
			return false
		}
	}
	for _, ru := range term.PerHost {
		if !cluster.Within(ru.Amount, st.Free(h, ru.Res)) {
			return false
		}
	}
	if r.first {
		for _, ru := range term.PerJob {
			if !cluster.Within(ru.Amount, st.Free(h, ru.Res)) {
				return false
			}
		}
	}
	return true
}

// prepare rebuilds r.req for placing nslots tasks of term on host h (on
// a host class: one on each of nslots members) and runs every Preparer.
// It returns a preparer's veto, if any.
func (r *Runner) prepare(job *framework.Job, alt *framework.Alternative, term *framework.Term, nslots int, h cluster.HostID) (framework.Reason, int32) {
	q := &r.req
	q.Job, q.Alt, q.Term = job, alt, term
	q.NSlots, q.NHosts = nslots, 1
	if r.view.Cluster.IsClass(h) {
		q.NHosts = nslots
	}
	q.Claims = r.claims
	q.Host.Reset()
	q.Host.Slots = nslots
	for _, ru := range term.PerSlot {
		q.Host.Add(ru.Res, ru.Amount*float64(nslots))
	}
	hosts := 1.0
	if r.view.Cluster.IsClass(h) {
		hosts = float64(nslots) // a member per task, each reserving its per-host rusage
	}
	for _, ru := range term.PerHost {
		q.Host.Add(ru.Res, ru.Amount*hosts)
	}
	if r.first {
		for _, ru := range term.PerJob {
			q.Host.Add(ru.Res, ru.Amount)
		}
	}
	if r.bare {
		return framework.None, -1
	}
	for _, p := range r.preparers {
		if reason, detail := p.PrepareHost(q, h); reason != framework.None {
			return reason, detail
		}
	}
	return framework.None, -1
}

// newAttempt starts a plan attempt: no host is claimed by it yet.
func (r *Runner) newAttempt() {
	r.claims = r.claims[:0]
	r.arena = r.arena[:0]
	r.counters = r.counters[:0]
	r.epoch++
	if r.epoch == 0 { // wrapped: forget every old mark
		clear(r.mark)
		r.epoch = 1
	}
}

// claim reserves the per-host request on h for bucket b and keeps a
// snapshot of it, owned by the attempt until finalize or rollback.
func (r *Runner) claim(h cluster.HostID, b int) {
	c := framework.Claim{Bucket: b, HostAlloc: cluster.HostAlloc{Host: h, Slots: r.req.Host.Slots}}
	if n := len(r.req.Host.Res); n > 0 {
		r.arena = append(r.arena, r.req.Host.Res...)
		c.Res = r.arena[len(r.arena)-n : len(r.arena) : len(r.arena)]
	}
	if n := len(r.req.Host.Counters); n > 0 {
		r.counters = append(r.counters, r.req.Host.Counters...)
		c.Counters = r.counters[len(r.counters)-n : len(r.counters) : len(r.counters)]
	}
	r.view.State.Reserve(&c.HostAlloc)
	r.claims = append(r.claims, c)
	r.mark[h] = r.epoch
}

// rollback releases the attempt's claims in reverse order. It is
// idempotent: the claims are gone afterwards.
func (r *Runner) rollback() {
	for i := len(r.claims) - 1; i >= 0; i-- {
		c := &r.claims[i]
		r.view.State.Release(&c.HostAlloc)
		r.mark[c.Host] = 0
	}
	r.claims = r.claims[:0]
	r.arena = r.arena[:0]
	r.counters = r.counters[:0]
}
