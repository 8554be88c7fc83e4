package runtime

import (
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/xce-sched/xce/cluster"
	"github.com/xce-sched/xce/framework"
)

// Runner is the framework runner: for one job at a time it walks the plans
// an Allocator describes, claims one distinct host per bucket through the
// prepare fan-out and the authoritative per-host check, rolls back a plan
// that cannot be completed or that the allocator does not accept, and
// commits the first complete plan through the Committer
// (docs/architecture.md, docs/allocation.md).
//
// A Runner is the only writer of its State. It keeps its buffers between
// calls (claims grow with the largest plan seen), so it is not safe for
// concurrent use.
type Runner struct {
	// NoUnsatCache turns the unsatisfiable cache off: every job is tried
	// in full (for tests and benchmarks; decisions are the same).
	NoUnsatCache bool
	// inFull turns tooFewSlots off (tests: the reasons are the same).
	inFull bool

	view      framework.View
	committer framework.Committer
	preparers []framework.Preparer
	empty     *cluster.State     // the cluster with nothing running, limits unused: never.go
	hostState []framework.Reason // per host: None when open, else HostClosed or HostUnavail
	allOpen   bool               // every host is open

	// Per attempt.
	req      framework.AllocRequest
	claims   []framework.Claim
	arena    []cluster.ResAmount      // backing store of the claims' Res snapshots
	mark     []uint32                 // per host: the plan attempt that claimed it
	epoch    uint32                   // the current plan attempt
	order    map[int][]cluster.HostID // per term of the job being placed, when it has order[]
	altVeto  []reasonKey              // per alternative: None, or the job-level reason ruling it out
	counters []cluster.CounterAmount  // backing store of the claims' Counters snapshots
	// first: the bucket being placed is the first of its term in the
	// plan, so its host reserves the term's per-job rusage (true outside
	// tryPlan: a host diagnosed alone would be the job's first).
	first     bool
	termsSeen []bool // per term of the plan being tried: a bucket of it was placed

	jobPreparers []framework.JobPreparer
	classifiers  []framework.Classifier
	slackers     []framework.Slacker
	allSlack     bool // every preparer is a Slacker
	// classified: every preparer is a Classifier, so a job's class captures
	// everything that decides whether it fits (else the unsatisfiable
	// cache is off).
	classified bool
	sigs       map[string]int32 // interned tuples of classifier outputs

	// Projection mode (Plan): dry is set while planning; planned receives
	// the allocation; walkOrder, when set, replaces the queue's host order
	// for terms without order[].
	dry       bool
	planned   *cluster.JobAlloc
	planBuf   cluster.JobAlloc
	walkOrder []cluster.HostID
	// walkBusy, when set, marks the positions of walkOrder that give only
	// a host class's members busy now, all of them but keep[h]
	// (planFuture).
	walkBusy []bool
	keep     []int

	// Per cycle. cursor is the host-walk position per request term and
	// bucket size: every host before it is known not to fit such a bucket
	// for any job, whatever its user or limits (state only shrinks within
	// a cycle). unsat holds the reasons of the classes that pended.
	cursor cycleMap[cursorKey, int]
	unsat  []unsatEntry                       // by class (Job.RunnerClass - 1)
	pended cycleMap[*framework.Request, bool] // requests with a class in unsat
	// classIDs interns the classes (Job.RunnerClass); cycle counts the
	// cycles begun, which stamps the unsat entries of the current one.
	classIDs map[classKey]int32
	cycle    uint64
	// diags holds, per request and vetoed alternatives, the shared host
	// diagnosis of jobs whose preparers are all slack (made without the
	// preparers: bare), valid while placed is unchanged.
	diags  cycleMap[diagKey, sharedDiag]
	bare   bool
	placed uint64 // allocations this runner committed
	// never caches neverFits and idleFit idleFits, which depend on nothing
	// that changes; static holds, by class, neverFits and limitVerdict.
	never   map[staticKey]string
	idleFit map[idleKey][]bool
	static  []classStatic // by class (Job.RunnerClass - 1)
	diag    diagScratch
}

