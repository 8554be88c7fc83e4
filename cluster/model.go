package cluster

import (
	"github.com/xce-sched/xce/depend"
	"github.com/xce-sched/xce/gpureq"
	"github.com/xce-sched/xce/resreq"
)

// HostStatus is a host's administrative state.
type HostStatus uint8

const (
	// HostOK: the host accepts jobs.
	HostOK HostStatus = iota
	// HostClosed: closed by the administrator; running jobs go on, no new
	// job is dispatched (LSF "closed_Adm").
	HostClosed
	// HostUnavail: the host is down or unreachable (LSF "unavail").
	HostUnavail
)

// String returns the scenario spelling: "ok", "closed" or "unavail".
func (s HostStatus) String() string {
	switch s {
	case HostClosed:
		return "closed"
	case HostUnavail:
		return "unavail"
	}
	return "ok"
}

// HostID is a host's index in Cluster.Hosts.
type HostID int32

// ResID is a host consumable resource's index in Cluster.Resources.
type ResID int32

// SharedID is a shared resource's index in Cluster.Shared.
type SharedID int32

// QueueID is a queue's index in Cluster.Queues.
type QueueID int32

// Host is one execution host.
type Host struct {
	Name  string
	Slots int // job slots, >= 1
	// Capacity holds the host's amount of each consumable resource, indexed
	// by ResID (len == len(Cluster.Resources)); NaN where the host does not
	// define the resource. mem is in MB.
	Capacity []float64
	Type     string   // e.g. X86_64; "" when unset
	Model    string   // e.g. EPYC; "" when unset
	Tags     []string // boolean resources, e.g. gpu, ssd
	Status   HostStatus
	// GPUModel is the model of the host's GPUs (a scenario's gpu_model,
	// the select[] string attribute gpu_model), e.g. A100; "" when unset.
	// The number of GPUs is the host's capacity of the consumable
	// ngpus_physical (gpureq.Resource; docs/gpus.md).
	GPUModel string
	// Members, when above 1, makes the entry a host class: Members
	// identical hosts of one job slot each that no job's request tells
	// apart (Cluster.HostClasses, docs/host-classes.md). Slots is then
	// Members, and Capacity, Type, Model, Tags and GPUModel are each
	// member's. 0 or 1: one ordinary host.
	Members int
}

// IsClass reports whether h is a host class entry (Host.Members > 1).
func (h *Host) IsClass() bool { return h.Members > 1 }

// NumHosts returns how many hosts the entry stands for: Members for a
// host class, else 1.
func (h *Host) NumHosts() int { return max(h.Members, 1) }

// MemberSlots returns the job slots of one host of the entry: 1 for a host
// class, else Slots.
func (h *Host) MemberSlots() int {
	if h.IsClass() {
		return 1
	}
	return h.Slots
}

// Shared is a cluster-wide shared resource such as a license pool.
type Shared struct {
	Name  string
	Total float64
}

// Policy names a queue's dispatch policy: fcfs, firstfit, easy or
// conservative (docs/simulator.md, Policies; docs/backfill.md).
type Policy string

// The dispatch policies.
const (
	// PolicyFCFS: strict first-come-first-served; no job of the queue
	// starts before an earlier one.
	PolicyFCFS Policy = "fcfs"
	// PolicyFirstFit: every pending job in order; any job that fits starts;
	// no reservations.
	PolicyFirstFit Policy = "firstfit"
	// PolicyEASY: EASY backfilling (a reservation for the first blocked job).
	PolicyEASY Policy = "easy"
	// PolicyConservative: conservative backfilling (a reservation for every
	// blocked job).
	PolicyConservative Policy = "conservative"
	// PolicyBackfill: Slurm's sched/backfill: in every cycle each pending
	// job, in priority order, starts if it fits without delaying the jobs
	// before it, or else gets a reservation at the earliest time it fits;
	// reservations are planned afresh each cycle (docs/slurm.md).
	PolicyBackfill Policy = "backfill"
)

