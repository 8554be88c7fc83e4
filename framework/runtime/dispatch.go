package runtime

import (
	"cmp"
	"math"
	"slices"
	"sort"

	"github.com/xce-sched/xce/cluster"
	"github.com/xce-sched/xce/framework"
)

// dispatcher implements framework.Dispatcher for one cycle of a Scheduler.
// Its projections (Earliest, TryStart) run the same plugins and runner on
// a projected state (projection.go).
type dispatcher struct {
	s   *Scheduler
	now int64
	// incremental: this is not the first cycle (Unchanged may hold);
	// released and offPlan: resources were released since the previous
	// cycle, and some at another time than the estimated end that
	// projections assumed (early, or late after an overrun).
	incremental, released, offPlan bool
	// partial: the cycle leaves out the jobs whose decision stands
	// (quiet.go), and so may leave out those too large to start.
	partial bool

	// The projection machinery, built on first use in a cycle (setup);
	// deferred holds the reservations made before it was (setup puts
	// them in, in order), so that a cycle that only re-records a
	// reservation builds nothing.
	ready    bool
	deferred []framework.Reservation
	proj     projection
	win      *cluster.State // the window being planned in
	tmp      *cluster.State // scratch for windows
	planner  *Runner        // runs over win
	merge    mergeScratch   // projection.reserveAll's
	scan     slotScan       // scratch: window slot minima
	busy     []busyOrder    // per queue (busyFirst)
	due      []runningEnd   // setup's scratch
	// held lists, in the cycle's order, the pending jobs whose queue keeps
	// reservations (framework.KeepsReservations) and that hold one from an
	// earlier cycle: holdSegment puts them in the projection just before
	// their queue is dispatched. verify: some may no longer fit (a running
	// job overran its estimate), so each is checked against those before
	// it.
	held   []*framework.Job
	verify bool
	// changed: this cycle placed or reserved something (ahead of the
	// queues not yet dispatched); unguarded: it placed a job over the
	// reservations in the projection (a fallback that should not happen).
	changed, unguarded bool
	// stood: the job whose kept reservation Earliest last found standing
	// (standing.go), left in the projection for Reserve to re-record.
	stood *framework.Job
	// vacated: a job of a queue that keeps reservations started before
	// its reservation, or its reservation moved earlier: the window it
	// held is free for the jobs re-planned before it in this cycle.
	vacated bool

	// preempted: the cycle preempted a job (what it gave back may let any
	// later job start).
	preempted bool
	// Preemption scratch (preempt.go): cands are the candidates of queue
	// candsFor-1 in this cycle (candsFor 0: none yet).
	victims   []victim
	keepOrder []int
	onHost    []bool
	order     []cluster.HostID
	cands     []*framework.Job
	candsFor  cluster.QueueID
	hostCands [][]int32 // per host: the positions in cands of its candidates
	given     []uint32  // per candidate: the attempt (epoch) that gave it back
	epoch     uint32    // the preemption attempt, per queue and cycle
}

var _ framework.Dispatcher = (*dispatcher)(nil)

// reset prepares the dispatcher for a cycle at time now.
func (d *dispatcher) reset(s *Scheduler, now int64) {
	d.s, d.now, d.ready, d.partial = s, now, false, false
	clear(d.deferred)
	d.deferred = d.deferred[:0]
	clear(d.held)
	d.held, d.verify, d.changed, d.unguarded, d.vacated = d.held[:0], false, false, false, false
	d.stood = nil
	d.candsFor, d.preempted = 0, false
}

// Now implements framework.Dispatcher.
func (d *dispatcher) Now() int64 { return d.now }

// allocator returns the profile's allocator for job: the first that takes
// it (framework.JobFilter), else the last.
func (d *dispatcher) allocator(job *framework.Job) framework.Allocator {
	a := d.s.allocators
	for i, f := range d.s.filters[:len(a)-1] {
		if f == nil || f.Handles(job) {
			return a[i]
		}
	}
	return a[len(a)-1]
}