// cursorKey names what decides a host's fit before the preparers: the
// request term (with its queue) and the bucket's slots. Preparers only
// add needs or veto, so a host the term alone does not fit fits no job.
type cursorKey struct {
	req   *framework.Request
	queue cluster.QueueID
	alt   int
	term  int
	slots int
	first bool // the bucket reserves the term's per-job rusage
}

// NewRunner returns a runner over state s that commits through c and runs
// the given preparers, in order, in every prepare fan-out.
func NewRunner(s *cluster.State, committer framework.Committer, preparers ...framework.Preparer) *Runner {
	c := s.Cluster()
	hostState := make([]framework.Reason, len(c.Hosts))
	for h := range c.Hosts {
		switch c.Hosts[h].Status {
		case cluster.HostClosed:
			hostState[h] = framework.HostClosed
		case cluster.HostUnavail:
			hostState[h] = framework.HostUnavail
		}
	}
	r := &Runner{
		view:      framework.View{Cluster: c, State: s},
		hostState: hostState,
		empty:     s.Idle(),
		committer: committer,
		preparers: preparers,
		mark:      make([]uint32, len(c.Hosts)),
		order:     map[int][]cluster.HostID{},
		cursor:    newCycleMap[cursorKey, int](),
		classIDs:  map[classKey]int32{},
		pended:    newCycleMap[*framework.Request, bool](),
		diags:     newCycleMap[diagKey, sharedDiag](),
		never:     map[staticKey]string{},
		idleFit:   map[idleKey][]bool{},
		sigs:      map[string]int32{},
	}
	r.classified = true
	r.allOpen = !slices.ContainsFunc(hostState, func(x framework.Reason) bool { return x != framework.None })
	for _, p := range preparers {
		if jp, ok := p.(framework.JobPreparer); ok {
			r.jobPreparers = append(r.jobPreparers, jp)
		}
		if cl, ok := p.(framework.Classifier); ok {
			r.classifiers = append(r.classifiers, cl)
		} else {
			r.classified = false
		}
		if sl, ok := p.(framework.Slacker); ok {
			r.slackers = append(r.slackers, sl)
		}
		if b, ok := p.(framework.Bounder); ok {
			r.view.Bounders = append(r.view.Bounders, b)
		}
	}
	r.allSlack = len(r.slackers) == len(preparers)
	return r
}

// View returns the read-only view plugins plan against.
func (r *Runner) View() *framework.View { return &r.view }

// BeginCycle starts a new scheduling cycle: it forgets the host-walk
// cursors and the unsatisfiable cache, which are valid only while no
// resources are released.
func (r *Runner) BeginCycle() {
	r.cycle++ // every unsat entry is stale
	r.cursor.reset()
	r.pended.reset()
	r.diags.reset()
}

// Allocate tries to place job with allocator a. It returns true when the job
// was placed: job.Alloc is then published and job.State is Running. It
// returns false when the job pends: job.Reasons then holds one main reason
// and the per-host reasons. A non-nil error means the committer failed;
// every claim was rolled back and the state is exactly as before the call.
//
// Within a cycle, a job whose equivalence class (compiled request, queue,
// task count, and the classes its preparers give it: for limits, the limit
// instances that apply) already pended gets the same reasons without any
// host being looked at: resources only shrink within a cycle, so whatever
// stopped one job of the class stops the others. Requests whose select[]
// may turn true as hosts fill (framework.Request.Rising) are always tried.
func (r *Runner) Allocate(job *framework.Job, a framework.Allocator) (bool, error) {
	job.Reasons = framework.PendReasons{}
	if job.Req == nil {
		r.pendBadRequest(job, job.ReqErr)
		return false, nil
	}
	// A job's class is only worth computing when some job of its request
	// already pended in this cycle (most placed jobs never need it); once
	// computed, it is kept on the job.
	if job.Req.Rising {
		// A host its select[] rules out may match once others fill it:
		// what stopped one job need not stop the next.
		return r.allocate(job, a)
	}
	if job.RunnerClass > 0 || r.pended.has(job.Req) {
		if u := &r.unsat[r.classID(job)-1]; u.cycle == r.cycle && !r.NoUnsatCache && r.classified {
			job.Reasons = u.reasons
			return false, nil
		}
	}
	placed, err := r.allocate(job, a)
	if err == nil && !placed {
		r.pended.set(job.Req, true)
		r.unsat[r.classID(job)-1] = unsatEntry{r.cycle, job.Reasons}
	}
	return placed, err
}

