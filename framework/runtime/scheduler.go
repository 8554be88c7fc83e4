package runtime

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/xce-sched/xce/cluster"
	"github.com/xce-sched/xce/framework"
)

// Scheduler owns a cluster's state and jobs and runs scheduling cycles:
// it orders the pending jobs (queue priority, then the queue's picker) and
// feeds them to the runner under each queue's policy.
type Scheduler struct {
	Cluster   *cluster.Cluster
	State     *cluster.State
	Jobs      []*framework.Job // in the cluster's job order
	Committer framework.Committer

	runner     *Runner
	allocators []framework.Allocator // the profile's, in order
	filters    []framework.JobFilter // of each allocator, nil: it takes every job
	pickers    []framework.Picker    // per queue
	observers  []framework.Observer  // pickers and gates that follow job starts and ends
	policies   []framework.Policy    // per queue
	gates      []framework.Gate      // the profile's, in order
	admitted   []*framework.Job      // scratch: the jobs the gates admitted
	verdicts   []gateVerdict         // scratch: per job of order, the gates' verdict
	// gatesAsked: the last cycle asked the gates (some pending job was
	// gated), whose Wakers then have a say in NextWake.
	gatesAsked bool
	// Lookup by ID searches Jobs, in ascending ID order as a scenario's,
	// a trace's and the live scheduler's are (checked: Jobs[:idsChecked]
	// are in order), or, once they are not, byID. byName is built at the
	// first lookup by name. A scheduler whose gates look up no job pays
	// nothing for them.
	idsChecked int
	unsorted   bool
	byID       map[cluster.JobID]*framework.Job
	byName     map[nameKey][]*framework.Job
	disp       dispatcher // the cycles' dispatcher, reused
	// The sequences of jobs given to policies (framework.Jobs), reused.
	sliceJobs sliceJobs
	quietJobs quietJobs

	// future holds the pending jobs not yet submitted, by submit time then
	// ID; future[next:] are still to come. pending holds the submitted
	// jobs that are still pending, in submit order.
	future  []*framework.Job
	next    int
	pending []*framework.Job
	// gone counts the jobs of pending that partial cycles saw leave it
	// (quiet.go: leaveQuiet), which stay in it until settlePending.
	gone       int
	byPriority []cluster.QueueID // the queues, higher priority first, then in configuration order
	cycles     int64             // cycles run so far
	released   bool              // resources were released since the last cycle
	offPlan    bool              // ... by a job that ended before or after its estimated end
	stable     []bool            // per queue: its picker keeps a stable order
	arrival    []bool            // per queue: its picker orders by arrival (framework.ArrivalOrder)
	// gated counts the jobs a gate applies to, requeuing those whose
	// killed run is not gone yet: without either, a cycle asks no gate.
	gated, requeuing int
	keeps            []bool           // per queue: its policy keeps reservations
	depth            []int            // per queue: how many jobs its policy plans (framework.TestsFirst; 0: all)
	deferNote        []string         // per queue: the note of a job deferred beyond its depth (Dispatcher.Defer)
	planBatch        []*framework.Job // planMore's scratch
	// hostCountsMayStand: Options.SkipTooLarge (a job's host counts of
	// reasons may be those of an earlier cycle).
	hostCountsMayStand bool
	holdsBehind        []bool // per queue: its policy holds every job behind a blocked head (framework.HoldsBehindHead)
	behind             behindHead
	deferred           deferredTail // depth.go
	quiet              quietRecord
	// standing: Standing; skippedFrom: the first of the cycles since the
	// last one that considered every pending job (0: the last one did),
	// whose skipped jobs count as considered (dispatcher.unchanged).
	standing    []ReasonCount
	skippedFrom int64
	considerAll bool // every cycle considers and re-plans every pending job (tests: the oracle of behind.go and standing.go)
	// unguarded: since the last cycle, a job was placed over the kept
	// reservations (a fallback of Dispatcher.Block), which may no longer
	// fit.
	unguarded bool
	wake      int64 // NextWake
	replanned bool  // Replanned
	endSlack  int64 // Options.EndSlack

	// running holds the running jobs and, until the next compaction, up
	// to as many jobs that have since finished (ended counts them).
	running []*framework.Job
	byEnd   []runningEnd // the running jobs by estimated end, then ID (runningByEnd)
	ended   int
	// rerun: a job that may run again (requeued, suspended) left the
	// running list since it was last compacted.
	rerun bool
	order []*framework.Job // scratch: the cycle's picking order

	// suspended holds the jobs preemption suspended, in that order;
	// preemptedJobs and resumedJobs what the last cycle preempted and
	// resumed (preempt.go).
	suspended, preemptedJobs, resumedJobs []*framework.Job
	// aside holds the stuck pending jobs no cycle considers (compactPending);
	// aside[asideNew:] were set aside by the last cycle, which considered
	// them.
	aside      []*framework.Job
	asideNew   int
	asideTally []ReasonCount // aside[:asideNew] by main reason (AsideByReason)

	preparers []framework.Preparer      // the runner's, for charging restored jobs
	compiled  map[reqKey]*framework.Job // a job per compiled request, shared by equal ones
}

