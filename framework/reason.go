package framework

// Reason is a stable pending-reason code. Main reasons explain why a job
// pends; host reasons explain why one host could not take a bucket. The
// codes, their text and the precedence among main reasons are documented in
// docs/pending-reasons.md. Codes are counted, not formatted, on the hot path.
type Reason uint8

// Main reasons (one per pending job per cycle).
const (
	// None: the job did not pend.
	None Reason = iota
	// NoHostMatch: no open host of the job's queue satisfies select[].
	NoHostMatch
	// NotEnoughSlots: matching hosts lack free job slots.
	NotEnoughSlots
	// NotEnoughResource: matching hosts lack a consumable (Detail names it).
	NotEnoughResource
	// SpanUnsatisfiable: enough slots and resources exist in total, but not
	// in the shape span[] or the compound terms ask for.
	SpanUnsatisfiable
	// SameUnsatisfiable: hosts were found, but not sharing the same[]
	// attribute (or not defining it).
	SameUnsatisfiable
	// SharedResource: a cluster-wide shared resource is exhausted (Detail).
	SharedResource
	// LimitReached: a resource allocation limit is reached (Detail: its name).
	LimitReached
	// QueueClosed: the job's queue is closed.
	QueueClosed
	// Priority: held back behind an earlier job of its queue (strict fcfs;
	// later also a backfill reservation).
	Priority
	// BadRequest: the request can never run on this cluster.
	BadRequest
	// ArrayLimit: an element of a job array whose cap on elements running
	// at once (%N) is reached.
	ArrayLimit
	// Dependency: the job's dependency expression is not satisfied yet
	// (Note: the first condition not met).
	Dependency
	// ExclusiveHost: the matching hosts run an exclusive job, or, for an
	// exclusive job, other jobs (bsub -x).
	ExclusiveHost
	// DependencyNeverSatisfied: the job's dependency can never be
	// satisfied (a job it waits for ended the other way); as in LSF, it
	// stays pending until killed (Note: the condition).
	DependencyNeverSatisfied
	// Preempted: the job was suspended by preemption (its state is
	// Suspended) and waits to resume where it ran.
	Preempted
	// Requeued: the job was killed by preemption and put back to pending,
	// in the cycle that preempted it.
	Requeued

	// Host reasons (counted per host; never a main reason).

	// HostClosed: the host is closed by the administrator.
	HostClosed
	// HostUnavail: the host is down or unreachable.
	HostUnavail
	// HostSelect: the host does not satisfy select[].
	HostSelect
	// HostSame: the host does not define a same[] attribute, or has not
	// the value the plan pins.
	HostSame
	// HostNotEnoughSlots: too few free job slots on the host.
	HostNotEnoughSlots
	// HostNotEnoughResource: too little of a consumable on the host (Detail).
	HostNotEnoughResource
	// HostLimit: a per-host or job-level limit instance is full (Detail).
	HostLimit
	// HostExclusive: the host runs an exclusive job, or the job is
	// exclusive and the host runs another job.
	HostExclusive

	numReasons
)

