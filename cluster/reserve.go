package cluster

// ReserveMethod is how a job's rusage[] of a host consumable is reserved
// when the job places several tasks (LSF's ReservationUsage section of
// lsb.resources, METHOD column; docs/reservation.md).
type ReserveMethod uint8

const (
	// PerHost reserves the amount once on every host the job runs on,
	// however many of its tasks run there: LSF's default (bsub -n 4 -R
	// "rusage[mem=500]" on one host reserves 500 MB there, not 2,000).
	PerHost ReserveMethod = iota
	// PerTask reserves the amount for every task slot (LSF's PER_TASK,
	// or RESOURCE_RESERVE_PER_TASK=Y in lsb.params).
	PerTask
	// PerJob reserves the amount once for the whole job, on its first
	// host: the host of the first task of the requirement term that asks
	// for it (LSF's PER_JOB).
	PerJob
)

// reserveNames are the configuration spellings, indexed by ReserveMethod.
var reserveNames = [...]string{"per_host", "per_task", "per_job"}

// String returns the configuration spelling: per_host, per_task or
// per_job.
func (m ReserveMethod) String() string {
	if int(m) < len(reserveNames) {
		return reserveNames[m]
	}
	return "ReserveMethod(?)"
}

// Reserve returns how resource r is reserved (the configuration's
// reservation_usage; PerHost when it does not name r).
func (c *Cluster) Reserve(r ResID) ReserveMethod {
	if int(r) < len(c.ReservationUsage) {
		return c.ReservationUsage[r]
	}
	return PerHost
}

// loadReservationUsage reads the optional top-level reservation_usage
// mapping, resource name → method, into c.ReservationUsage. Each key must
// be a host consumable some host defines; a shared resource is refused,
// since a shared resource is always reserved once per job.
func (l *loader) loadReservationUsage(top *fieldSet) error {
	if !l.has(top, "reservation_usage") {
		return nil
	}
	e := top.m["reservation_usage"]
	es, _, err := l.mapping(e.val, e.path)
	if err != nil {
		return err
	}
	c := l.c
	methods := make([]ReserveMethod, len(c.Resources))
	for _, re := range es {
		r, ok := l.resIDs[re.key]
		if !ok {
			if l.sharedExists(re.key) {
				return l.errAt(re.kn, re.path, "%s is a shared resource, which is reserved once per job; reservation_usage names host resources", quoteValue(re.key))
			}
			return l.errAt(re.kn, re.path, "unknown host resource %s (no host defines it)", quoteValue(re.key))
		}
		s, n, err := l.toStr(re.val, re.path)
		if err != nil {
			return err
		}
		m := -1
		for i, name := range reserveNames {
			if s == name {
				m = i
			}
		}
		if m < 0 {
			return l.errAt(n, re.path, "must be one of per_host, per_task, per_job, got %s", quoteValue(s))
		}
		methods[r] = ReserveMethod(m)
	}
	c.ReservationUsage = methods
	return nil
}
