package framework

import "github.com/xce-sched/xce/cluster"

// Committer persists allocations: the live store, or the simulator's and
// `xce schedule`'s in-memory one. The runner writes each allocation through
// one transaction and publishes it on the job only after Commit succeeded.
type Committer interface {
	Begin(job *Job) Txn
}

// Txn is one allocation being written. Each Put is one write; any error
// makes the runner Abort the transaction and roll back every claim.
type Txn interface {
	PutHost(a cluster.HostAlloc) error
	PutShared(a cluster.SharedAmount) error
	Commit() error
	// Abort discards the transaction's writes; it is idempotent.
	Abort()
}

// AllocTxn is an optional Txn capability: PutAlloc writes a whole
// allocation in one call, in place of one PutHost per host and one
// PutShared per shared resource. a is the allocation the runner publishes
// on the job once Commit succeeds; nobody modifies it afterwards, so the
// transaction may keep it rather than copy it.
type AllocTxn interface {
	PutAlloc(a *cluster.JobAlloc) error
}