// Allocate implements framework.Dispatcher. Once the cycle holds
// reservations (of jobs ahead of this one: a queue of higher priority, an
// EASY head, kept ones of a conservative queue) it is TryStart: the job
// starts now only if it delays none of them.
func (d *dispatcher) Allocate(job *framework.Job) (bool, error) {
	if d.reserving() {
		return d.TryStart(job)
	}
	if d.keepsTooLarge(job) {
		return false, nil
	}
	return d.allocate(job)
}

// keepsTooLarge reports whether job, which would be the runner's attempt,
// needs more slots than are free in all and is one a partial cycle would
// have left out had so few been free at its start (Options.SkipTooLarge:
// it pended for want of slots, and a plain request with no span[] or
// same[] on open hosts can pend for nothing else): it keeps its reasons,
// and the attempt is spared.
func (d *dispatcher) keepsTooLarge(job *framework.Job) bool {
	return d.partial && job.Req != nil && job.Reserved == nil && minTasks(job) > d.s.State.TotalFreeSlots() &&
		d.s.tooLarge(job) > 0 && d.s.runner.WantsSlotsOnly(job)
}

// allocate is one attempt of the live runner.
func (d *dispatcher) allocate(job *framework.Job) (bool, error) {
	placed, err := d.s.runner.Allocate(job, d.allocator(job))
	if placed {
		d.started(job)
	}
	return placed, err
}

// Start implements framework.Dispatcher.
func (d *dispatcher) Start(job *framework.Job, r framework.Reservation) error {
	if err := d.s.runner.Place(job, r.Alloc); err != nil {
		return err
	}
	d.started(job)
	return nil
}

// started records a job the cycle started: its start time, the observers,
// and, for the projections, its estimated end and the changed free slots.
func (d *dispatcher) started(job *framework.Job) {
	d.changed = true
	if job.Reserved != nil {
		d.vacated = d.vacated || job.Reserved.Start > d.now && d.s.keeps[job.Spec.Queue]
		d.unreserve(job)
	}
	job.Start = d.now
	d.s.addRunning(job)
	for _, o := range d.s.observers {
		o.JobStarted(job, d.now)
	}
	if d.ready {
		d.proj.ending(expectedEnd(job, d.now), job.Alloc)
		d.forgetBusy()
	}
}

// Reserve implements framework.Dispatcher. A reservation re-recorded as
// it stands (an unchanged EASY head's) keeps its record: reservations
// are never written in place, so the job's may be shared.
func (d *dispatcher) Reserve(job *framework.Job, r framework.Reservation) {
	d.changed = true
	old := job.Reserved
	if stood := d.stood == job; stood || d.stood != nil {
		d.stood = nil
		if stood && old != nil && *old == r {
			return // it stands (Earliest): in the projection as it was
		}
	}
	if old != nil {
		d.vacated = d.vacated || r.Start < old.Start && d.s.keeps[job.Spec.Queue]
		d.unreserve(job)
	}
	if d.ready {
		d.proj.reserve(r.Start, r.End, r.Alloc)
	} else {
		d.deferred = append(d.deferred, r)
	}
	if old != nil && *old == r {
		job.Reserved = old
		return
	}
	rr := r
	job.Reserved = &rr
}

// unreserve takes job's reservation out of the projection (if it is
// there, or deferred) and returns it, and whether it was there; the job
// holds none afterwards.
func (d *dispatcher) unreserve(job *framework.Job) (*framework.Reservation, bool) {
	r := job.Reserved
	job.Reserved = nil
	switch {
	case r == nil:
		return r, false
	case !d.ready:
		// The first deferred one made as it, as the projection would
		// find the first of its events.
		i := slices.Index(d.deferred, *r)
		if i >= 0 {
			d.deferred = slices.Delete(d.deferred, i, i+1)
		}
		return r, i >= 0
	}
	return r, d.proj.unreserve(r.Start, r.End, r.Alloc)
}

