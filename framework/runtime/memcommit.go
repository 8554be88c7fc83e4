package runtime

import (
	"slices"

	"github.com/xce-sched/xce/cluster"
	"github.com/xce-sched/xce/framework"
)

// MemCommitter is the in-memory committer used by `xce schedule` and the
// simulator: it records each committed allocation by job ID. The cluster
// State itself is kept by the runner; this is the record of who holds what.
type MemCommitter struct {
	allocs map[cluster.JobID]*cluster.JobAlloc
	txn    memTxn
}

var _ framework.Committer = (*MemCommitter)(nil)

// NewMemCommitter returns an empty in-memory committer.
func NewMemCommitter() *MemCommitter {
	return &MemCommitter{allocs: map[cluster.JobID]*cluster.JobAlloc{}}
}

// Begin implements framework.Committer. Only one transaction is open at a
// time (the runner commits one job at a time).
func (m *MemCommitter) Begin(job *framework.Job) framework.Txn {
	m.txn.id, m.txn.open = job.Spec.ID, true
	m.txn.m = m
	m.txn.alloc.Hosts, m.txn.alloc.Shared = m.txn.alloc.Hosts[:0], m.txn.alloc.Shared[:0]
	return &m.txn
}

// Alloc returns the committed allocation of job id, or nil.
func (m *MemCommitter) Alloc(id cluster.JobID) *cluster.JobAlloc { return m.allocs[id] }

// Len returns the number of committed allocations.
func (m *MemCommitter) Len() int { return len(m.allocs) }

// Remove forgets job id's allocation (the job finished).
func (m *MemCommitter) Remove(id cluster.JobID) { delete(m.allocs, id) }

type memTxn struct {
	m     *MemCommitter
	id    cluster.JobID
	alloc cluster.JobAlloc // scratch, reused by every transaction
	open  bool
}

func (t *memTxn) PutHost(a cluster.HostAlloc) error {
	t.alloc.Hosts = append(t.alloc.Hosts, a)
	return nil
}

func (t *memTxn) PutShared(a cluster.SharedAmount) error {
	t.alloc.Shared = append(t.alloc.Shared, a)
	return nil
}

// memRecord is a committed allocation of one host in one heap object.
type memRecord struct {
	alloc cluster.JobAlloc
	host  [1]cluster.HostAlloc
}

func (t *memTxn) Commit() error {
	if !t.open {
		return nil
	}
	var a *cluster.JobAlloc
	if len(t.alloc.Hosts) == 1 {
		rec := &memRecord{host: [1]cluster.HostAlloc{t.alloc.Hosts[0]}}
		a = &rec.alloc
		a.Hosts = rec.host[:]
	} else {
		a = &cluster.JobAlloc{Hosts: slices.Clone(t.alloc.Hosts)}
	}
	if len(t.alloc.Shared) > 0 {
		a.Shared = slices.Clone(t.alloc.Shared)
	}
	t.m.allocs[t.id] = a
	t.open = false
	return nil
}

func (t *memTxn) Abort() { t.open = false }
