package runtime

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/xce-sched/xce/cluster"
	"github.com/xce-sched/xce/framework"
)

// Preemption (docs/preemption.md): after a queue's policy has placed what
// fits, each job of the queue still pending may take what running jobs of
// the queues it preempts (cluster.Queue.Preemptive, LSF's
// PREEMPTION = PREEMPTIVE[...]) hold. The runner plans the job on the
// state with such jobs' preemptable parts given back (in batches, the most
// recently started first); if that succeeds, the victims are the fewest
// the placement needs, then the most recently started, and only then is
// anything preempted: never for nothing. A victim of a queue whose action
// is suspend keeps its memory and GPUs and resumes where it ran once its
// hosts have room again; one whose action is requeue is killed and pends
// again with its submit time.
// The state changes at once, so a later preemptor of the same cycle sees
// the victims gone and the slots taken: no victim is picked twice and no
// freed slot counted twice.

// victim is a running job a preemptor may take resources from: freed is
// what preemption gives back, held what the job keeps (nil when it keeps
// nothing).
type victim struct {
	job         *framework.Job
	held, freed *cluster.JobAlloc
	needed      bool // the placement uses what it frees
}

// preemptSegment lets the jobs of seg, one preemptive queue's jobs in the
// cycle's order, that still pend preempt in turn. Under fcfs it stops at
// the first job that still pends after trying.
func (d *dispatcher) preemptSegment(seg []*framework.Job) error {
	s := d.s
	q := seg[0].Spec.Queue
	fcfs := s.Cluster.Queues[q].Policy == cluster.PolicyFCFS
	for _, job := range seg {
		if job.Deferred {
			break // beyond max_job_test: it and the jobs after it are not planned
		}
		if job.State != framework.Pending || job.Reasons.Stuck || job.Req == nil {
			if fcfs && job.State == framework.Pending && !job.Reasons.Stuck {
				return nil
			}
			continue
		}
		started := false
		var err error
		if d.preempted {
			// An earlier preemption may have left room it fits in.
			if started, err = d.Allocate(job); err != nil {
				return err
			}
		}
		if !started {
			if started, err = d.preempt(job); err != nil {
				return err
			}
		}
		if started {
			d.recheckReservations()
		}
		if !started && fcfs {
			return nil
		}
	}
	return nil
}

