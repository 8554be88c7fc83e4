package runtime

import (
	"cmp"
	"math"
	"slices"

	"github.com/xce-sched/xce/cluster"
	"github.com/xce-sched/xce/framework"
	"github.com/xce-sched/xce/framework/plugins/seqjob"
)

// never is the end time of a job with no runtime estimate.
const never = math.MaxInt64 / 4

// dispatcher implements framework.Dispatcher for one cycle of a Scheduler.
// Its projections (Earliest) run the same plugins and runner on a derived
// state: the live state, plus what running jobs release by their estimated
// end (start + estimate), minus the reservations made in this cycle.
type dispatcher struct {
	s   *Scheduler
	now int64

	// The projection machinery, built on first use in a cycle.
	ready   bool
	proj    *cluster.State // the window being planned in
	tmp     *cluster.State // one time point of it
	planner *Runner        // runs over proj
	ends    []runEnd       // running jobs by estimated end
	res     []heldRes      // this cycle's reservations
	busy    map[cluster.QueueID][]cluster.HostID
}

type runEnd struct {
	at  int64
	job *framework.Job
}

type heldRes struct {
	job *framework.Job
	r   framework.Reservation
}

var _ framework.Dispatcher = (*dispatcher)(nil)

func (d *dispatcher) Now() int64 { return d.now }

func (d *dispatcher) allocator(job *framework.Job) framework.Allocator {
	if seqjob.Handles(job) {
		return d.s.seq
	}
	return d.s.par
}

// Allocate implements framework.Dispatcher.
func (d *dispatcher) Allocate(job *framework.Job) (bool, error) {
	placed, err := d.s.runner.Allocate(job, d.allocator(job))
	if placed {
		d.started(job)
	}
	return placed, err
}

// started records a job the cycle started: its start time, the observers,
// and, for the projections, its estimated end and the changed free slots.
func (d *dispatcher) started(job *framework.Job) {
	job.Start = d.now
	d.s.addRunning(job)
	for _, o := range d.s.observers {
		o.JobStarted(job, d.now)
	}
	if d.ready {
		d.ends = insertEnd(d.ends, runEnd{d.expectedEnd(job), job})
		clear(d.busy)
	}
}

// Start implements framework.Dispatcher.
func (d *dispatcher) Start(job *framework.Job, r framework.Reservation) error {
	if err := d.s.runner.Place(job, r.Alloc); err != nil {
		return err
	}
	d.started(job)
	return nil
}

// reset prepares the dispatcher for a cycle at time now.
func (d *dispatcher) reset(s *Scheduler, now int64) {
	d.s, d.now, d.ready = s, now, false
	d.res = d.res[:0]
}

// Reserve implements framework.Dispatcher.
func (d *dispatcher) Reserve(job *framework.Job, r framework.Reservation) {
	d.res = append(d.res, heldRes{job, r})
	rr := r
	job.Reserved = &rr
}

// Hold implements framework.Dispatcher.
func (d *dispatcher) Hold(job *framework.Job) {
	job.Reasons = framework.PendReasons{Main: framework.Priority, Detail: -1}
}

// Block implements framework.Dispatcher: a job that would fit now, were it
// not for the reservations, pends with Priority; otherwise the runner's
// attempt (which fails) gives its own reasons.
func (d *dispatcher) Block(job *framework.Job) error {
	d.setup()
	if job.Req != nil && d.s.State.TotalFreeSlots() >= minTasks(job) {
		d.proj.CopyFrom(d.s.State)
		if _, ok := d.planner.Plan(job, d.allocator(job), nil); ok {
			d.Hold(job)
			return nil
		}
	}
	_, err := d.s.runner.Allocate(job, d.allocator(job))
	return err
}

// Earliest implements framework.Dispatcher. The candidate start times are
// now, the estimated ends of running jobs and the ends of reservations;
// resources only grow at those times, so the earliest feasible start is
// one of them. At each candidate t the job is planned on the projection of
// the window [t, t + estimate): per host and resource, the least that is
// free at t or at any reservation start inside the window.
func (d *dispatcher) Earliest(job *framework.Job) (framework.Reservation, bool) {
	if job.Req == nil {
		return framework.Reservation{}, false
	}
	d.setup()
	est, need := estimate(job), minTasks(job)
	ts := d.candidates()
	ends := 0 // d.ends[:ends] have ended by the candidate time
	released := 0
	for _, t := range ts {
		for ends < len(d.ends) && d.ends[ends].at <= t {
			released += d.ends[ends].job.Alloc.Slots()
			ends++
		}
		// Cheap necessary condition: enough free slots at t in all.
		if d.s.State.TotalFreeSlots()+released-d.reservedSlotsAt(t) < need {
			continue
		}
		if r, ok := d.planAt(job, t, est); ok {
			return r, true
		}
	}
	return framework.Reservation{}, false
}

// StartsNow implements framework.Dispatcher: Earliest limited to now.
func (d *dispatcher) StartsNow(job *framework.Job) (framework.Reservation, bool) {
	if job.Req == nil {
		return framework.Reservation{}, false
	}
	d.setup()
	if d.s.State.TotalFreeSlots()-d.reservedSlotsAt(d.now) < minTasks(job) {
		return framework.Reservation{}, false
	}
	return d.planAt(job, d.now, estimate(job))
}

