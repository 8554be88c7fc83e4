package runtime

import (
	"fmt"

	"github.com/xce-sched/xce/cluster"
	"github.com/xce-sched/xce/framework"
)

// Plan runs the allocation algorithm for job on this runner's state, a
// projection of the cluster into the future (backfilling), without
// committing or publishing anything: it returns the allocation the job
// would get, which stays reserved in the projection, or false. The result
// is valid only until the next Plan (it reuses the runner's buffers): keep
// a Clone. The job's fields are left as they were, and no pending reason is
// computed. order, when not nil, is the host walk order for terms without
// order[] (the queue's hosts only).
func (r *Runner) Plan(job *framework.Job, a framework.Allocator, order []cluster.HostID) (*cluster.JobAlloc, bool) {
	return r.planFuture(job, a, order, nil, nil)
}

// planFuture is Plan with a busy-first order (dispatcher.busyFirst) that
// stands for each host class twice: at the positions busy marks, the
// class gives only the members that are busy in live, the state now
// (those that running jobs will have released); at its other position,
// the rest. Of the members idle in the projection, it counts as idle now
// as many as are idle in live (min of the two): a reservation takes them
// last.
func (r *Runner) planFuture(job *framework.Job, a framework.Allocator, order []cluster.HostID, busy []bool, live *cluster.State) (*cluster.JobAlloc, bool) {
	if job.Req == nil {
		return nil, false
	}
	if busy != nil {
		if len(r.keep) != len(r.view.Cluster.Hosts) {
			r.keep = make([]int, len(r.view.Cluster.Hosts))
		}
		for i, h := range order {
			if busy[i] {
				r.keep[h] = min(live.FreeSlots(h), r.view.State.FreeSlots(h))
			}
		}
	}
	r.walkBusy = busy
	defer func() { r.walkBusy = nil }()
	saved := job.Reasons
	r.dry, r.planned, r.walkOrder = true, nil, order
	r.arena, r.counters = r.arena[:0], r.counters[:0] // the previous plan's snapshots
	r.BeginCycle()                                    // the projection changed since the last plan
	placed, err := r.allocate(job, a)
	r.dry, r.walkOrder = false, nil
	job.Reasons = saved
	if err != nil || !placed {
		return nil, false
	}
	return r.planned, true
}

// Place commits alloc for job: an allocation the runner planned on a
// projection of the current state (Plan at the current time). It checks
// that alloc still fits every free slot, consumable, shared resource and
// limit counter, reserves it, commits it through the committer and
// publishes it, as finalize does; on any failure nothing changes. The
// checks are those of a fresh attempt's claims (State.TakeChecked): each
// host's slots, consumables and limit counters once the hosts before it
// are reserved, then the shared resources.
func (r *Runner) Place(job *framework.Job, alloc *cluster.JobAlloc) error {
	st := r.view.State
	// The same checks as the runner's claims, host after host, so that the
	// parts of the allocation are checked on their sum.
	if err := st.TakeChecked(alloc, true); err != nil {
		return fmt.Errorf("job %d: planned allocation no longer fits: %w", job.Spec.ID, err)
	}
	if err := r.commit(job, alloc); err != nil {
		st.Give(alloc)
		return fmt.Errorf("commit job %d: %w", job.Spec.ID, err)
	}
	r.placed++
	job.Alloc = alloc
	job.State = framework.Running
	job.Reasons = framework.PendReasons{}
	return nil
}