// Unchanged implements framework.Dispatcher.
//
// Under a policy that keeps reservations (conservative) a release at the
// estimated end changes nothing either: every reservation already assumed
// it, and a job without one could never run (or is held back by
// reservations that still stand). Under the others any release
// may let a job start.
//
// A floating reservation (EASY's head) does not stand once this cycle
// placed or reserved something ahead of it (a queue of higher priority):
// that may have taken what it relied on.
func (d *dispatcher) Unchanged(job *framework.Job) bool {
	if job.Unchanged && d.preempted {
		// A preemption earlier in the cycle gave back what the job may use:
		// it is planned afresh, and a floating reservation kept for it to
		// re-record (not in the projection) goes.
		job.Unchanged = false
		if !d.s.keeps[job.Spec.Queue] {
			job.Reserved = nil
		}
	}
	if job.Unchanged && job.Reserved != nil && d.changed && !d.s.keeps[job.Spec.Queue] {
		job.Unchanged = false
		job.Reserved = nil
	}
	return job.Unchanged
}

// unchanged decides Unchanged for job at the start of the cycle; keeps:
// its queue's policy keeps reservations.
func (d *dispatcher) unchanged(job *framework.Job, keeps bool) bool {
	changed := d.released
	if keeps {
		changed = d.offPlan
	}
	// A select[] that may turn true as hosts fill (Request.Rising) may let
	// a job start after others started, with nothing released.
	// A job the cycles since the last one that considered every job left
	// out (their decisions stood) counts as considered in each of them.
	considered := job.Cycle == d.s.cycles-1 || d.s.skippedFrom > 0 && job.Cycle >= d.s.skippedFrom-1
	return d.incremental && !changed && considered && job.State == framework.Pending &&
		d.s.stable[job.Spec.Queue] && (job.Reserved == nil || job.Reserved.Start > d.now) &&
		(job.Req == nil || !job.Req.Rising)
}

// Hold implements framework.Dispatcher. A job that can never run gets its
// BadRequest reason rather than Priority (a cached, host-free check), so
// that it is counted as rejected wherever it stands in the queue.
func (d *dispatcher) Hold(job *framework.Job) {
	if job.Reasons.Main == framework.Priority && job.Reasons.Note == "" {
		return // held before: it was checked then, and the check is static
	}
	// Its reason changes (a job a gate admitted now blocks the queue ahead
	// of it): whatever stood from the last cycle no longer does.
	job.Unchanged = false
	if note := d.s.runner.NeverFits(job); note != "" {
		job.Reasons = framework.PendReasons{Main: framework.BadRequest, Detail: -1, Note: note, Stuck: true}
		return
	}
	job.Reasons = framework.PendReasons{Main: framework.Priority, Detail: -1}
}

// Defer implements framework.Dispatcher. A kept reservation it gives up
// vacates its window, as a job that starts before its reservation does:
// the jobs planned before it in this cycle are offered it by the next.
// The job's Priority carries a note saying why (PendReasons.Note), which
// Hold clears.
func (d *dispatcher) Defer(job *framework.Job) {
	if r := job.Reserved; r != nil {
		d.vacated = d.vacated || r.Start > d.now && d.s.keeps[job.Spec.Queue]
		d.unreserve(job)
	}
	job.Deferred = true
	d.Hold(job)
	if job.Reasons.Main == framework.Priority {
		job.Reasons.Note = d.s.deferNote[job.Spec.Queue]
	}
}