// unsatEntry is the reasons a class pended with in a cycle.
type unsatEntry struct {
	cycle   uint64
	reasons framework.PendReasons
}

// classID returns job's interned class (Job.RunnerClass), interning it
// the first time.
func (r *Runner) classID(job *framework.Job) int32 {
	if job.RunnerClass > 0 {
		return job.RunnerClass
	}
	k := r.classOf(job)
	id, ok := r.classIDs[k]
	if !ok {
		id = int32(len(r.classIDs) + 1)
		r.classIDs[k] = id
		r.unsat = append(r.unsat, unsatEntry{})
		r.static = append(r.static, classStatic{})
	}
	job.RunnerClass = id
	return id
}

func (r *Runner) allocate(job *framework.Job, a framework.Allocator) (bool, error) {
	if r.tooFewSlots(job, a) {
		// Every plan would fail to claim its hosts: the job pends as the
		// attempt would leave it, with no plan rejected by the allocator
		// and no alternative vetoed (a plain request: no shared resource,
		// no preparer).
		r.altVeto = append(r.altVeto[:0], reasonKey{detail: -1})
		r.first = true
		r.pend(job, outcome{})
		return false, nil
	}
	it, err := a.Plans(job, &r.view)
	if err != nil {
		r.pendBadRequest(job, fmt.Errorf("%s: %w", a.Name(), err))
		return false, nil
	}
	acceptor, _ := a.(framework.Acceptor)
	clear(r.order)
	r.prepareJob(job)
	var out outcome
	for plan, ok := it.Next(); ok; plan, ok = it.Next() {
		if bad := badPlan(job, plan); bad != "" {
			r.pendBadRequest(job, fmt.Errorf("allocator %s: %s", a.Name(), bad))
			return false, nil
		}
		if r.altVeto[plan.Alt].reason != framework.None {
			continue
		}
		out.tried = true
		alt := &job.Req.Alts[plan.Alt]
		if !r.tryPlan(job, plan, alt) {
			continue
		}
		if acceptor != nil && !acceptor.Accepts(job, plan, r.claims, &r.view) {
			out.rejected = true
			r.rollback()
			continue
		}
		if err := r.finalize(job, alt); err != nil {
			return false, err
		}
		return true, nil
	}
	if !r.dry {
		r.pend(job, out)
	}
	return false, nil
}

// tooFewSlots reports whether job certainly cannot be placed by a live
// attempt with allocator a, before any plan is asked for: a's plans are
// whole (framework.WholePlans) and it takes the job's task counts, each
// task takes one slot of any open host (FitsNowPlain: a plain request, no
// preparer, every host open), and fewer slots than the job's minimum are
// free in all.
func (r *Runner) tooFewSlots(job *framework.Job, a framework.Allocator) bool {
	if r.dry || r.inFull || job.Spec.TasksMin < 1 || job.Spec.TasksMax < job.Spec.TasksMin {
		return false
	}
	if _, ok := a.(framework.WholePlans); !ok {
		return false
	}
	fits, known := r.FitsNowPlain(job)
	return known && !fits
}

// classKey identifies a job's equivalence class within a cycle.
type classKey struct {
	req      *framework.Request
	queue    cluster.QueueID
	min, max int
	sig      int32 // the preparers' classes, interned
}