// Queue is a job queue.
type Queue struct {
	Name     string
	Priority int // larger is dispatched first
	Policy   Policy
	Picker   string // job ordering within the queue: "priority" (default) or "fairshare"
	Closed   bool
	// Hosts restricts the queue's jobs to these hosts; nil means every host.
	Hosts []HostID
	// Shares are the fairshare shares per user (picker "fairshare"), in
	// file order; the user "default" gives the share of unlisted users
	// (1 when absent).
	Shares []UserShare
	// HalfLife is the fairshare usage decay half-life in seconds; 0 means
	// the default (docs/fairshare.md).
	HalfLife int64
	// Exclusive: the queue takes exclusive jobs (LSF's EXCLUSIVE=Y in
	// lsb.queues; bsub -x is refused elsewhere).
	Exclusive bool
	// Preemptive lists the queues whose running jobs this queue's pending
	// jobs may preempt (LSF's PREEMPTION = PREEMPTIVE[...]), each of lower
	// priority; nil: none. PreemptAction is what preemption does to this
	// queue's jobs (docs/preemption.md).
	Preemptive    []QueueID
	PreemptAction PreemptAction
	// DefaultRunLimit is the runtime estimate, in seconds, of a job
	// submitted to the queue without one (LSF's DEFAULT_RUNLIMIT in
	// lsb.queues, which counts minutes); 0: none (such a job's end is
	// unknown to backfilling and forecasts).
	DefaultRunLimit int64
	// MaxJobTest bounds how many of the queue's pending jobs, in the
	// picker's order, a cycle of a policy that plans every job
	// (conservative, backfill) plans: Slurm's bf_max_job_test
	// (slurm.conf(5), SchedulerParameters; Slurm's default is 500). The
	// jobs behind pend with Priority and hold no reservation until they
	// come within it (docs/backfill.md). 0: every job.
	MaxJobTest int
}

// UserShare is one user's number of fairshare shares.
type UserShare struct {
	User   string
	Shares int
}

// Consumers is one consumer dimension of a limit (users, queues, hosts or
// projects), as in an LSF lsb.resources Limit section.
type Consumers struct {
	// Names the limit applies to; empty with All false means the dimension
	// does not restrict the limit.
	Names []string
	// All: the limit applies to every consumer of this kind ("all").
	All bool
	// PerConsumer: one limit instance per consumer (LSF's PER_USER,
	// PER_QUEUE, PER_HOST, PER_PROJECT) instead of one shared instance.
	PerConsumer bool
}

// Set reports whether the dimension restricts the limit at all.
func (c Consumers) Set() bool { return c.All || len(c.Names) > 0 }

// LimitResource is a maximum on a numeric host resource or a shared resource.
type LimitResource struct {
	Name string
	Max  float64
}

// Limit is a resource allocation limit (LSF lsb.resources Limit section).
// A negative Slots or Jobs means "no maximum".
type Limit struct {
	Name      string
	Users     Consumers
	Queues    Consumers
	Hosts     Consumers
	Projects  Consumers
	Slots     int
	Jobs      int
	Resources []LimitResource
}

// JobID identifies a job; unique within a scenario or trace.
type JobID int64

// HostSlots is a number of slots on one host.
type HostSlots struct {
	Host  HostID
	Slots int
}

// Job is a job as submitted: its identity, its request and, for a scenario
// snapshot, where it already runs.
type Job struct {
	ID      JobID
	User    string
	Project string
	Queue   QueueID
	// Exclusive: the job runs alone on its hosts (bsub -x): only on hosts
	// where nothing runs, and nothing else starts there while it runs.
	// (Beside Queue: the two fill one word.)
	Exclusive bool
	Submit    int64 // seconds
	TasksMin  int   // -n min, >= 1
	TasksMax  int   // -n max, >= TasksMin
	// ResReq is the resource requirement string as written; Req its parse.
	ResReq string
	Req    *resreq.Requirement
	// Runtime is the actual run time and Estimate the user's estimate
	// (-W), both in seconds; 0 when unknown.
	Runtime  int64
	Estimate int64
	// RunningOn is set for a job that already runs in the snapshot: the
	// slots it holds on each host, in host order.
	RunningOn []HostSlots
	// Holds, when set, is exactly what the running job holds on the hosts
	// of RunningOn (their consumables, GPUs and its shared resources, as
	// the live server's event log recorded them): a live snapshot knows
	// which compound term runs where, which RunningAlloc otherwise
	// bounds from the request. Nil for a scenario's job.
	Holds *JobAlloc
	// Start is the time the job started, in seconds, for a running job.
	Start int64
	// Array is the ID of the job array the job is an element of (LSF's
	// bsub -J "name[1-10]%2", Slurm's --array), 0 when it is none: an
	// array's elements take consecutive job IDs, the first of which is
	// the array's. ArrayIndex is the element's index; ArrayLimit the
	// most elements of its array that may run at once (the %cap; 0: no
	// cap).
	Array      JobID
	ArrayIndex int64
	ArrayLimit int
	// Name is the job's name (-J; a scenario's name), which dependencies
	// may refer to; "" for none.
	Name string
	// Depend is the job's dependency expression (-w; a scenario's
	// depend), nil for none: the job pends with Dependency until it is
	// satisfied (docs/dependencies.md).
	Depend *depend.Expr
	// ExitCode is the exit code the job ends with in a simulation (a
	// scenario's exit_code; 0: it ends DONE, else EXIT).
	ExitCode int
	// GPU is the job's GPU requirement (bsub -gpu; a scenario's gpu), nil
	// for none. Req already holds what it reserves,
	// rusage[ngpus_physical=GPU.Num] (gpureq.Merge); GPU keeps the rest,
	// such as the compute mode, for the job (docs/gpus.md).
	GPU *gpureq.Request
	// QOS is the job's Slurm QOS (a scenario's qos; a Slurm workload's),
	// which the multifactor picker's QOS factor reads; "" for none
	// (docs/slurm.md).
	QOS string
	// ThinkTime, in seconds, is how long after the jobs its dependency
	// names have ended the job may start (an SWF trace's field 18 with
	// field 17 as the dependency; docs/dependencies.md); 0 for none.
	ThinkTime int64
}