// preempt tries to start job now by preempting running jobs of the queues
// its queue may preempt, and reports whether it started.
//
// It gives candidates back in batches, the most recently started first,
// doubling the batch until the runner finds a placement (walking first
// the hosts of the batch, and every host once all are given back), so
// that a job needing one victim costs one small plan, not one over the
// whole cluster. Then every candidate on the placement's hosts (or
// holding a shared resource it takes) is given back too, and the victims
// are chosen among them.
func (d *dispatcher) preempt(job *framework.Job) (bool, error) {
	s := d.s
	q := job.Spec.Queue
	cands := d.candidates(q)
	st := s.State
	vs := d.victims[:0]
	d.epoch++
	give := func(i int) {
		held, freed := s.preemptParts(cands[i])
		vs = append(vs, victim{job: cands[i], held: held, freed: freed})
		st.Give(freed)
		d.given[i] = d.epoch
	}
	restore := func(keep func(*victim) bool) {
		for i := len(vs) - 1; i >= 0; i-- {
			if keep(&vs[i]) {
				st.Take(vs[i].freed)
			}
		}
	}
	var planned *cluster.JobAlloc
	next := 0 // the batches gave back the running ones of cands[:next]
	for n := 1; ; n *= 2 {
		for ; len(vs) < n && next < len(cands); next++ {
			if cands[next].State == framework.Running { // not preempted earlier in the cycle
				give(next)
			}
		}
		if len(vs) == 0 {
			return false, nil
		}
		all := next == len(cands)
		var order []cluster.HostID
		if !all {
			order = d.batchHosts(q, vs)
		}
		var ok bool
		if planned, ok = s.runner.Plan(job, d.allocator(job), order); ok {
			break
		}
		if all {
			restore(func(*victim) bool { return true })
			d.victims = vs
			return false, nil
		}
	}
	alloc := planned.Clone()
	st.Give(alloc) // a plan stays taken in the state it was made on
	// Every candidate on the placement's hosts, or holding a shared
	// resource it takes, may be a victim: give them all back.
	onHost := d.hostMark(alloc)
	for _, h := range alloc.Hosts {
		for _, i := range d.hostCands[h.Host] {
			if d.given[i] != d.epoch && cands[i].State == framework.Running {
				give(int(i))
			}
		}
	}
	if len(alloc.Shared) > 0 {
		for i, v := range cands {
			if d.given[i] != d.epoch && v.State == framework.Running && touches(v.Alloc, onHost, alloc.Shared) {
				give(i)
			}
		}
	}
	d.victims = vs
	// Only jobs on the placement's hosts, or holding a shared resource it
	// takes, can free what it uses: the others are given back at once.
	for i := range vs {
		vs[i].needed = touches(vs[i].freed, onHost, alloc.Shared)
	}
	restore(func(v *victim) bool { return !v.needed })
	if st.FitsLimits(alloc) != nil {
		// A limit counter it charges needs what another job frees: they
		// are all candidates again.
		for i := range vs {
			if !vs[i].needed {
				st.Give(vs[i].freed)
				vs[i].needed = true
			}
		}
	}
	// Keep as many as the placement allows, trying the smallest first
	// (fewest victims) and, among equals, the earliest started (the most
	// recently started are preempted: they lose the least work).
	keepOrder := d.keepOrder[:0]
	for i := range vs {
		if vs[i].needed {
			keepOrder = append(keepOrder, i)
		}
	}
	slices.SortStableFunc(keepOrder, func(a, b int) int {
		va, vb := vs[a].job, vs[b].job
		return cmp.Or(cmp.Compare(va.Alloc.Slots(), vb.Alloc.Slots()), cmp.Compare(va.Start, vb.Start), cmp.Compare(va.Spec.ID, vb.Spec.ID))
	})
	d.keepOrder = keepOrder
	for _, i := range keepOrder {
		st.Take(vs[i].freed)
		if st.FitsLimits(alloc) == nil {
			vs[i].needed = false
		} else {
			st.Give(vs[i].freed)
		}
	}
	if err := st.FitsLimits(alloc); err != nil {
		// Every candidate's part is given back, so the plan fits: a broken
		// invariant.
		restore(func(v *victim) bool { return v.needed })
		return false, fmt.Errorf("job %d: preemption plan does not fit: %w", job.Spec.ID, err)
	}
	if !d.clearOfReservations(job, alloc, vs) {
		restore(func(v *victim) bool { return v.needed })
		return false, nil
	}
	for i := range vs {
		if vs[i].needed {
			s.preempted(d, &vs[i])
		}
	}
	if err := d.Start(job, framework.Reservation{Start: d.now, Alloc: alloc}); err != nil {
		return false, err
	}
	return true, nil
}

// candidates returns the running jobs that a job of queue q may preempt,
// the most recently started first (then the higher ID), as the cycle
// began preempting for q: computed once per queue and cycle (the jobs
// that started since are of q's queue or of queues not yet dispatched,
// and the victims since are skipped by their state).
func (d *dispatcher) candidates(q cluster.QueueID) []*framework.Job {
	if d.candsFor == q+1 {
		return d.cands
	}
	c := d.s.Cluster
	d.cands = d.cands[:0]
	for _, v := range d.s.Running() {
		if c.MayPreempt(q, v.Spec.Queue) {
			d.cands = append(d.cands, v)
		}
	}
	slices.SortFunc(d.cands, func(a, b *framework.Job) int {
		return cmp.Or(cmp.Compare(b.Start, a.Start), cmp.Compare(b.Spec.ID, a.Spec.ID))
	})
	if n := len(c.Hosts); len(d.hostCands) != n {
		d.hostCands = make([][]int32, n)
	} else {
		for h := range d.hostCands {
			d.hostCands[h] = d.hostCands[h][:0]
		}
	}
	for i, v := range d.cands {
		for _, h := range v.Alloc.Hosts {
			d.hostCands[h.Host] = append(d.hostCands[h.Host], int32(i))
		}
	}
	d.given = append(d.given[:0], make([]uint32, len(d.cands))...)
	d.epoch = 0
	d.candsFor = q + 1
	return d.cands
}

