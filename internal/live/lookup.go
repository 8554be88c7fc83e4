package live

import (
	"fmt"

	"github.com/xce-sched/xce/cluster"
	"github.com/xce-sched/xce/depend"
	"github.com/xce-sched/xce/framework"
	"github.com/xce-sched/xce/internal/event"
	"github.com/xce-sched/xce/internal/state"
)

// The core is the scheduler's framework.Lookup (runtime.Options.Lookup):
// the scheduler holds only pending and running jobs, while a dependency
// may name any job of the log, ended ones included (and a restarted
// server's scheduler never saw those).

// nameKey is a job name of one user.
type nameKey struct{ user, name string }

// JobByID implements framework.Lookup: the scheduler's job while it pends
// or runs, else the job as the state says it ended (nil when there is no
// such job, or it is in neither).
func (k *Core) JobByID(id cluster.JobID) *framework.Job {
	if j := k.jobs[event.JobID(id)]; j != nil {
		return j
	}
	if j := k.ended[event.JobID(id)]; j != nil {
		return j
	}
	sj := k.State.Job(int64(id))
	if sj == nil || sj.State != state.Done && sj.State != state.Exit {
		return nil
	}
	// An ended job's outcome is final: built once.
	j := &framework.Job{Spec: &cluster.Job{ID: id, User: sj.User, Name: sj.Name, Array: cluster.JobID(sj.ArrayJob), ArrayIndex: sj.ArrayIndex},
		State: framework.Done, ExitCode: sj.ExitCode, Failed: sj.State == state.Exit, Cancelled: sj.StartTime == 0}
	if k.ended == nil {
		k.ended = map[event.JobID]*framework.Job{}
	}
	k.ended[event.JobID(id)] = j
	return j
}

// JobsByName implements framework.Lookup.
func (k *Core) JobsByName(user, name string) []*framework.Job {
	ids := k.names[nameKey{user, name}]
	out := make([]*framework.Job, 0, len(ids))
	for _, id := range ids {
		if j := k.JobByID(cluster.JobID(id)); j != nil {
			out = append(out, j)
		}
	}
	return out
}

// index adds the state's jobs from ID from on to the name index.
func (k *Core) index(from event.JobID) {
	if k.names == nil {
		k.names = map[nameKey][]event.JobID{}
	}
	for id := from; id < k.State.NextJob(); id++ {
		if j := k.State.Job(id); j.Name != "" {
			key := nameKey{j.User, j.Name}
			k.names[key] = append(k.names[key], id)
		}
	}
}

// checkRefs refuses a dependency on a job ID that does not exist yet (as
// LSF's bsub does): each ID must be of a job submitted before job, and an
// array element it names must exist. Names are not checked: a name that
// matches none of the user's jobs leaves the dependency unsatisfiable
// until one is submitted.
func (k *Core) checkRefs(e *depend.Expr, job event.JobID) error {
	for _, r := range e.Refs() {
		if r.Name != "" {
			continue
		}
		if r.ID >= job || len(k.State.Select(r.ID, r.Index)) == 0 {
			return fmt.Errorf("job %d: dependency %s: job %s does not exist", job, e, r)
		}
	}
	return nil
}

// stateJobs is a depend.Lookup over the state (read only: it may run under
// the loop's read lock) for the references of job self, of user.
func (k *Core) stateJobs(user string, self event.JobID) depend.Lookup {
	one := func(j *state.Job) depend.Job {
		switch j.State {
		case state.Run:
			return depend.Job{State: depend.Running, Started: true}
		case state.Done:
			return depend.Job{State: depend.Done, ExitCode: j.ExitCode, Started: true}
		case state.Exit:
			return depend.Job{State: depend.Exit, ExitCode: j.ExitCode, Started: j.StartTime != 0}
		}
		return depend.Job{State: depend.Pending}
	}
	return func(r depend.Ref) []depend.Job {
		var out []depend.Job
		if r.Name != "" {
			for _, id := range k.names[nameKey{user, r.Name}] {
				if id != self {
					out = append(out, one(k.State.Job(id)))
				}
			}
			return out
		}
		for _, j := range k.State.Select(r.ID, r.Index) {
			out = append(out, one(j))
		}
		return out
	}
}
