package runtime

import (
	"cmp"
	"slices"

	"github.com/xce-sched/xce/cluster"
	"github.com/xce-sched/xce/framework"
)

// MemCommitter is the in-memory committer used by `xce schedule` and the
// simulator: it records each committed allocation by job ID. The cluster
// State itself is kept by the runner; this is the record of who holds what.
//
// It keeps an append-only log of commits and removals (one 16-byte entry
// each, no hashing on the scheduling path) and builds its by-ID index only
// when asked; the log is compacted once it is more than twice the live
// records. It is not safe for concurrent use (Alloc and Len build the
// index).
type MemCommitter struct {
	log   []memEntry                          // commits (alloc set) and removals (nil), in order
	live  int                                 // commits less removals since the last compaction (an estimate of the live records)
	index map[cluster.JobID]*cluster.JobAlloc // built from log on demand; nil when stale
	txn   memTxn
}

type memEntry struct {
	id    cluster.JobID
	alloc *cluster.JobAlloc // nil: the job was removed
}

var _ framework.Committer = (*MemCommitter)(nil)

// NewMemCommitter returns an empty in-memory committer.
func NewMemCommitter() *MemCommitter { return &MemCommitter{} }

// Begin implements framework.Committer. Only one transaction is open at a
// time (the runner commits one job at a time).
func (m *MemCommitter) Begin(job *framework.Job) framework.Txn {
	m.txn.id, m.txn.open, m.txn.whole = job.Spec.ID, true, nil
	m.txn.m = m
	m.txn.alloc.Hosts, m.txn.alloc.Shared = m.txn.alloc.Hosts[:0], m.txn.alloc.Shared[:0]
	return &m.txn
}

// Alloc returns the committed allocation of job id, or nil.
func (m *MemCommitter) Alloc(id cluster.JobID) *cluster.JobAlloc { return m.byID()[id] }

// Len returns the number of committed allocations.
func (m *MemCommitter) Len() int { return len(m.byID()) }

// Remove forgets job id's allocation (the job finished).
func (m *MemCommitter) Remove(id cluster.JobID) {
	m.live--
	m.append(memEntry{id: id})
}

func (m *MemCommitter) append(e memEntry) {
	m.log = append(m.log, e)
	m.index = nil
	if len(m.log) > 2*m.live+1024 {
		m.compact()
	}
}

// byID replays the log into the index.
func (m *MemCommitter) byID() map[cluster.JobID]*cluster.JobAlloc {
	if m.index == nil {
		m.index = make(map[cluster.JobID]*cluster.JobAlloc, m.live)
		for _, e := range m.log {
			if e.alloc != nil {
				m.index[e.id] = e.alloc
			} else {
				delete(m.index, e.id)
			}
		}
	}
	return m.index
}

// compact rewrites the log as one entry per live record, in job ID order.
func (m *MemCommitter) compact() {
	idx := m.byID()
	m.log = m.log[:0]
	for id, a := range idx {
		m.log = append(m.log, memEntry{id, a})
	}
	slices.SortFunc(m.log, func(a, b memEntry) int { return cmp.Compare(a.id, b.id) })
	m.live = len(m.log)
}

type memTxn struct {
	m     *MemCommitter
	id    cluster.JobID
	whole *cluster.JobAlloc // set by PutAlloc: kept as it is
	alloc cluster.JobAlloc  // scratch for PutHost and PutShared, reused by every transaction
	open  bool
}

var _ framework.AllocTxn = (*memTxn)(nil)

// PutAlloc implements framework.AllocTxn: the record is a itself.
func (t *memTxn) PutAlloc(a *cluster.JobAlloc) error {
	t.whole = a
	return nil
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
	a := t.whole
	if a == nil {
		a = t.copyParts()
	}
	t.whole, t.open = nil, false
	t.m.live++
	t.m.append(memEntry{t.id, a})
	return nil
}

// copyParts returns a new allocation holding what PutHost and PutShared
// wrote (one heap object for the common one-host case).
func (t *memTxn) copyParts() *cluster.JobAlloc {
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
	return a
}

func (t *memTxn) Abort() { t.open, t.whole = false, nil }
