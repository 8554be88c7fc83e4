package runtime

import (
	"cmp"
	"slices"

	"github.com/xce-sched/xce/framework"
)

// The dispatcher's projection (projection.go) of a cycle: built on first
// use, with the reservations made before that put in then, and the kept
// ones of each queue put in as the queue comes up.

// reserving reports whether the cycle holds reservations so far (in the
// projection, or deferred).
func (d *dispatcher) reserving() bool {
	return d.ready && d.proj.starts > 0 || len(d.deferred) > 0
}

// setup builds the projection on first use in the cycle: the running jobs'
// estimated ends, then the reservations made so far (deferred), in the
// order they were made. Later reservations join it as they are made, and
// kept ones queue by queue (holdSegment).
func (d *dispatcher) setup() {
	if d.ready {
		return
	}
	d.ready = true
	if d.win == nil {
		d.win, d.tmp = d.s.State.Derive(), d.s.State.Derive()
		d.planner = NewRunner(d.win, nil, d.s.runner.preparers...)
	}
	d.proj.reset(d.s.State)
	// The running jobs' ends, by time then job ID: the scheduler keeps
	// them by estimated end; those due by now+1 all end at now+1
	// (expectedEnd), in ID order.
	ends := d.s.runningByEnd()
	p := &d.proj
	p.events = slices.Grow(p.events, len(ends)+2*len(d.held))
	due := 0
	for due < len(ends) && ends[due].at <= d.now+1 {
		due++
	}
	d.due = append(d.due[:0], ends[:due]...)
	slices.SortFunc(d.due, func(a, b runningEnd) int { return cmp.Compare(a.id, b.id) })
	for _, e := range d.due {
		p.events = append(p.events, event{at: d.now + 1, release: true, alloc: p.intern(e.alloc), slots: e.slots})
	}
	for _, e := range ends[due:] {
		if e.at >= never {
			break // and so are the rest
		}
		p.events = append(p.events, event{at: e.at, release: true, alloc: p.intern(e.alloc), slots: e.slots})
	}
	clear(d.due)
	p.reserveAll(d.deferred, &d.merge)
	clear(d.deferred)
	d.deferred = d.deferred[:0]
	d.forgetBusy()
}

// holdSegment puts the kept reservations of one queue's jobs (in the
// cycle's order) into the projection, just before the queue is
// dispatched. When some may no longer fit — a running job overran its
// estimate, or this cycle already placed or reserved something for the
// queues ahead — each is checked against the running jobs and the
// reservations before it; one that does not fit, or whose start passed
// without its job starting, is left out, and its job is re-planned in its
// turn (it may then move later: only a reservation that overlaps an
// overrun, or what a queue of higher priority took, can fail). When none
// can fail they join the projection in one merge, or, before it is
// built, with the reservations deferred to setup: a cycle that plans
// nothing builds no projection. Only the first max_job_test jobs of a
// queue that has one hold theirs (the others are deferred, and give
// theirs up).
func (d *dispatcher) holdSegment(seg []*framework.Job) {
	if k := d.s.depth[seg[0].Spec.Queue]; k > 0 && len(seg) > k {
		// The jobs after the first k are deferred (framework.TestsFirst):
		// what they held must not stand in the way of those planned.
		seg = seg[:k]
	}
	if !slices.ContainsFunc(seg, func(j *framework.Job) bool { return j.Reserved != nil }) {
		return
	}
	if !d.verify && !d.changed {
		// Each fits as it is: they join the projection as it is built
		// (setup), or at once, in one merge, when it is.
		from := len(d.deferred)
		for _, j := range seg {
			if j.Reserved != nil {
				d.deferred = append(d.deferred, *j.Reserved)
			}
		}
		if d.ready {
			d.proj.reserveAll(d.deferred[from:], &d.merge)
			clear(d.deferred[from:])
			d.deferred = d.deferred[:from]
		}
		d.unguarded = false
		return
	}
	d.setup()
	for _, j := range seg {
		r := j.Reserved
		if r == nil {
			continue
		}
		if r.Start < d.now {
			// Its start passed without a cycle: what it waited for
			// overran. Re-planned in its turn (Earliest tries its hosts
			// from now first), it must not push others back.
			j.Unchanged = false
			continue
		}
		d.proj.window(d.win, d.tmp, r.Start, r.End)
		if !d.hostsOpen(r.Alloc) || d.win.FitsLimits(r.Alloc) != nil {
			j.Unchanged = false
			continue
		}
		d.proj.reserve(r.Start, r.End, r.Alloc)
	}
	d.unguarded = false
}

// holdReservations decides, at the start of a cycle, which jobs' decisions
// stand (Dispatcher.Unchanged) and which reservations carry over: those of
// the queues whose policy keeps them (the held jobs, put in the projection
// as their queue comes up, dispatcher.holdSegment), and an unchanged job's
// floating one, which its policy re-records. Every other reservation is
// dropped.
func (s *Scheduler) holdReservations(d *dispatcher, jobs []*framework.Job) {
	overdue := false
	for _, j := range jobs {
		overdue = s.holdJob(d, j) || overdue
	}
	unguarded := s.unguarded
	s.unguarded = false
	if len(d.held) == 0 {
		return
	}
	// Kept reservations assumed every running job ends at its estimated
	// end and nothing took what they hold; check them when either failed.
	d.verify = unguarded || overdue || s.overrun(d.now)
}

// holdJob is holdReservations for one job: it reports whether the job
// holds a kept reservation whose start has passed.
func (s *Scheduler) holdJob(d *dispatcher, j *framework.Job) (overdue bool) {
	q := j.Spec.Queue
	closed := s.Cluster.Queues[q].Closed
	keeps := s.keeps[q] && !closed
	// A job the last cycle deferred (beyond its queue's MaxJobTest) is
	// considered afresh: it may have come within it.
	j.Unchanged = d.unchanged(j, keeps) && !j.Deferred
	j.Deferred = false
	switch {
	case j.Reserved == nil:
	case keeps:
		d.held = append(d.held, j)
		return j.Reserved.Start < d.now
	case !j.Unchanged || closed:
		j.Reserved = nil
	}
	return false
}