// reqKey names a compiled request: jobs with the same requirement and task
// count share one.
type reqKey struct {
	canonical string
	min, max  int
}

// newJob returns the scheduler's record of spec, with its request compiled
// (or shared with an earlier job's equal one).
func (s *Scheduler) newJob(spec *cluster.Job) *framework.Job {
	job := new(framework.Job)
	s.initJob(job, spec)
	return job
}

// initJob makes job, a zero record, the scheduler's record of spec (newJob).
func (s *Scheduler) initJob(job *framework.Job, spec *cluster.Job) {
	job.Spec = spec
	s.index(job)
	for _, g := range s.gates {
		job.Gated = job.Gated || g.Applies(spec)
	}
	if job.Gated {
		s.gated++
	}
	if spec.Req == nil {
		job.ReqErr = fmt.Errorf("job %d has no usable request (no resource requirement, or no processor count in a trace)", spec.ID)
		return
	}
	job.Req, job.ReqErr = s.Compile(spec)
}

// Compile returns spec's request compiled against the cluster with its
// task count, or why it does not compile (framework.Compile); jobs with
// the same requirement and task count share one compiled Request. spec.Req
// must be set.
func (s *Scheduler) Compile(spec *cluster.Job) (*framework.Request, error) {
	key := reqKey{spec.Req.String(), spec.TasksMin, spec.TasksMax}
	if prev, ok := s.compiled[key]; ok {
		return prev.Req, prev.ReqErr
	}
	req, err := framework.Compile(spec.Req, s.Cluster, spec.TasksMin, spec.TasksMax)
	s.compiled[key] = &framework.Job{Req: req, ReqErr: err}
	return req, err
}

// Options configures a Scheduler.
type Options struct {
	// Registry supplies the plugins the profile names.
	Registry framework.Registry
	// Profile names the allocators, preparers, and each queue's picker and
	// policy; nil means the configuration's (framework.ProfileFor).
	Profile *framework.Profile
	// Committer persists allocations; nil means a new MemCommitter.
	Committer framework.Committer
	// Preparers run in every prepare fan-out, in order, after the
	// profile's.
	Preparers []framework.Preparer
	// NoUnsatCache turns the runner's unsatisfiable cache off.
	NoUnsatCache bool
	// Lookup is how gates find jobs (Handle.Jobs); nil means the
	// scheduler's own (it knows only the jobs it was given). The live
	// core gives one that knows every job of its log.
	Lookup framework.Lookup
	// EndSlack, in seconds (0 or more), is how much earlier than its
	// estimated end (start + estimate) a job may end and still count as
	// ending on plan: the kept reservations of conservative backfilling
	// stand (no compression), the released resources take new work as
	// usual. The live scheduler plans for a second more than each job's
	// estimate (live.LiveSlack), so a job that keeps to its estimate ends
	// in the second before the end planned for it, and sets EndSlack to
	// that second; a simulation on a clock of its own leaves it 0.
	EndSlack int64
	// SkipTooLarge lets a cycle after a release leave out the jobs too
	// large to start under policies that allow it (framework.SkipsTooLarge),
	// and the jobs held for reservations that stay held, and decide itself
	// the jobs whose main reason alone changes (quiet.go: settle): the
	// decisions and main reasons are the same, but such a job keeps the
	// host counts of its reasons (PendReasons.Hosts) from the cycle that
	// last handed it to its policy, or has none. The simulator sets it
	// (its metrics read main reasons only); a scheduler whose users read
	// every reason (the live server, xce schedule) leaves it off. With it,
	// too, a job that Block finds too large for the free slots in all, and
	// that pended for want of them, keeps its reasons.
	SkipTooLarge bool
}