// MaxTime is the largest time, in seconds, a job or a simulation of jobs
// may reach: 10^15 s, about 31.7 million years. Each submit time, start
// time, runtime and estimate is at most MaxTime, and so is the horizon: the
// latest submit or start time of all the jobs plus the sum of all their
// runtimes. A simulation's clock never passes the horizon (a job starts at
// a submit time or when another ends), so every time it computes, every
// wait, response time and makespan included, is at most MaxTime, and a
// time plus an estimate at most twice that: far from the scheduler's
// "never" (2^62 s, about 4.6·10^18) and int64's limit, and within what an
// SWF file may hold. The scenario loader and the simulator enforce it.
const MaxTime = 1_000_000_000_000_000

// Cluster is a loaded scenario: the static configuration plus the jobs.
// It is read-only after load; the mutable counters live in State.
type Cluster struct {
	Hosts     []Host
	Resources []string // host consumable resource names, indexed by ResID
	Shared    []Shared // indexed by SharedID
	Queues    []Queue  // indexed by QueueID
	Limits    []Limit
	Jobs      []Job
	// UserGroups and HostGroups are the configuration's user_groups and
	// host_groups, in file order (docs/scenario.md): limits, queue host
	// lists and fairshare shares may name them.
	UserGroups []UserGroup
	HostGroups []HostGroup
	// MaxArraySize is the most elements a job array may have (the
	// configuration's max_array_size, LSF's MAX_JOB_ARRAY_SIZE; 0 means
	// jobarray.DefaultMaxSize).
	MaxArraySize int
	// ReservationUsage is how each host consumable is reserved, indexed
	// by ResID (the configuration's reservation_usage); nil or shorter
	// than Resources means PerHost for the rest. Read it with Reserve.
	ReservationUsage []ReserveMethod
	// Slurm is the configuration's slurm section (docs/slurm.md): the
	// multifactor picker's settings and the partitions' defaults for
	// Slurm workloads; nil when absent.
	Slurm *SlurmConfig

	schema     *Schema
	classes    bool        // some entry is a host class (Init)
	queueHosts [][]bool    // per queue: host mask, nil when the queue has no host list
	groups     *groupIndex // the groups expanded (Init)
	gpuRes     ResID       // ngpus_physical's ResID, -1 when no host defines it (Init)
}

// HasClasses reports whether some entry of c.Hosts is a host class
// (Host.Members > 1). Init must have been called.
func (c *Cluster) HasClasses() bool { return c.classes }

// IsClass reports whether host h is a host class entry. Init must have
// been called.
func (c *Cluster) IsClass(h HostID) bool { return c.classes && c.Hosts[h].Members > 1 }

// GPUResource returns the ResID of ngpus_physical (gpureq.Resource), the
// consumable that counts each host's GPUs, and false when no host
// defines it. Init must have been called.
func (c *Cluster) GPUResource() (ResID, bool) { return c.gpuRes, c.gpuRes >= 0 }

// HostByName returns the ID of the named host, or ok=false.
func (c *Cluster) HostByName(name string) (HostID, bool) {
	return c.schema.hostByName(name)
}

// ResourceByName returns the ID of the named host consumable resource.
func (c *Cluster) ResourceByName(name string) (ResID, bool) {
	for i, n := range c.Resources {
		if n == name {
			return ResID(i), true
		}
	}
	return 0, false
}

// SharedByName returns the ID of the named shared resource.
func (c *Cluster) SharedByName(name string) (SharedID, bool) {
	for i, s := range c.Shared {
		if s.Name == name {
			return SharedID(i), true
		}
	}
	return 0, false
}

// QueueByName returns the ID of the named queue.
func (c *Cluster) QueueByName(name string) (QueueID, bool) {
	for i, q := range c.Queues {
		if q.Name == name {
			return QueueID(i), true
		}
	}
	return 0, false
}

// Schema returns the attribute schema that select and order expressions of
// this cluster compile against.
func (c *Cluster) Schema() *Schema { return c.schema }

// QueueHasHost reports whether queue q may use host h (a queue without a
// host list may use every host).
func (c *Cluster) QueueHasHost(q QueueID, h HostID) bool {
	m := c.queueHosts[q]
	return m == nil || m[h]
}
