package sim

import (
	"context"
	"slices"

	"github.com/xce-sched/xce/cluster"
	"github.com/xce-sched/xce/framework"
	"github.com/xce-sched/xce/framework/runtime"
)

// Event is what happened at one event time: the jobs that ended just
// before the cycle, and the jobs the cycle considered, in picking order
// (those that started have State Running and Start == Now). The slices are
// valid only during the Observe call.
type Event struct {
	Now        int64
	Ended      []*framework.Job
	Considered []*framework.Job
	// Aside counts, by main reason, the pending jobs set aside as stuck,
	// which the cycle did not consider: they pend with the reasons they
	// had (Scheduler.AsideByReason).
	Aside []runtime.ReasonCount
	// Standing counts, by main reason, the pending jobs the cycle did not
	// consider because their decisions stand (held behind a blocked head,
	// or nothing released since they were decided): they pend with the
	// reasons they had (Scheduler.Standing).
	Standing []runtime.ReasonCount
}

// Observe is called after each scheduling cycle.
type Observe func(e *Event)

// Options configure Run.
type Options struct {
	// Until is the last event time to process (seconds, inclusive).
	Until int64
	// ZeroRuntimeEnds: a job with Runtime 0 ends as soon as it starts (a
	// trace's zero-length job). Otherwise Runtime 0 means unknown and the
	// job runs past Until (a scenario's job without a runtime).
	ZeroRuntimeEnds bool
	// Observe, if set, sees every cycle.
	Observe Observe
	// PerEvent runs one cycle after every single event instead of one per
	// event time: each submission (by submit time, then job ID), then each
	// job end (by job ID), in that order within a second, as pyss (the
	// simulator of the SC'15 backfilling paper) does. Several cycles then
	// share a time.
	PerEvent bool
	// CompactDone replaces a finished job's allocation, once Observe has
	// seen its end, by a summary that keeps only its slot count (one
	// HostAlloc of those slots, on no particular host: read its Slots(),
	// never its hosts). A whole replay then keeps no per-host record of
	// the jobs that finished, only of those running.
	CompactDone bool
}

// Run drives s on a virtual clock from the first event up to opts.Until.
// The events are job submissions, job ends, and the start of the earliest
// kept reservation (Scheduler.NextWake: conservative backfilling's
// reservations are events, as in pyss's start events). At each event time it first
// ends every job whose end has come (releasing what it holds), then runs
// one scheduling cycle over the pending jobs submitted by then. A job
// started at time t ends at t + Runtime; a running job of the snapshot ends
// at Start + Runtime. It returns the time of the last cycle (-1 if none),
// or ctx's error when ctx is cancelled.
func Run(ctx context.Context, s *runtime.Scheduler, opts Options) (int64, error) {
	var ends endQueue
	ends.zero = opts.ZeroRuntimeEnds
	for _, j := range s.Jobs {
		if j.State == framework.Running {
			ends.add(j, j.Start)
		}
	}
	var submits []int64
	for _, j := range s.Jobs {
		if j.State == framework.Pending {
			submits = append(submits, j.Spec.Submit)
		}
	}
	slices.Sort(submits)
	all := slices.Clone(submits) // with repeats: how many jobs arrive at a time
	submits = slices.Compact(submits)

	var ev Event
	var done doneAllocs
	last := int64(-1)
	for {
		// The submit times still to come: last only grows.
		for len(submits) > 0 && submits[0] <= last {
			submits = submits[1:]
		}
		now, ok := nextEvent(submits, &ends, last)
		if w := s.NextWake(); w > last && (!ok || w < now) {
			now, ok = w, true
		}
		if !ok || now > opts.Until {
			return last, nil
		}
		if err := ctx.Err(); err != nil {
			return last, err
		}
		// cycle runs one cycle admitting at most admit new jobs (all when
		// admit < 0).
		cycle := func(admit int) error {
			var considered []*framework.Job
			var err error
			if admit < 0 {
				considered, err = s.Cycle(ctx, now)
			} else {
				considered, err = s.CycleAdmitting(ctx, now, admit)
			}
			if err != nil {
				return err
			}
			for _, j := range considered {
				if j.State == framework.Running && j.Start == now {
					ends.add(j, now)
				}
			}
			for _, j := range s.Resumed() {
				if j.State == framework.Running { // not preempted again by the same cycle
					ends.add(j, j.Start) // pushed back by the time it was suspended
				}
			}
			if opts.Observe != nil {
				ev.Now, ev.Considered, ev.Aside, ev.Standing = now, considered, s.AsideByReason(), s.Standing()
				opts.Observe(&ev)
			}
			if opts.CompactDone {
				done.compact(ev.Ended)
			}
			ev.Ended = ev.Ended[:0]
			return nil
		}
		ev.Ended = ev.Ended[:0]
		if !opts.PerEvent {
			for ends.Len() > 0 && ends.q[0].at <= now {
				e := ends.pop()
				if e.stale() {
					continue
				}
				s.Finish(e.job, e.at)
				ev.Ended = append(ev.Ended, e.job)
			}
			if err := cycle(-1); err != nil {
				return now, err
			}
			last = now
			continue
		}
		lo, _ := slices.BinarySearch(all, now)
		hi, _ := slices.BinarySearch(all, now+1)
		events := 0
		for range hi - lo {
			if err := cycle(1); err != nil {
				return now, err
			}
			events++
		}
		for ends.Len() > 0 && ends.q[0].at <= now {
			e := ends.pop()
			if e.stale() {
				continue
			}
			s.Finish(e.job, e.at)
			ev.Ended = append(ev.Ended, e.job)
			if err := cycle(-1); err != nil {
				return now, err
			}
			events++
		}
		if events == 0 { // a reservation's start
			if err := cycle(-1); err != nil {
				return now, err
			}
		}
		last = now
	}
}

