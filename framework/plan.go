package framework

import "github.com/xce-sched/xce/cluster"

// Bucket asks for Slots task slots of one compound term on each of Count
// hosts (0 means 1: a plan of many hosts that take the same number of
// tasks is a few buckets, not one per host). The hosts of a plan's
// buckets are all distinct; the members of a host class are distinct
// hosts (cluster.Host.Members).
type Bucket struct {
	Slots int
	Term  int // index into the plan's alternative's Terms
	Count int
}

// Hosts returns how many hosts b asks for: Count, at least 1.
func (b Bucket) Hosts() int { return max(b.Count, 1) }

// Pin restricts the hosts of one term's buckets to those whose value in
// column Col equals Value (how parjob makes same[] complete: one plan per
// value).
type Pin struct {
	Term  int
	Col   int
	Value float64
}

// Plan is one way to place a job: an alternative of its request and an
// ordered list of buckets. The runner tries the buckets in order.
type Plan struct {
	Alt     int
	Buckets []Bucket
	Pins    []Pin
}

// Tasks returns the number of task slots the plan asks for.
func (p *Plan) Tasks() int {
	n := 0
	for _, b := range p.Buckets {
		n += b.Slots * b.Hosts()
	}
	return n
}

// PinFor returns the pins of term t (a sub-slice of p.Pins, which parjob
// keeps grouped by term).
func (p *Plan) PinFor(t int) []Pin {
	lo := 0
	for lo < len(p.Pins) && p.Pins[lo].Term != t {
		lo++
	}
	hi := lo
	for hi < len(p.Pins) && p.Pins[hi].Term == t {
		hi++
	}
	return p.Pins[lo:hi]
}

// PlanIterator yields a job's plans in the allocator's preference order.
// The *Plan returned by Next is valid until the following call; ok is false
// when there are no more plans.
type PlanIterator interface {
	Next() (plan *Plan, ok bool)
}

// Claim is what the runner reserved on one host for one bucket of the plan
// being tried: a snapshot of the per-host request that decided it. On a
// host class it holds Slots of its members, one slot each, for Slots of
// the bucket's hosts.
type Claim struct {
	Bucket int
	cluster.HostAlloc
}

// Plugin is what every plugin is: a named component.
type Plugin interface {
	Name() string
}

// Allocator describes how a job may be placed: its plans. It never walks
// hosts or reserves anything itself.
type Allocator interface {
	Plugin
	// Plans returns an iterator over job's plans given the current view.
	// An error is a broken invariant or a request the allocator cannot
	// handle; the runner turns it into a BadRequest pending reason.
	Plans(job *Job, view *View) (PlanIterator, error)
}

// WholePlans is an optional Allocator capability: the allocator's plans
// are well formed (an alternative of the job, buckets of at least one
// slot), each plan of a simple alternative (one term) places at least the
// job's minimum task count (Spec.TasksMin), and Plans fails only when the
// task counts are no range of at least one task (TasksMin < 1 or
// TasksMax < TasksMin). The runner may then tell, without asking for
// plans, that a job each of whose tasks takes one slot of any open host
// cannot be placed while fewer slots than its minimum are free in all.
type WholePlans interface {
	WholePlans()
}

// Acceptor is an optional Allocator capability: a last say on a plan whose
// every bucket holds a claim (e.g. same[]). Claims are in bucket order.
type Acceptor interface {
	Accepts(job *Job, plan *Plan, claims []Claim, view *View) bool
}

// Preparer takes part in the prepare fan-out: for each candidate host the
// runner resets the per-host request, fills in the job's own needs (slots,
// per-slot rusage) and then calls every Preparer, which may add needs (the
// limit plugin adds its counters) or veto the host with a host reason.
type Preparer interface {
	Plugin
	// PrepareHost adds this plugin's needs for the candidate in req (whose
	// NSlots, NHosts, Host and Job are set). It returns None, or a host
	// reason and its detail when the host must not be used.
	PrepareHost(req *AllocRequest, h cluster.HostID) (Reason, int32)
}

// Bounder is an optional Preparer capability: it tells allocators how many
// tasks its per-host pass lets a job place, so that plans are sized to
// fit: a per-host limit with room for 2 slots caps the bucket planned on
// its host at 2. Bounds are for a plan that holds no claim yet, in view's
// state (the live one, a projection, or the idle state, where they are the
// limits' maxima: the runner's "can it ever run" analysis); the runner's
// check stays the authority. math.MaxInt means no bound. Each bound comes
// with the limit that sets it (the detail of HostLimit and LimitReached:
// the least room, the first such limit in configuration order), -1 when
// none does.
type Bounder interface {
	// HostBound returns the most tasks of term t (of alternative alt of
	// job) that host h can take as far as this preparer is concerned, and
	// the limit that sets that bound.
	HostBound(job *Job, alt *Alternative, t *Term, h cluster.HostID, view *View) (n int, by int32)
	// JobBound returns the most tasks of term t the job can place in all,
	// over every host, a bound on HostBound that holds for every host, and
	// the limit that sets the total.
	JobBound(job *Job, alt *Alternative, t *Term, view *View) (total, perHost int, by int32)
}

// JobPreparer is an optional Preparer capability: the job-level pass, run
// once per alternative before any host is looked at. tasks is the
// alternative's smallest task count; view is the state the runner works on
// (the live one, or a projection when planning a reservation). It returns
// None, or a main reason (LimitReached) and its detail when the job cannot
// run at all in that state.
type JobPreparer interface {
	PrepareJob(job *Job, alt *Alternative, tasks int, view *View) (Reason, int32)
}

// Classifier is an optional Preparer capability: it names the part of a
// job's equivalence class that the preparer's decisions depend on (for the
// limit plugin: the limit instances that apply to the job). Two jobs with
// the same compiled request, queue, task count and classes are decided
// alike within a cycle, which the unsatisfiable cache relies on. A job's
// class must not change over its life: the runner keeps it on the job
// (Job.RunnerClass).
type Classifier interface {
	Class(job *Job) int32
}

// Slacker is an optional Preparer capability. Slack reports whether, in
// view's state, the preparer's per-host pass can neither veto a host nor
// add a need that fails, for any placement of job: any host, any bucket,
// up to the job's largest task count (for the limit plugin: every limit
// that applies counts over all hosts and has room for the whole job).
// When every preparer is slack for a job, its hosts fit as if there were
// no preparers, and the runner lets jobs with the same request share one
// host diagnosis in a cycle (pending reasons).
type Slacker interface {
	Slack(job *Job, view *View) bool
}

// Picker orders the pending jobs of one queue for a cycle.
type Picker interface {
	Plugin
	// Order sorts jobs (all of one queue) in the order they are considered
	// in the cycle at time now (seconds).
	Order(now int64, jobs []*Job)
}

// Observer is an optional Picker and Gate capability: it is told when jobs
// start and finish (fairshare accounts usage with it, the array gate
// counts running elements). Jobs already running when
// the scheduler is built are reported as started at their start time.
type Observer interface {
	JobStarted(job *Job, now int64)
	JobFinished(job *Job, now int64)
}