// batchHosts returns the distinct hosts of the victims vs that queue q may
// use, in the victims' order: where a plan on part of the candidates
// looks first.
func (d *dispatcher) batchHosts(q cluster.QueueID, vs []victim) []cluster.HostID {
	c := d.s.Cluster
	d.order = d.order[:0]
	seen := d.hostMark(&cluster.JobAlloc{})
	for _, v := range vs {
		for _, h := range v.job.Alloc.Hosts {
			if !seen[h.Host] && c.QueueHasHost(q, h.Host) {
				seen[h.Host] = true
				d.order = append(d.order, h.Host)
			}
		}
	}
	return d.order
}

// clearOfReservations reports whether alloc, placed now for job's
// estimated run with the needed victims gone, leaves room for every
// reservation the cycle holds so far (the queues of higher priority, and
// the job's own queue): preemption delays no reservation, as TryStart
// does not. The state holds the needed victims' parts given back.
func (d *dispatcher) clearOfReservations(job *framework.Job, alloc *cluster.JobAlloc, vs []victim) bool {
	end := satAdd(d.now, estimate(job))
	if !d.reserving() {
		return true
	}
	d.setup()
	if !d.proj.reservedDuring(d.now, end) {
		return true
	}
	for i := range vs {
		if vs[i].needed {
			d.proj.dropEnding(vs[i].job.Alloc)
		}
	}
	d.proj.window(d.win, d.tmp, d.now, end)
	if d.win.Fits(alloc) == nil {
		return true
	}
	for i := range vs {
		if vs[i].needed {
			d.proj.ending(expectedEnd(vs[i].job, d.now), vs[i].job.Alloc)
		}
	}
	return false
}

// recheckReservations checks, after a preemption, every reservation the
// projection holds: a victim that was to end before one starts now ends
// later (suspended: it keeps its memory until it resumes and runs on), so
// a reservation that counted on it may no longer fit. Such a reservation
// is dropped for this cycle (its job keeps its reason) and the next cycle
// plans afresh; the others stand.
func (d *dispatcher) recheckReservations() {
	if !d.reserving() {
		return
	}
	d.setup()
	for _, job := range d.s.order {
		if job.State != framework.Pending || job.Reserved == nil {
			continue
		}
		r, held := d.unreserve(job)
		if !held {
			job.Reserved = r // not in the projection yet: holdSegment checks it
			continue
		}
		d.proj.window(d.win, d.tmp, r.Start, r.End)
		if d.win.Fits(r.Alloc) == nil {
			d.Reserve(job, *r)
			continue
		}
		d.s.offPlan, d.s.unguarded = true, true
	}
}

// hostMark returns a per-host mark of alloc's hosts (the dispatcher's
// scratch, valid until the next call).
func (d *dispatcher) hostMark(alloc *cluster.JobAlloc) []bool {
	n := len(d.s.Cluster.Hosts)
	if len(d.onHost) != n {
		d.onHost = make([]bool, n)
	} else {
		clear(d.onHost)
	}
	for _, h := range alloc.Hosts {
		d.onHost[h.Host] = true
	}
	return d.onHost
}

// touches reports whether freed gives back anything on a marked host or a
// shared resource that shared takes.
func touches(freed *cluster.JobAlloc, onHost []bool, shared []cluster.SharedAmount) bool {
	for _, h := range freed.Hosts {
		if onHost[h.Host] {
			return true
		}
	}
	for _, a := range freed.Shared {
		for _, b := range shared {
			if a.Shared == b.Shared && a.Amount > 0 && b.Amount > 0 {
				return true
			}
		}
	}
	return false
}

// preemptParts splits what running job v holds into what preemption
// leaves it (held) and gives back (freed): a suspended job keeps its
// memory — the host resource named "mem" — on each host (LSF's default),
// and its GPUs with their devices (a stopped process keeps its device
// memory; LSF preempts GPUs only by requeueing: docs/gpus.md); a requeued
// one keeps nothing.
func (s *Scheduler) preemptParts(v *framework.Job) (held, freed *cluster.JobAlloc) {
	a := v.Alloc
	mem, ok := s.Cluster.ResourceByName("mem")
	gpu, hasGPU := s.Cluster.GPUResource()
	if !ok && !hasGPU || s.Cluster.Queues[v.Spec.Queue].PreemptAction == cluster.PreemptRequeue {
		return nil, a
	}
	if !ok {
		mem = -1
	}
	if !hasGPU {
		gpu = -1
	}
	held, freed = &cluster.JobAlloc{}, &cluster.JobAlloc{Shared: a.Shared}
	for _, h := range a.Hosts {
		keep := cluster.HostAlloc{Host: h.Host, GPUs: h.GPUs}
		give := cluster.HostAlloc{Host: h.Host, Slots: h.Slots, Counters: h.Counters}
		for _, r := range h.Res {
			if r.Res == mem || r.Res == gpu {
				keep.Res = append(keep.Res, r)
			} else {
				give.Res = append(give.Res, r)
			}
		}
		if len(keep.Res) > 0 {
			held.Hosts = append(held.Hosts, keep)
		}
		freed.Hosts = append(freed.Hosts, give)
	}
	return held, freed
}