// New builds a scheduler for cluster c: it compiles every job's request
// (jobs with the same requirement and task count share one compiled
// Request), takes the allocations of jobs already running, and builds the
// plugins from the registry. It fails when a plugin is missing or a queue
// uses a policy this version does not implement.
func New(c *cluster.Cluster, opts Options) (*Scheduler, error) {
	if opts.EndSlack < 0 {
		return nil, fmt.Errorf("end slack %d s: must not be negative", opts.EndSlack)
	}
	s := &Scheduler{Cluster: c, State: cluster.NewState(c), Committer: opts.Committer, wake: -1, endSlack: opts.EndSlack,
		hostCountsMayStand: opts.SkipTooLarge}
	if s.Committer == nil {
		s.Committer = NewMemCommitter()
	}
	prof := framework.ProfileFor(c)
	if opts.Profile != nil {
		prof = *opts.Profile
	}
	if err := prof.Validate(c); err != nil {
		return nil, err
	}
	h := framework.Handle{Cluster: c, State: s.State, Queue: -1, Jobs: s}
	if opts.Lookup != nil {
		h.Jobs = opts.Lookup
	}
	for _, name := range prof.Allocators {
		a, err := newPlugin[framework.Allocator](opts.Registry, name, h, "an allocator")
		if err != nil {
			return nil, err
		}
		f, _ := a.(framework.JobFilter)
		s.allocators, s.filters = append(s.allocators, a), append(s.filters, f)
	}
	var preparers []framework.Preparer
	for _, name := range prof.Preparers {
		p, err := newPlugin[framework.Preparer](opts.Registry, name, h, "a preparer")
		if err != nil {
			return nil, err
		}
		preparers = append(preparers, p)
	}
	preparers = append(preparers, opts.Preparers...)
	for _, name := range prof.Gates {
		g, err := newPlugin[framework.Gate](opts.Registry, name, h, "a gate")
		if err != nil {
			return nil, err
		}
		s.gates = append(s.gates, g)
		if o, ok := g.(framework.Observer); ok {
			s.observers = append(s.observers, o)
		}
	}
	for qi, q := range c.Queues {
		qp := prof.Queues[qi]
		qh := h
		qh.Queue = cluster.QueueID(qi)
		policy, err := newPlugin[framework.Policy](opts.Registry, qp.Policy, qh, "a policy")
		if err != nil {
			return nil, fmt.Errorf("queue %s: policy: %w", q.Name, err)
		}
		s.policies = append(s.policies, policy)
		_, keeps := policy.(framework.KeepsReservations)
		s.keeps = append(s.keeps, keeps)
		depth := 0
		if tf, ok := policy.(framework.TestsFirst); ok {
			depth = max(tf.MaxJobTest(), 0)
		}
		s.depth = append(s.depth, depth)
		s.deferNote = append(s.deferNote, deferNote(depth))
		_, holds := policy.(framework.HoldsBehindHead)
		s.holdsBehind = append(s.holdsBehind, holds)
		_, skips := policy.(framework.SkipsUnchanged)
		s.quiet.policies = append(s.quiet.policies, skips)
		tooLarge := skipsNone
		if tl, ok := policy.(framework.SkipsTooLarge); ok && skips && opts.SkipTooLarge {
			tooLarge = skipsTooLarge
			if tl.FirstBlocked() {
				tooLarge = skipsAfterFirst
			}
		}
		s.quiet.tooLarge = append(s.quiet.tooLarge, tooLarge)
		picker, err := newPlugin[framework.Picker](opts.Registry, qp.Picker, qh, "a picker")
		if err != nil {
			return nil, fmt.Errorf("queue %s: %w", q.Name, err)
		}
		s.pickers = append(s.pickers, picker)
		_, stable := picker.(framework.StableOrder)
		s.stable = append(s.stable, stable)
		_, arrival := picker.(framework.ArrivalOrder)
		s.arrival = append(s.arrival, arrival)
		if o, ok := picker.(framework.Observer); ok && !slices.Contains(s.observers, o) {
			s.observers = append(s.observers, o)
		}
	}
	s.quiet.index = make([]pendIndex, len(c.Queues))
	for qi := range c.Queues {
		s.byPriority = append(s.byPriority, cluster.QueueID(qi))
	}
	slices.SortStableFunc(s.byPriority, func(a, b cluster.QueueID) int {
		return cmp.Compare(c.Queues[b].Priority, c.Queues[a].Priority)
	})
	s.runner = NewRunner(s.State, s.Committer, preparers...)
	s.runner.NoUnsatCache = opts.NoUnsatCache
	s.preparers = preparers
	s.compiled = map[reqKey]*framework.Job{}
	// The records in one allocation (a trace's jobs number in the
	// hundreds of thousands; none is ever dropped).
	recs := make([]framework.Job, len(c.Jobs))
	s.Jobs = make([]*framework.Job, 0, len(c.Jobs))
	for i := range c.Jobs {
		spec := &c.Jobs[i]
		job := &recs[i]
		s.initJob(job, spec)
		if len(spec.RunningOn) > 0 {
			job.Alloc = c.RunningAlloc(spec)
			if err := s.State.Fits(job.Alloc); err != nil {
				return nil, fmt.Errorf("job %d: running allocation over-commits: %w", spec.ID, err)
			}
			chargeLimits(job, preparers)
			s.State.Take(job.Alloc)
			job.State = framework.Running
			job.Start = spec.Start
		}
		s.Jobs = append(s.Jobs, job)
	}
	for _, j := range s.Jobs {
		switch j.State {
		case framework.Running:
			s.addRunning(j)
			for _, o := range s.observers {
				o.JobStarted(j, j.Start)
			}
		case framework.Pending:
			s.future = append(s.future, j)
		}
	}
	if !slices.IsSortedFunc(s.future, bySubmit) { // a trace's are, by submit time and ID
		slices.SortStableFunc(s.future, bySubmit)
	}
	return s, nil
}