func (r *Runner) classOf(job *framework.Job) classKey {
	k := classKey{req: job.Req, queue: job.Spec.Queue, min: job.Spec.TasksMin, max: job.Spec.TasksMax}
	switch len(r.classifiers) {
	case 0:
	case 1:
		k.sig = r.classifiers[0].Class(job)
	default:
		var b []byte
		for _, c := range r.classifiers {
			b = binary.AppendVarint(b, int64(c.Class(job)))
		}
		id, ok := r.sigs[string(b)]
		if !ok {
			id = int32(len(r.sigs))
			r.sigs[string(b)] = id
		}
		k.sig = id
	}
	return k
}

// prepareJob runs the job-level checks for every alternative: the shared
// prep (each shared resource in rusage[] has at least that much
// unreserved: total − committed − claimed this cycle, which is what the
// state holds) and the JobPreparers' job-level pass. r.altVeto records, per
// alternative, None or the main reason that rules it out.
func (r *Runner) prepareJob(job *framework.Job) {
	r.altVeto = r.altVeto[:0]
	for ai := range job.Req.Alts {
		alt := &job.Req.Alts[ai]
		veto := reasonKey{detail: -1}
		for _, sh := range alt.Shared {
			if !cluster.Within(sh.Amount, r.view.State.SharedFree(sh.Shared)) {
				veto = reasonKey{framework.SharedResource, int32(sh.Shared)}
				break
			}
		}
		if veto.reason == framework.None {
			tasks, _ := alt.TaskRange(job.Spec)
			for _, p := range r.jobPreparers {
				if reason, detail := p.PrepareJob(job, alt, tasks, &r.view); reason != framework.None {
					veto = reasonKey{reason, detail}
					break
				}
			}
		}
		r.altVeto = append(r.altVeto, veto)
	}
	r.first = true
}

// badPlan returns why plan is malformed (a plugin bug), or "".
func badPlan(job *framework.Job, plan *framework.Plan) string {
	if plan.Alt < 0 || plan.Alt >= len(job.Req.Alts) {
		return fmt.Sprintf("plan names alternative %d of %d", plan.Alt, len(job.Req.Alts))
	}
	if len(plan.Buckets) == 0 {
		return "empty plan"
	}
	nterms := len(job.Req.Alts[plan.Alt].Terms)
	for _, b := range plan.Buckets {
		if b.Slots < 1 || b.Count < 0 || b.Term < 0 || b.Term >= nterms {
			return fmt.Sprintf("bad bucket %+v", b)
		}
	}
	return ""
}

// outcome is what a failed attempt saw, for choosing the main reason.
type outcome struct {
	tried    bool // some plan passed the job-level checks
	rejected bool // Accepts rejected a complete plan
}

// SetHostStatus changes host h's status as this runner sees it (the
// owner of the cycle keeps the cluster's own Status in step) and forgets
// what depended on which hosts are open.
func (r *Runner) SetHostStatus(h cluster.HostID, st cluster.HostStatus) {
	reason := framework.None
	switch st {
	case cluster.HostClosed:
		reason = framework.HostClosed
	case cluster.HostUnavail:
		reason = framework.HostUnavail
	}
	r.hostState[h] = reason
	r.allOpen = !slices.ContainsFunc(r.hostState, func(x framework.Reason) bool { return x != framework.None })
	clear(r.idleFit)
	for i := range r.static {
		r.static[i].hasVerdict = false
	}
	r.BeginCycle()
}

// Release gives back everything a finished (or killed) job holds and marks
// it Done. Resources grow, so the cycle's cursors and unsatisfiable cache
// are forgotten. Only the owner of the cycle calls it, between cycles.
func (r *Runner) Release(job *framework.Job) {
	if job.Alloc == nil || job.State != framework.Running {
		return
	}
	r.view.State.Give(job.Alloc)
	job.State = framework.Done
	r.BeginCycle()
}
