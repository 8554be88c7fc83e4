package runtime

import (
	"fmt"

	"github.com/xce-sched/xce/cluster"
	"github.com/xce-sched/xce/framework"
)

// finalize builds the JobAlloc in a local from the claims and the
// alternative's shared needs, reserves the shared resources, writes it all
// through one committer transaction and publishes it on the job only when
// the commit succeeded. On any failure it aborts the transaction, releases
// the shared resources, rolls back every claim and returns the error.
func (r *Runner) finalize(job *framework.Job, alt *framework.Alternative) error {
	st := r.view.State
	if r.dry {
		// A plan on a projection: the state keeps it; nothing is committed
		// or published. The result reuses the runner's buffers (and
		// aliases the claim snapshots) until the next plan.
		p := &r.planBuf
		p.Hosts, p.Shared = p.Hosts[:0], p.Shared[:0]
		for _, c := range r.claims {
			p.Hosts = append(p.Hosts, c.HostAlloc)
		}
		for _, sh := range alt.Shared {
			if sh.Amount > 0 {
				p.Shared = append(p.Shared, sh)
				st.ReserveShared(sh.Shared, sh.Amount)
			}
		}
		r.planned = p
		r.claims = r.claims[:0]
		return nil
	}
	alloc := r.newJobAlloc(alt)
	for _, sh := range alloc.Shared {
		st.ReserveShared(sh.Shared, sh.Amount)
	}
	if err := r.commit(job, alloc); err != nil {
		for _, sh := range alloc.Shared {
			st.ReleaseShared(sh.Shared, sh.Amount)
		}
		r.rollback()
		return fmt.Errorf("commit job %d: %w", job.Spec.ID, err)
	}
	// The state keeps the reservations; the claims are now the job's.
	r.placed++
	r.claims = r.claims[:0]
	r.arena = r.arena[:0]
	r.counters = r.counters[:0]
	job.Alloc = alloc
	job.State = framework.Running
	return nil
}

// smallAlloc holds a job allocation of one host, a few consumables and
// counters and one shared resource in a single heap object: most jobs
// are that small, and a cycle that starts 100,000 of them would otherwise
// make four or five allocations per job.
type smallAlloc struct {
	alloc  cluster.JobAlloc
	host   [1]cluster.HostAlloc
	res    [smallRes]cluster.ResAmount
	cnt    [smallCounters]cluster.CounterAmount
	shared [smallShared]cluster.SharedAmount
}

// bareAlloc is smallAlloc for a job that holds slots on one host and
// nothing else (no consumable, limit counter or shared resource): half
// its size.
type bareAlloc struct {
	alloc cluster.JobAlloc
	host  [1]cluster.HostAlloc
}

// The most consumables, limit counters and shared resources a smallAlloc
// holds.
const smallRes, smallCounters, smallShared = 2, 2, 1

// newJobAlloc copies the attempt's claims and alt's shared needs into a
// new JobAlloc that shares nothing with the runner's buffers. The claims'
// Res and Counters snapshots lie back to back in r.arena and r.counters,
// in claim order, so each is copied once and sliced per host.
func (r *Runner) newJobAlloc(alt *framework.Alternative) *cluster.JobAlloc {
	nshared := 0
	for _, sh := range alt.Shared {
		if sh.Amount > 0 {
			nshared++
		}
	}
	var alloc *cluster.JobAlloc
	var res []cluster.ResAmount
	var cnt []cluster.CounterAmount
	if len(r.claims) == 1 && len(r.arena) == 0 && len(r.counters) == 0 && nshared == 0 {
		// Slots alone (a trace's job): no room for the rest.
		b := new(bareAlloc)
		alloc = &b.alloc
		alloc.Hosts = b.host[:1:1]
	} else if len(r.claims) == 1 && len(r.arena) <= smallRes && len(r.counters) <= smallCounters && nshared <= smallShared {
		b := new(smallAlloc)
		alloc = &b.alloc
		alloc.Hosts = b.host[:1:1]
		if nshared > 0 {
			alloc.Shared = b.shared[:0:nshared]
		}
		res, cnt = b.res[:len(r.arena):len(r.arena)], b.cnt[:len(r.counters):len(r.counters)]
	} else {
		alloc = &cluster.JobAlloc{Hosts: make([]cluster.HostAlloc, len(r.claims))}
		if nshared > 0 {
			alloc.Shared = make([]cluster.SharedAmount, 0, nshared)
		}
		res, cnt = make([]cluster.ResAmount, len(r.arena)), make([]cluster.CounterAmount, len(r.counters))
	}
	copy(res, r.arena)
	copy(cnt, r.counters)
	for i, c := range r.claims {
		h := cluster.HostAlloc{Host: c.Host, Slots: c.Slots, GPUs: c.GPUs} // the devices State.Reserve chose for the claim
		if n := len(c.Res); n > 0 {
			h.Res, res = res[:n:n], res[n:]
		}
		if n := len(c.Counters); n > 0 {
			h.Counters, cnt = cnt[:n:n], cnt[n:]
		}
		alloc.Hosts[i] = h
	}
	for _, sh := range alt.Shared {
		if sh.Amount > 0 {
			alloc.Shared = append(alloc.Shared, sh)
		}
	}
	return alloc
}

// commit writes alloc through one committer transaction, aborting it on
// any failure.
func (r *Runner) commit(job *framework.Job, alloc *cluster.JobAlloc) error {
	txn := r.committer.Begin(job)
	if err := write(txn, alloc); err != nil {
		txn.Abort()
		return err
	}
	return nil
}

// write puts alloc in txn, whole when txn is a framework.AllocTxn, else
// host by host and shared resource by shared resource, and commits it.
func write(txn framework.Txn, alloc *cluster.JobAlloc) error {
	if at, ok := txn.(framework.AllocTxn); ok {
		if err := at.PutAlloc(alloc); err != nil {
			return err
		}
		return txn.Commit()
	}
	for _, h := range alloc.Hosts {
		if err := txn.PutHost(h); err != nil {
			return err
		}
	}
	for _, sh := range alloc.Shared {
		if err := txn.PutShared(sh); err != nil {
			return err
		}
	}
	return txn.Commit()
}
