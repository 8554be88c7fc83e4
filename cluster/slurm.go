package cluster

// SlurmConfig is the slurm section of a scenario or configuration: what
// a Slurm cluster's configuration says beyond hosts and queues, which the
// multifactor picker and the readers of Slurm workloads use. `xce import
// slurm-conf` writes it from slurm.conf(5) (and, for accounts and QOS,
// from a sacctmgr(1) script); docs/slurm.md gives every rule.
type SlurmConfig struct {
	// FirstJobID is slurm.conf's FirstJobId: the ID Slurm gives the
	// first job of a simulator's event list, the next ones following
	// (0 means 1).
	FirstJobID int64
	// Partitions are the partitions' settings, one per queue that is a
	// Slurm partition, in file order.
	Partitions []SlurmPartition
	// Priority is the priority/multifactor configuration (slurm.conf's
	// Priority* parameters).
	Priority Multifactor
	// QOS are the QOS priorities (sacctmgr's QOS Priority), in file
	// order. A job's QOS not listed has priority 0.
	QOS []SlurmQOS
	// Accounts are the accounts of the association tree (sacctmgr's
	// accounts and users), in file order. An account or user a job names
	// that is not listed joins the tree with 1 share (sacctmgr's default
	// Fairshare=1), under root.
	Accounts []SlurmAccount
}

// SlurmPartition is one partition's settings beyond its queue's.
type SlurmPartition struct {
	// Queue is the queue's name.
	Queue string
	// JobFactor is the partition's PriorityJobFactor (0 … 65533; slurm.conf
	// default 1), which the partition factor normalizes by the largest.
	JobFactor int64
	// DefMemPerCPU and DefMemPerNode are the memory, in MB, of a job that
	// asks for none (DefMemPerCPU, DefMemPerNode); 0: none.
	DefMemPerCPU, DefMemPerNode float64
	// MaxTime is the partition's MaxTime in seconds, -1 for UNLIMITED:
	// a job asking for more is rejected (EnforcePartLimits).
	MaxTime int64
	// DefaultTime is the time limit in seconds of a job that gives none
	// (DefaultTime, else MaxTime), -1 for none.
	DefaultTime int64
}

// Multifactor is Slurm's priority/multifactor configuration
// (slurm.conf(5), "PriorityWeight*", "PriorityMaxAge",
// "PriorityDecayHalfLife", "PriorityCalcPeriod", "PriorityFavorSmall",
// "PriorityFlags", "FairShareDampeningFactor"; the Multifactor Priority
// Plugin page, https://slurm.schedmd.com/priority_multifactor.html).
// Times are in seconds.
type Multifactor struct {
	// The weights, each 0 … 2^32−1 (Slurm's default 0 for every factor).
	WeightAge, WeightFairshare, WeightJobSize, WeightPartition, WeightQOS int64
	// MaxAge is the wait at which the age factor reaches 1 (default 7
	// days).
	MaxAge int64
	// DecayHalfLife is the half-life of past usage (default 7 days); 0:
	// no decay.
	DecayHalfLife int64
	// CalcPeriod is how often priorities and usage are recomputed
	// (default 5 minutes); 0: at every cycle.
	CalcPeriod int64
	// FavorSmall: smaller jobs get the larger job size factor.
	FavorSmall bool
	// SmallRelativeToTime: the job size factor is the job's CPUs over its
	// time limit in minutes, over the cluster's CPUs (PriorityFlags
	// SMALL_RELATIVE_TO_TIME).
	SmallRelativeToTime bool
	// Classic: the classic fair-share factor 2^(−U/S/damping) rather than
	// Fair Tree's rank (PriorityFlags NO_FAIR_TREE; Fair Tree is Slurm's
	// default since 19.05).
	Classic bool
	// DampeningFactor divides the classic factor's exponent
	// (FairShareDampeningFactor, default 1).
	DampeningFactor int64
}

// DefaultMultifactor returns Slurm's defaults: every weight 0, MaxAge
// and DecayHalfLife 7 days, CalcPeriod 5 minutes, Fair Tree, damping 1.
func DefaultMultifactor() Multifactor {
	return Multifactor{MaxAge: 7 * 86400, DecayHalfLife: 7 * 86400, CalcPeriod: 300, DampeningFactor: 1}
}

// SlurmQOS is a QOS and its priority.
type SlurmQOS struct {
	Name     string // the QOS's name
	Priority int64  // 0 … 2^32−1
}

// SlurmAccount is an account of the association tree: its parent
// account ("" for root), its shares among its siblings (sacctmgr
// Fairshare) and its users with their shares.
type SlurmAccount struct {
	Name, Parent string      // the account's name, its parent's ("" for root)
	Shares       int64       // sacctmgr Fairshare
	Users        []UserShare // its user associations and their shares
}

// Partition returns the settings of queue name's partition, or false.
func (s *SlurmConfig) Partition(name string) (SlurmPartition, bool) {
	if s == nil {
		return SlurmPartition{}, false
	}
	for _, p := range s.Partitions {
		if p.Queue == name {
			return p, true
		}
	}
	return SlurmPartition{}, false
}