// Block implements framework.Dispatcher: a job that would fit now, were it
// not for the reservations, pends with Priority; otherwise the runner's
// attempt (which fails) gives its own reasons.
func (d *dispatcher) Block(job *framework.Job) error {
	d.setup()
	if fits, known := d.s.runner.FitsNowPlain(job); known {
		if fits {
			d.Hold(job)
			return nil
		}
		if d.s.hostCountsMayStand && job.Reasons.Main == framework.NotEnoughSlots && !job.Reasons.Stuck {
			// Too few slots are free in all, and nothing else can stop
			// it: it pends for want of slots again, and keeps its reasons
			// without the runner's attempt (Options.SkipTooLarge). (One
			// found stuck is asked again: every host is open now.)
			return nil
		}
	} else if job.Req != nil && d.s.State.TotalFreeSlots() >= minTasks(job) {
		d.win.CopyFrom(d.s.State)
		if _, ok := d.planner.Plan(job, d.allocator(job), nil); ok {
			d.Hold(job)
			return nil
		}
	}
	// The runner's attempt, for the reasons: the job does not fit now.
	placed, err := d.allocate(job)
	if placed {
		// It did fit after all, and took what it needed whatever the
		// reservations: have them checked.
		d.s.unguarded, d.unguarded = true, true
	}
	return err
}

// Earliest implements framework.Dispatcher. The candidate start times are
// now and every later time at which resources grow (an estimated end of a
// running job or of a reservation): the earliest feasible start is one of
// them. At each candidate t the job is planned on the projection of the
// window [t, t + estimate), after a cheap check that enough slots are free
// throughout it; the candidates before the first that passes it are
// found from the projection's free slots (firstFit) and passed over.
//
// A job holding a kept reservation is compressed: only candidates before
// its reserved start are tried; if none fits, it keeps the reservation as
// it was (from now, if its start has passed) when that still fits with
// every other reservation in place, and only otherwise (an overrun took
// what it relied on) is the search carried on past it.
func (d *dispatcher) Earliest(job *framework.Job) (framework.Reservation, bool) {
	if job.Reserved != nil {
		d.setup() // its reservation is in the projection, or deferred to it
	}
	inProj := job.Reserved != nil && d.ready && d.proj.holds(job.Reserved.Start, job.Reserved.Alloc)
	if d.stands(job, inProj) {
		// No time before its start can do: it stays in the projection as
		// it is, and Reserve re-records it there.
		d.stood = job
		return *job.Reserved, true
	}
	from, free := d.firstFit(job, inProj)
	prev, held := d.unreserve(job)
	if job.Req == nil || d.s.runner.NeverFits(job) != "" || d.s.runner.isStuck(job) {
		return framework.Reservation{}, false // no time will ever do (cached checks)
	}
	d.setup()
	est, need := estimate(job), minTasks(job)
	sc := &d.scan
	sc.reset(&d.proj)
	if free >= 0 {
		sc.seek(from, free)
	}
	// A future reservation that was in the projection fits as it is, with
	// the others, unless this cycle placed a job over the reservations:
	// every reservation was planned, moved or checked with all the others
	// in place, and releases only add room. (One that comes due now is
	// checked all the same before the job starts on it.)
	trusted := held && prev.Start > d.now && !d.unguarded
	kept := false
	// The candidates from the first that matters: the first at or after
	// from, or after the reservation's start (where it is kept), whichever
	// comes first.
	lo := from
	if prev != nil {
		lo = min(lo, prev.Start)
	}
	t, i, ok := d.now, 0, true
	if ev := d.proj.events; lo > d.now {
		t, i, ok = d.proj.releaseAfter(sort.Search(len(ev), func(k int) bool { return ev[k].at >= lo }), lo-1)
	}
	for ; ok; t, i, ok = d.proj.releaseAfter(i, t) {
		if prev != nil && !kept && t >= prev.Start {
			kept = true
			if trusted {
				return *prev, true
			}
			if r, ok := d.keep(job, prev, est); ok {
				return r, true
			}
		}
		if t < from || sc.least(t, satAdd(t, est)) < need {
			continue
		}
		if r, ok := d.planAt(job, t, est, 0); ok {
			return r, true
		}
	}
	if prev != nil && !kept {
		return d.keep(job, prev, est)
	}
	return framework.Reservation{}, false
}