// nextEvent returns the earliest submit or end time after last, dropping
// the stale ends before it; submits are the submit times after last.
func nextEvent(submits []int64, ends *endQueue, last int64) (int64, bool) {
	t, ok := int64(0), false
	if len(submits) > 0 {
		t, ok = submits[0], true
	}
	for ends.Len() > 0 && ends.q[0].stale() {
		ends.pop() // no event: a run that preemption cut short
	}
	if ends.Len() > 0 && (!ok || ends.q[0].at < t) {
		t, ok = ends.q[0].at, true
	}
	return t, ok
}

type end struct {
	at  int64
	job *framework.Job
	// run is the job's Preemptions when its end was scheduled: a job
	// suspended or requeued since ends at another time, scheduled anew.
	run int
}

// stale reports whether e is the end of a run that preemption cut short.
func (e end) stale() bool { return e.job.State != framework.Running || e.job.Preemptions != e.run }

// endQueue is a min-heap of job ends by time, then job ID. It sifts as
// container/heap does, on its own type: no end is boxed in an interface.
type endQueue struct {
	q    []end
	zero bool // Runtime 0 ends at once (else never)
}

// add schedules the end of job j, started at start, if it has one: after
// its runtime, pushed back by the time it spent suspended.
func (q *endQueue) add(j *framework.Job, start int64) {
	if j.Spec.Runtime > 0 || q.zero {
		q.push(end{start + j.SuspendedFor + max(j.Spec.Runtime, 0), j, j.Preemptions})
	}
}

// Len returns the number of ends queued.
func (q *endQueue) Len() int { return len(q.q) }

func (q *endQueue) less(i, j int) bool {
	if q.q[i].at != q.q[j].at {
		return q.q[i].at < q.q[j].at
	}
	return q.q[i].job.Spec.ID < q.q[j].job.Spec.ID
}

// push adds e (container/heap.Push).
func (q *endQueue) push(e end) {
	q.q = append(q.q, e)
	for j := len(q.q) - 1; j > 0; {
		i := (j - 1) / 2 // parent
		if i == j || !q.less(j, i) {
			break
		}
		q.q[i], q.q[j] = q.q[j], q.q[i]
		j = i
	}
}

// pop removes and returns the least end (container/heap.Pop).
func (q *endQueue) pop() end {
	n := len(q.q) - 1
	q.q[0], q.q[n] = q.q[n], q.q[0]
	for i := 0; ; {
		j1 := 2*i + 1
		if j1 >= n || j1 < 0 {
			break
		}
		j := j1 // left child
		if j2 := j1 + 1; j2 < n && q.less(j2, j1) {
			j = j2 // right child
		}
		if !q.less(j, i) {
			break
		}
		q.q[i], q.q[j] = q.q[j], q.q[i]
		i = j
	}
	e := q.q[n]
	q.q[n] = end{}
	q.q = q.q[:n]
	return e
}

// doneAllocs hands out the slot-count summaries of Options.CompactDone,
// one shared summary per slot count.
type doneAllocs struct {
	bySlots map[int]*cluster.JobAlloc
}

// compact replaces the allocation of each finished job of ended by the
// summary of its slot count.
func (d *doneAllocs) compact(ended []*framework.Job) {
	for _, j := range ended {
		if j.State != framework.Done || j.Alloc == nil {
			continue
		}
		n := j.Alloc.Slots()
		a, ok := d.bySlots[n]
		if !ok {
			if d.bySlots == nil {
				d.bySlots = make(map[int]*cluster.JobAlloc)
			}
			a = &cluster.JobAlloc{Hosts: []cluster.HostAlloc{{Slots: n}}}
			d.bySlots[n] = a
		}
		j.Alloc = a
	}
}
