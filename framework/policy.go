package framework

import "github.com/xce-sched/xce/cluster"

// Reservation is a job's planned start: the earliest time at which the
// runner could place it for its whole estimated run, and the allocation it
// would get then. End is Start plus the job's runtime estimate.
type Reservation struct {
	Start, End int64 // seconds
	Alloc      *cluster.JobAlloc
}

// Dispatcher is what a policy drives during one cycle, for the jobs of one
// queue. Every placement goes through the runner; projections into the
// future use the running jobs' estimated end times (start + estimate) and
// the reservations made so far in the cycle, on the host-based model
// (slots, host consumables, shared resources and limits).
type Dispatcher interface {
	// Now is the cycle's time (seconds).
	Now() int64
	// Allocate places job now if it fits (the runner). Once the cycle
	// holds reservations — of jobs ahead of this one: a queue of higher
	// priority, an EASY head, the kept ones of a conservative queue — it
	// is TryStart: the job starts only if it delays none of them. On
	// false, job.Reasons say why it pends.
	Allocate(job *Job) (bool, error)
	// Earliest returns the earliest time at or after Now at which job fits
	// during its whole estimated run, and the allocation it would get then;
	// ok is false when no such time exists (the job can never run here, or
	// reservations that never end hold what it needs). A job that holds a
	// reservation kept from an earlier cycle (KeepsReservations) gives it
	// up: it is re-planned with every other reservation in place and gets
	// its old reservation back, hosts and all, unless an earlier time is
	// free or the old one no longer fits (a running job overran its
	// estimate). The caller then records the result with Reserve, or
	// starts the job.
	Earliest(job *Job) (r Reservation, ok bool)
	// TryStart starts job now if it fits now for its whole estimated run,
	// given the reservations; otherwise it records why it pends, as Block
	// does. When no reservation takes anything during the job's estimated
	// run, this is one plain attempt of the runner.
	TryStart(job *Job) (started bool, err error)
	// Start places job now with r.Alloc, which Earliest found at Now.
	Start(job *Job, r Reservation) error
	// Reserve records r for job, in place of any reservation it held:
	// later Earliest calls respect it, and the job shows it.
	Reserve(job *Job, r Reservation)
	// Block records why job pends: Priority when it would fit now but is
	// held back for others' reservations or order, else its own reason.
	Block(job *Job) error
	// Hold records that job pends behind an earlier job (Priority) without
	// looking at hosts (strict FCFS).
	Hold(job *Job)
	// Unchanged reports that job pended in the previous cycle and nothing
	// was released since, its queue's order is stable, and its reservation
	// (if any) is still in the future: its decision, reasons and
	// reservation stand, and a policy may keep them without looking at
	// hosts (re-recording the reservation with Reserve).
	Unchanged(job *Job) bool
	// Defer leaves job unplanned in this cycle: it lies beyond the
	// queue's MaxJobTest (cluster.Queue; Slurm's bf_max_job_test). It
	// gives up any reservation it held and pends as Hold would make it
	// (Priority), and the next cycle considers it afresh.
	Defer(job *Job)
}

// ArrivalOrder is an optional Picker capability: the picker orders a
// queue's jobs by arrival (submit time, then ID), which is the order the
// scheduler keeps its pending jobs in, so the scheduler need not ask it
// (a cycle then costs nothing per job for ordering).
type ArrivalOrder interface {
	ArrivalOrder()
}

// KeepsReservations is an optional Policy capability: a job's reservation
// outlives the cycle that made it. It stays in every later cycle's
// projection, and only the job's own Earliest may move it, and only to an
// earlier time (compression, Mu'alem & Feitelson 2001, IEEE TPDS 12(6),
// §2): the job is re-planned with every other reservation in place and
// keeps its old one, hosts and all, unless an earlier start is free. A
// reservation moves later only when a running job overran its estimate
// and the reservation overlaps the overrun (docs/backfill.md). This is
// conservative backfilling's guarantee; EASY does without: its one
// reservation floats, as in the classic algorithm.
type KeepsReservations interface {
	KeepsReservations()
}

// HoldsBehindHead is an optional Policy capability: once a job of the
// queue pends without being stuck (PendReasons.Stuck), every later job of
// the queue pends behind it by Hold, whatever it asks (strict FCFS). The
// scheduler relies on it to leave the jobs behind such a head out of the
// cycles in which the head's decision stands (nothing released, nothing
// off its estimate, no host's status changed): it holds each newcomer,
// as the policy would, and a cycle costs the head and the new jobs, not
// the queue (issue 15).
type HoldsBehindHead interface {
	HoldsBehindHead()
}