// keep returns job's previous reservation prev, on the same hosts, from
// max(prev.Start, now), if it still fits for the job's whole estimated run
// with every other reservation in place.
func (d *dispatcher) keep(job *framework.Job, prev *framework.Reservation, est int64) (framework.Reservation, bool) {
	start := max(prev.Start, d.now)
	end := satAdd(start, est)
	d.proj.window(d.win, d.tmp, start, end)
	if !d.hostsOpen(prev.Alloc) || d.win.FitsLimits(prev.Alloc) != nil {
		return framework.Reservation{}, false
	}
	return framework.Reservation{Start: start, End: end, Alloc: prev.Alloc}, true
}

// TryStart implements framework.Dispatcher.
func (d *dispatcher) TryStart(job *framework.Job) (bool, error) {
	if job.Req == nil || job.Reserved == nil && minTasks(job) > d.s.State.TotalFreeSlots() {
		// Too few slots are free now, whatever the reservations: what is
		// left is the runner's attempt, for the reasons (as Block would
		// make it), unless the job keeps them.
		if d.keepsTooLarge(job) {
			return false, nil
		}
		return d.allocate(job)
	}
	d.setup()
	if job.Reserved == nil && !d.proj.reservedDuring(d.now, satAdd(d.now, estimate(job))) {
		// Nothing reserved shrinks the window: the live state now is its
		// least, and the live runner (with its cursors and cache) decides.
		return d.allocate(job)
	}
	if r, ok := d.startsNow(job); ok {
		return true, d.Start(job, r)
	}
	return false, d.Block(job)
}

// startsNow is Earliest limited to now: whether job fits now for its whole
// estimated run, given the reservations (its own, if any, set aside).
func (d *dispatcher) startsNow(job *framework.Job) (framework.Reservation, bool) {
	if job.Req == nil {
		return framework.Reservation{}, false
	}
	d.setup()
	prev, _ := d.unreserve(job)
	r, ok := d.planAt(job, d.now, estimate(job), minTasks(job))
	if !ok && prev != nil {
		d.Reserve(job, *prev)
	}
	return r, ok
}

// planAt plans job on the projection of [t, t + est), after checking that
// need slots are free throughout it in all (need 0: the caller did).
func (d *dispatcher) planAt(job *framework.Job, t, est int64, need int) (framework.Reservation, bool) {
	end := satAdd(t, est)
	if need > 0 && d.proj.minFreeSlots(t, end) < need {
		return framework.Reservation{}, false
	}
	d.proj.window(d.win, d.tmp, t, end)
	if d.win.TotalFreeSlots() < minTasks(job) {
		// Σ over hosts of the least free in the window: still too few.
		return framework.Reservation{}, false
	}
	var order []cluster.HostID
	var busy []bool
	if t > d.now {
		order, busy = d.busyFirst(job.Spec.Queue)
	}
	alloc, ok := d.planner.planFuture(job, d.allocator(job), order, busy, d.s.State)
	if !ok {
		return framework.Reservation{}, false
	}
	return framework.Reservation{Start: t, End: end, Alloc: alloc.Clone()}, true
}

// minTasks is the fewest tasks any plan of job can have.
func minTasks(job *framework.Job) int {
	n := math.MaxInt
	for i := range job.Req.Alts {
		alt := &job.Req.Alts[i]
		k, _ := alt.TaskRange(job.Spec)
		n = min(n, k)
	}
	return n
}