// planAt plans job on the projection of [t, t + est).
func (d *dispatcher) planAt(job *framework.Job, t, est int64) (framework.Reservation, bool) {
	d.window(t, satAdd(t, est))
	var order []cluster.HostID
	if t > d.now {
		order = d.busyFirst(job.Spec.Queue)
	}
	alloc, ok := d.planner.Plan(job, d.allocator(job), order)
	if !ok {
		return framework.Reservation{}, false
	}
	return framework.Reservation{Start: t, End: satAdd(t, est), Alloc: alloc}, true
}

// reservedSlotsAt returns the slots the cycle's reservations hold at t.
func (d *dispatcher) reservedSlotsAt(t int64) int {
	n := 0
	for _, h := range d.res {
		if h.r.Start <= t && t < h.r.End {
			n += h.r.Alloc.Slots()
		}
	}
	return n
}

// minTasks is the fewest tasks any plan of job can have.
func minTasks(job *framework.Job) int {
	n := math.MaxInt
	for i := range job.Req.Alts {
		alt := &job.Req.Alts[i]
		k := job.Spec.TasksMin
		if alt.Compound() {
			k = 0
			for _, t := range alt.Terms {
				k += t.Tasks
			}
		}
		n = min(n, k)
	}
	return n
}

// setup builds the projection machinery on first use in the cycle.
func (d *dispatcher) setup() {
	if d.ready {
		return
	}
	d.ready = true
	if d.proj == nil {
		d.proj, d.tmp = d.s.State.Derive(), d.s.State.Derive()
		d.planner = NewRunner(d.proj, nil, d.s.runner.preparers...)
	}
	d.ends = d.ends[:0]
	for _, j := range d.s.running {
		d.ends = append(d.ends, runEnd{d.expectedEnd(j), j})
	}
	slices.SortFunc(d.ends, func(a, b runEnd) int {
		return cmp.Or(cmp.Compare(a.at, b.at), cmp.Compare(a.job.Spec.ID, b.job.Spec.ID))
	})
	clear(d.busy)
}

// expectedEnd is a running job's start plus its estimate, or just after
// now when it has run past its estimate.
func (d *dispatcher) expectedEnd(j *framework.Job) int64 {
	return max(satAdd(j.Start, estimate(j)), d.now+1)
}

// estimate is a job's runtime estimate: the user's (-W), else the actual
// runtime, else unknown (never ends).
func estimate(j *framework.Job) int64 {
	switch {
	case j.Spec.Estimate > 0:
		return j.Spec.Estimate
	case j.Spec.Runtime > 0:
		return j.Spec.Runtime
	}
	return never
}

func satAdd(a, b int64) int64 {
	if b >= never-a {
		return never
	}
	return a + b
}

func insertEnd(ends []runEnd, e runEnd) []runEnd {
	i, _ := slices.BinarySearchFunc(ends, e.at, func(x runEnd, t int64) int { return cmp.Compare(x.at, t) })
	return slices.Insert(ends, i, e)
}

// candidates returns now and the later times at which resources grow.
func (d *dispatcher) candidates() []int64 {
	ts := []int64{d.now}
	for _, e := range d.ends {
		if e.at > d.now && e.at < never {
			ts = append(ts, e.at)
		}
	}
	for _, h := range d.res {
		if h.r.End > d.now && h.r.End < never {
			ts = append(ts, h.r.End)
		}
	}
	slices.Sort(ts)
	return slices.Compact(ts)
}

// at fills st with the projected state at time t: the live state, plus
// what running jobs have released by t, minus the reservations active at t.
func (d *dispatcher) at(st *cluster.State, t int64) {
	st.CopyFrom(d.s.State)
	for _, e := range d.ends {
		if e.at > t {
			break
		}
		st.Give(e.job.Alloc)
	}
	for _, h := range d.res {
		if h.r.Start <= t && t < h.r.End {
			st.Take(h.r.Alloc)
		}
	}
}

// window fills d.proj with the projection of [t, end): the state at t,
// lowered to the state at every reservation start inside the window (the
// only times resources shrink).
func (d *dispatcher) window(t, end int64) {
	d.at(d.proj, t)
	for _, h := range d.res {
		if p := h.r.Start; p > t && p < end {
			d.at(d.tmp, p)
			d.proj.MinWith(d.tmp)
		}
	}
}

// busyFirst orders queue q's hosts for a reservation in the future: the
// hosts with the fewest free slots now first, so that a reservation takes
// what running jobs will release and leaves what is free now to
// backfilling (with single-slot hosts this is exactly EASY's "extra
// processors"); ties in host order.
func (d *dispatcher) busyFirst(q cluster.QueueID) []cluster.HostID {
	if hs, ok := d.busy[q]; ok {
		return hs
	}
	v := framework.View{Cluster: d.s.Cluster, State: d.s.State}
	hs := v.Hosts(q)
	slices.SortStableFunc(hs, func(a, b cluster.HostID) int {
		return cmp.Compare(d.s.State.FreeSlots(a), d.s.State.FreeSlots(b))
	})
	if d.busy == nil {
		d.busy = map[cluster.QueueID][]cluster.HostID{}
	}
	d.busy[q] = hs
	return hs
}
