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