// SkipsUnchanged is an optional Policy capability: Dispatch does nothing
// for a job whose decision stands (Dispatcher.Unchanged) but re-record its
// reservation, if it has one (Reserve), and treats every other job the
// same whatever unchanged jobs stand between them (firstfit, EASY). The
// scheduler relies on it to leave such jobs out of a cycle in which
// nothing was released: the cycle considers the jobs with a reservation
// or a select[] that may turn true as hosts fill (Request.Rising), and the
// newcomers, so that it costs what changed, not the queue (issue 15).
type SkipsUnchanged interface {
	SkipsUnchanged()
}

// TestsFirst is an optional Policy capability: Dispatch plans only the
// first MaxJobTest jobs it is given, and defers every later one
// (Dispatcher.Defer) whatever the cluster's state; 0: it plans every job.
// The scheduler relies on it to leave the deferred jobs out of the cycles
// while they stay beyond that depth: a cycle costs the jobs within it and
// the newcomers, not the queue (issue 15).
type TestsFirst interface {
	MaxJobTest() int
}

// JobTest keeps a TestsFirst policy to its depth within one Dispatch:
// Admit reports whether job is among the first Depth jobs it is given (0:
// every job is), and defers it (Dispatcher.Defer) when it is not.
type JobTest struct {
	Depth  int
	tested int
}

// Admit counts job as tested and reports true, or defers it and reports
// false once Depth jobs were.
func (t *JobTest) Admit(d Dispatcher, job *Job) bool {
	if t.Depth > 0 && t.tested == t.Depth {
		d.Defer(job)
		return false
	}
	t.tested++
	return true
}

// StartOrReserve is the step of the policies that plan every job
// (conservative backfilling, Slurm's backfill): job starts when its
// earliest start (Dispatcher.Earliest) is now; else it keeps that
// reservation, if there is one, and pends with the reason Block gives it
// (Priority when it would fit now but for the reservations). When no
// time will do (it can never run here, or reservations that never end
// hold what it needs) it holds nobody back.
func StartOrReserve(d Dispatcher, job *Job) error {
	r, ok := d.Earliest(job)
	switch {
	case !ok:
		return d.Block(job)
	case r.Start == d.Now():
		return d.Start(job, r)
	}
	d.Reserve(job, r)
	return d.Block(job)
}

// SkipsTooLarge is an optional Policy capability, with SkipsUnchanged: in
// a cycle in which something was released, a job that pended for want of
// free slots (NotEnoughSlots), whose request nothing but free slots can
// stop (one plain term, no shared resource, no preparer taking part) and
// that asks for more slots than are free in all at its turn cannot
// start, and Dispatch gives it that reason again. The scheduler leaves
// such jobs out of the cycle, so that it costs the jobs that may fit,
// not the queue (issue 15). FirstBlocked reports whether the first job of
// the queue that cannot start has a part of its own (EASY's
// reservation): then no job is left out before one of the queue holds a
// reservation.
type SkipsTooLarge interface {
	FirstBlocked() bool
}

// StableOrder is an optional Picker capability: the picker keeps the
// relative order of jobs from one cycle to the next and puts newly
// submitted jobs after them (first come, first served). Policies may then
// skip jobs whose decision cannot have changed (Dispatcher.Unchanged).
type StableOrder interface {
	StableOrder()
}

// Policy decides, for the jobs of one queue in picking order, which start
// now, which get reservations and which wait: fcfs, firstfit, easy,
// conservative (docs/simulator.md, Policies; docs/backfill.md).
//
// Dispatch takes the jobs from a sequence (Jobs), which the scheduler
// produces as the policy goes: a partial cycle (SkipsUnchanged,
// SkipsTooLarge) leaves out, at each job's turn, the jobs whose decision
// stands, so that it never touches them. A policy goes through the
// sequence to its end; one that stops early makes the next cycle consider
// every job.
type Policy interface {
	Plugin
	Dispatch(d Dispatcher, jobs Jobs) error
}

// Jobs is the sequence of a queue's jobs a policy takes in one Dispatch,
// in picking order:
//
//	for job, ok := jobs.Next(); ok; job, ok = jobs.Next() { ... }
//
// Next returns the next job, or false once there is none; a job is the
// policy's until the next call. (A method rather than an iter.Seq: a
// range over a function the compiler cannot see through puts the loop's
// body on the heap at every call, thousands of times a replay.)
type Jobs interface {
	Next() (*Job, bool)
}