var reasonInfo = [numReasons]struct{ code, text string }{
	None:                     {"", ""},
	NoHostMatch:              {"NoHostMatch", "no open host satisfies the resource requirement's select[]"},
	NotEnoughSlots:           {"NotEnoughSlots", "not enough free job slots on the matching hosts"},
	NotEnoughResource:        {"NotEnoughResource", "not enough %s on the matching hosts"},
	SpanUnsatisfiable:        {"SpanUnsatisfiable", "enough free slots, but not in the shape span[] or the compound terms require"},
	SameUnsatisfiable:        {"SameUnsatisfiable", "no set of hosts with enough free slots shares the same[] attribute"},
	SharedResource:           {"SharedResource", "shared resource %s is exhausted"},
	LimitReached:             {"LimitReached", "limit %s is reached"},
	QueueClosed:              {"QueueClosed", "the queue is closed"},
	Priority:                 {"Priority", "held back for an earlier job of the queue (strict FCFS order, or a backfill reservation)"},
	BadRequest:               {"BadRequest", "the request can never be satisfied on this cluster: %s"},
	ArrayLimit:               {"ArrayLimit", "the job array's limit of elements running at once is reached"},
	Dependency:               {"Dependency", "the dependency condition %s is not satisfied"},
	ExclusiveHost:            {"ExclusiveHost", "the matching hosts run an exclusive job, or other jobs while this one is exclusive"},
	DependencyNeverSatisfied: {"DependencyNeverSatisfied", "the dependency condition %s can never be satisfied"},
	Preempted:                {"Preempted", "suspended by a job of a higher-priority queue; resumes when its hosts have room again"},
	Requeued:                 {"Requeued", "killed by a job of a higher-priority queue and requeued"},
	HostClosed:               {"HostClosed", "closed"},
	HostUnavail:              {"HostUnavail", "unavailable"},
	HostSelect:               {"HostSelect", "select[] not satisfied"},
	HostSame:                 {"HostSame", "same[] attribute undefined or different"},
	HostNotEnoughSlots:       {"HostNotEnoughSlots", "not enough job slots"},
	HostNotEnoughResource:    {"HostNotEnoughResource", "not enough %s"},
	HostLimit:                {"HostLimit", "limit %s reached"},
	HostExclusive:            {"HostExclusive", "runs an exclusive job, or another job while this one is exclusive"},
}

// String returns the stable code, e.g. "NotEnoughSlots".
func (r Reason) String() string {
	if r >= numReasons {
		return "Unknown"
	}
	return reasonInfo[r].code
}

// Text returns the human text of r with detail (a resource or limit name)
// substituted where the text has a %s.
func (r Reason) Text(detail string) string {
	if r >= numReasons {
		return "unknown reason"
	}
	t := reasonInfo[r].text
	for i := 0; i+1 < len(t); i++ {
		if t[i] == '%' && t[i+1] == 's' {
			return t[:i] + detail + t[i+2:]
		}
	}
	return t
}

// IsHostReason reports whether r is a per-host reason.
func (r Reason) IsHostReason() bool { return r >= HostClosed && r < numReasons }

// DetailKind says what a reason's Detail number refers to.
type DetailKind uint8

// Detail kinds.
const (
	DetailNone     DetailKind = iota
	DetailResource            // a host resource (cluster.ResID)
	DetailShared              // a shared resource (cluster.SharedID)
	DetailLimit               // a limit (index in Cluster.Limits)
)

// DetailOf returns what r's detail refers to.
func DetailOf(r Reason) DetailKind {
	switch r {
	case NotEnoughResource, HostNotEnoughResource:
		return DetailResource
	case SharedResource:
		return DetailShared
	case LimitReached, HostLimit:
		return DetailLimit
	}
	return DetailNone
}

// HostReasonCount is the number of hosts that failed for one reason (and
// one detail: resource or limit, -1 when the reason has none).
type HostReasonCount struct {
	Reason Reason
	Detail int32
	Hosts  int
}

// PendReasons is why a job pends after one cycle: one main reason (with its
// detail, -1 when none, and free text for BadRequest) and per-host reason
// counts, sorted by count descending, then reason, then detail. Host reasons
// never change Main.
type PendReasons struct {
	Main Reason
	// Stuck: the job could not run even if every open host were idle and
	// none of its limits used (always so for BadRequest, and for a
	// LimitReached that a limit's maximum decides on the idle cluster).
	// It holds no queue back under strict FCFS.
	Stuck  bool
	Detail int32
	Note   string
	Hosts  []HostReasonCount
	// Shared lists the unmet shared resources (cluster.SharedID) when Main
	// is SharedResource: one entry per unmet resource of the request.
	Shared []int32
}