// chargeLimits fills in the limit counters a running job of the snapshot
// holds, by running the prepare fan-out over its allocation host by host,
// as if the runner were placing it.
func chargeLimits(job *framework.Job, preparers []framework.Preparer) {
	if len(preparers) == 0 {
		return
	}
	alt := &framework.Alternative{Shared: job.Alloc.Shared}
	req := framework.AllocRequest{Job: job, Alt: alt, NHosts: 1}
	claims := make([]framework.Claim, 0, len(job.Alloc.Hosts))
	for i := range job.Alloc.Hosts {
		ha := &job.Alloc.Hosts[i]
		req.NSlots, req.Claims = ha.Slots, claims
		req.Host = framework.HostRequest{Slots: ha.Slots, Res: ha.Res}
		for _, p := range preparers {
			p.PrepareHost(&req, ha.Host)
		}
		ha.Counters = req.Host.Counters
		claims = append(claims, framework.Claim{Bucket: i, HostAlloc: *ha})
	}
}

func newPlugin[T any](reg framework.Registry, name string, h framework.Handle, what string) (T, error) {
	var zero T
	p, err := reg.New(name, h)
	if err != nil {
		return zero, err
	}
	t, ok := p.(T)
	if !ok {
		return zero, fmt.Errorf("plugin %s is not %s", name, what)
	}
	return t, nil
}

// Preparers returns the preparers of every prepare fan-out, in order: the
// profile's, then Options.Preparers. The slice is the scheduler's.
func (s *Scheduler) Preparers() []framework.Preparer { return s.preparers }

// Runner returns the scheduler's runner.
func (s *Scheduler) Runner() *Runner { return s.runner }