// countingSortByFree appends hs, sorted by free slots, ascending, stably,
// to out and returns it: a counting sort (in *count) when slot counts are
// small, else a stable sort.
func countingSortByFree(out []cluster.HostID, count *[]int, hs []cluster.HostID, st *cluster.State) []cluster.HostID {
	most := 0
	for _, h := range hs {
		most = max(most, st.FreeSlots(h))
	}
	if most > 4096 || most < 0 {
		out = append(out, hs...)
		slices.SortStableFunc(out, func(a, b cluster.HostID) int { return cmp.Compare(st.FreeSlots(a), st.FreeSlots(b)) })
		return out
	}
	c := slices.Grow((*count)[:0], most+2)[:most+2]
	clear(c)
	for _, h := range hs {
		c[max(st.FreeSlots(h), 0)+1]++
	}
	for i := 1; i < len(c); i++ {
		c[i] += c[i-1]
	}
	base := len(out)
	out = slices.Grow(out, len(hs))[:base+len(hs)]
	for _, h := range hs {
		k := max(st.FreeSlots(h), 0)
		out[base+c[k]] = h
		c[k]++
	}
	*count = c
	return out
}

// hostsOpen reports whether every host of a is open: a reservation on a
// host closed or lost since it was made is re-planned.
func (d *dispatcher) hostsOpen(a *cluster.JobAlloc) bool {
	for _, h := range a.Hosts {
		if d.s.Cluster.Hosts[h.Host].Status != cluster.HostOK {
			return false
		}
	}
	return true
}

// busyFirst orders queue q's hosts for a reservation in the future: the
// hosts with the fewest free slots now first, so that a reservation takes
// what running jobs will release and leaves what is free now to
// backfilling (with single-slot hosts this is exactly EASY's "extra
// processors"); ties in host order. A host class stands at two places:
// its members busy now (busy[i] set) among the full hosts, its idle ones
// among the hosts with one free slot, as its members would one by one.
// The order is kept until a job starts (which clears it) and its slices
// are reused: valid until the next call.
func (d *dispatcher) busyFirst(q cluster.QueueID) (hosts []cluster.HostID, busy []bool) {
	if int(q) >= len(d.busy) {
		d.busy = slices.Grow(d.busy, int(q)+1-len(d.busy))[:q+1]
	}
	o := &d.busy[q]
	if o.ok {
		return o.hosts, o.busy
	}
	o.ok = true
	v := framework.View{Cluster: d.s.Cluster, State: d.s.State}
	o.in = v.AppendHosts(o.in[:0], q)
	if !d.s.Cluster.HasClasses() {
		o.hosts, o.busy = countingSortByFree(o.hosts[:0], &o.count, o.in, d.s.State), nil
	} else {
		o.hosts, o.busy = classesByFree(o, d.s.State)
	}
	return o.hosts, o.busy
}

// busyOrder is a queue's busy-first host order (busyFirst) and the
// scratch it is built in.
type busyOrder struct {
	ok     bool
	hosts  []cluster.HostID
	busy   []bool
	in     []cluster.HostID // the queue's hosts
	count  []int            // countingSortByFree's scratch
	places []place          // classesByFree's scratch
}

// forgetBusy drops the busy-first orders (a job started: free slots changed).
func (d *dispatcher) forgetBusy() {
	for i := range d.busy {
		d.busy[i].ok = false
	}
}

// place is a host, or a class's busy or idle members, in classesByFree.
type place struct {
	h    cluster.HostID
	free int
	busy bool
}

// classesByFree is countingSortByFree for a cluster with host classes:
// each class at two places, its busy members (free slots 0, busy set)
// and its idle ones (1). It orders o.in into o.hosts and o.busy.
func classesByFree(o *busyOrder, st *cluster.State) ([]cluster.HostID, []bool) {
	c := st.Cluster()
	places := o.places[:0]
	for _, h := range o.in {
		if c.IsClass(h) {
			places = append(places, place{h, 0, true}, place{h, 1, false})
			continue
		}
		places = append(places, place{h, max(st.FreeSlots(h), 0), false})
	}
	slices.SortStableFunc(places, func(a, b place) int { return cmp.Compare(a.free, b.free) })
	hosts, busy := o.hosts[:0], o.busy[:0]
	for _, p := range places {
		hosts, busy = append(hosts, p.h), append(busy, p.busy)
	}
	o.places = places
	return hosts, busy
}