// preempted suspends or requeues victim v, whose freed part is already
// given back to the state.
func (s *Scheduler) preempted(d *dispatcher, v *victim) {
	job := v.job
	job.Preemptions++
	s.preemptedJobs = append(s.preemptedJobs, job)
	d.released, s.released, d.preempted = true, true, true
	if d.ready {
		d.proj.dropEnding(job.Alloc)
	}
	if s.Cluster.Queues[job.Spec.Queue].PreemptAction == cluster.PreemptRequeue {
		s.requeued(job, d.now)
		job.Reasons = framework.PendReasons{Main: framework.Requeued, Detail: -1}
	} else {
		job.State, job.Held, job.SuspendedAt = framework.Suspended, v.held, d.now
		job.Reasons = framework.PendReasons{Main: framework.Preempted, Detail: -1}
		s.suspended = append(s.suspended, job)
	}
	// Once it no longer runs: the running list may be compacted now.
	s.removeRunning(job)
}

// requeued puts job, whose allocation the state no longer holds, back to
// pending in its submit order: the observers see it end (a job array's
// count of running elements, fairshare's usage), the committer forgets
// its allocation, and it starts afresh when it next fits.
func (s *Scheduler) requeued(job *framework.Job, now int64) {
	job.State = framework.Done // for the observers: it no longer runs
	for _, o := range s.observers {
		o.JobFinished(job, now)
	}
	if m, ok := s.Committer.(*MemCommitter); ok {
		m.Remove(job.Spec.ID)
	}
	s.repend(job)
}

// resume resumes, at the start of a cycle at now, every suspended job
// whose hosts (and limits) have room again for what it gave back, in the order they
// were suspended (SIGCONT where it ran; LSF resumes a preempted job when
// the preempting job's resources are released).
func (s *Scheduler) resume(now int64) {
	s.resumedJobs = s.resumedJobs[:0]
	if len(s.suspended) == 0 {
		return
	}
	kept := s.suspended[:0]
	for _, job := range s.suspended {
		if job.State != framework.Suspended {
			continue // killed while suspended
		}
		_, freed := s.preemptParts(job)
		if s.State.TakeChecked(freed, true) != nil {
			kept = append(kept, job)
			continue
		}
		job.State, job.Held = framework.Running, nil
		job.SuspendedFor += now - job.SuspendedAt
		job.Reasons = framework.PendReasons{}
		s.addRunning(job)
		s.resumedJobs = append(s.resumedJobs, job)
		// It takes back what kept reservations may count on; and what it
		// kept while suspended (memory, GPUs) now has an end, which no
		// plan had: a job that found no time for want of it may now
		// (off plan, as after a host's status).
		s.released, s.unguarded, s.offPlan = true, true, true
	}
	clear(s.suspended[len(kept):])
	s.suspended = kept
	if len(s.resumedJobs) > 0 {
		s.runner.BeginCycle()
	}
}

// Preempted returns the jobs the last cycle preempted, in order: each is
// now Suspended (reason Preempted) or Pending (reason Requeued). The slice
// is valid until the next cycle.
func (s *Scheduler) Preempted() []*framework.Job { return s.preemptedJobs }

// Resumed returns the suspended jobs the last cycle resumed before
// dispatching, in order (Running again). The slice is valid until the
// next cycle.
func (s *Scheduler) Resumed() []*framework.Job { return s.resumedJobs }

// Suspended returns the jobs suspended by preemption and not yet resumed,
// in the order they were suspended. The slice is the scheduler's.
func (s *Scheduler) Suspended() []*framework.Job { return s.suspended }