// Cycle runs one scheduling cycle at time now (seconds): every pending job
// submitted at or before now is considered, queues in priority order
// (higher first, then configuration order), jobs within a queue in the
// order of the queue's picker. A closed queue's jobs pend with QueueClosed
// (or BadRequest when they could never run).
// Under fcfs, once a job of a queue pends (other than one that could not
// run even with every open host idle and its limits at their maxima:
// PendReasons.Stuck), the queue's later jobs pend with Priority; under
// firstfit, any job that fits starts. Cycle times must not decrease. It
// returns the jobs considered, in that order, each with its decision
// published on it (the slice is valid until the next cycle), and stops
// early with ctx's error when ctx is cancelled.
func (s *Scheduler) Cycle(ctx context.Context, now int64) ([]*framework.Job, error) {
	return s.cycle(ctx, now, -1)
}

// CycleAdmitting is Cycle admitting at most n of the jobs submitted by now
// that no cycle has considered yet (by submit time, then ID); the others
// wait for a later cycle. With n = 1 a simulator runs one cycle per
// submission, as simulators that schedule after every single event do.
func (s *Scheduler) CycleAdmitting(ctx context.Context, now int64, n int) ([]*framework.Job, error) {
	return s.cycle(ctx, now, max(n, 0))
}

// cycle runs a cycle admitting at most admit new jobs (all when admit < 0).
func (s *Scheduler) cycle(ctx context.Context, now int64, admit int) ([]*framework.Job, error) {
	s.runner.BeginCycle()
	// A job that stopped running since the last cycle and may run again
	// (requeued, suspended) leaves the running list before it can (started
	// or resumed): no stale entry of it may stay. Those that ended go
	// when the list is next read or compacted.
	if s.rerun {
		s.compactRunning()
	}
	s.preemptedJobs = s.preemptedJobs[:0]
	s.resume(now)
	// front: the jobs up to the head the last cycle blocked at, when the
	// jobs behind it are left out until the head moves (behind.go);
	// depth: the jobs a policy plans, when those it deferred beyond are
	// left out (depth.go); quiet: nothing was released, and only the jobs
	// whose decisions may change are considered (quiet.go).
	s.standing = s.standing[:0]
	clear(s.deferred.thawed)
	s.deferred.thawed = s.deferred.thawed[:0]
	front, depth := s.skipFrom(), -1
	if front < 0 {
		depth = s.depthFrom()
	}
	quiet := front < 0 && depth < 0 && s.quietCycle()
	if !quiet {
		s.settlePending()
	}
	newFrom := len(s.pending)
	for ; s.next < len(s.future) && s.future[s.next].Spec.Submit <= now && admit != 0; admit-- {
		s.pending = append(s.pending, s.future[s.next])
		s.next++
	}
	if quiet {
		return s.cycleQuiet(ctx, now, newFrom)
	}
	c := s.Cluster
	switch {
	case front >= 0:
		s.order = append(s.order[:0], s.pending[:front]...)
	case depth >= 0:
		s.order = append(append(s.order[:0], s.pending[:depth]...), s.pending[newFrom:]...)
	default:
		s.order = append(s.order[:0], s.pending...)
	}
	if len(c.Queues) > 1 {
		slices.SortStableFunc(s.order, func(a, b *framework.Job) int {
			qa, qb := &c.Queues[a.Spec.Queue], &c.Queues[b.Spec.Queue]
			return cmp.Or(cmp.Compare(qb.Priority, qa.Priority), cmp.Compare(a.Spec.Queue, b.Spec.Queue))
		})
	}
	for lo := 0; lo < len(s.order); {
		q := s.order[lo].Spec.Queue
		hi := lo
		for hi < len(s.order) && s.order[hi].Spec.Queue == q {
			hi++
		}
		if !s.arrival[q] { // the pending jobs are in arrival order already
			s.pickers[q].Order(now, s.order[lo:hi])
		}
		lo = hi
	}
	if front >= 0 {
		return s.cycleBehind(ctx, now, front, newFrom)
	}
	complete := false
	defer func() {
		if depth >= 0 {
			s.endDepth(depth, newFrom, complete)
		} else {
			s.compactPending()
			if !complete {
				s.forgetStanding()
				return
			}
			s.recordBehind()
			s.recordAll()
			s.recordDepth()
			s.skippedFrom = 0
		}
		if complete && s.disp.preempted && s.deferredWaiting() {
			s.wakeSoon(now)
		}
	}()
	s.cycles++
	admitted := s.gate(now)
	d := s.beginDispatch(now)
	s.holdReservations(d, s.order)
	for lo := 0; lo < len(admitted); {
		if err := ctx.Err(); err != nil {
			return admitted[:lo], err
		}
		q := admitted[lo].Spec.Queue
		hi := lo
		for hi < len(admitted) && admitted[hi].Spec.Queue == q {
			hi++
		}
		seg := admitted[lo:hi]
		if c.Queues[q].Closed {
			for _, j := range seg {
				j.Reasons = framework.PendReasons{Main: framework.QueueClosed, Detail: -1}
				if note := s.runner.NeverFits(j); note != "" { // BadRequest comes first
					j.Reasons = framework.PendReasons{Main: framework.BadRequest, Detail: -1, Note: note, Stuck: true}
				}
			}
		} else {
			if s.keeps[q] {
				d.holdSegment(seg)
			}
			if err := s.policies[q].Dispatch(d, s.sliceJobs.of(seg)); err != nil {
				return s.order[:hi], fmt.Errorf("queue %s: %w", c.Queues[q].Name, err)
			}
			if k := s.depth[q]; k > 0 {
				var tail []*framework.Job // the jobs a depth cycle left out (depth.go)
				if depth >= 0 {
					tail = s.pending[depth:newFrom]
				}
				if err := s.planMore(d, q, seg, tail, k); err != nil {
					return s.order[:hi], fmt.Errorf("queue %s: %w", c.Queues[q].Name, err)
				}
			}
			if len(c.Queues[q].Preemptive) > 0 {
				if err := d.preemptSegment(seg); err != nil {
					return s.order[:hi], fmt.Errorf("queue %s: preemption: %w", c.Queues[q].Name, err)
				}
			}
		}
		for _, j := range seg {
			j.Cycle = s.cycles
		}
		lo = hi
	}
	s.order = append(s.order, s.deferred.thawed...) // considered too
	s.wake = -1
	for _, g := range s.gates {
		if w, ok := g.(framework.Waker); ok && s.gatesAsked {
			if at := w.Wake(); at >= 0 && (s.wake < 0 || at < s.wake) {
				s.wake = at
			}
		}
	}
	if d.vacated {
		s.replanned = true
		// Compression goes in priority order, each job re-planned with the
		// others' reservations in place: a window a later job vacated is
		// offered to the jobs before it by the next cycle, a second on.
		s.offPlan = true
		s.wake = satAdd(now, 1)
	}
	if len(d.held) > 0 || d.reserving() {
		for _, j := range s.order {
			if j.State == framework.Pending && j.Reserved != nil && s.keeps[j.Spec.Queue] && (s.wake < 0 || j.Reserved.Start < s.wake) {
				s.wake = j.Reserved.Start
			}
		}
	}
	complete = true
	return s.order, nil
}

// beginDispatch readies the cycle's dispatcher at now and takes in the
// changes since the last cycle.
func (s *Scheduler) beginDispatch(now int64) *dispatcher {
	d := &s.disp
	d.reset(s, now)
	d.incremental = s.cycles > 1
	d.released, d.offPlan = s.released, s.offPlan
	s.replanned = s.released || s.offPlan || s.unguarded
	s.released, s.offPlan = false, false
	return d
}

// NextWake returns the earliest start of a reservation that the last
// cycle left to a queue whose policy keeps reservations, or -1: a cycle
// must run then for the job to start on time, even when no job is
// submitted or ends at that moment (a reservation's start need not be an
// event once a job ahead of it moved or overran its estimate).
func (s *Scheduler) NextWake() int64 { return s.wake }

// Replanned reports whether the last cycle took in a change since the
// cycle before (resources released, a job off its estimate, a host's
// status, a restored reservation) or left one for the next (a vacated
// window): a cycle that changes what the next one does, even when it
// decided nothing new. A replay of the live log must run such a cycle
// where the server did (live.Core.Cycle records it).
func (s *Scheduler) Replanned() bool { return s.replanned }
