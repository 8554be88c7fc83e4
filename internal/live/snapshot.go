package live

import (
	"fmt"
	"slices"

	"github.com/xce-sched/xce/cluster"
	"github.com/xce-sched/xce/internal/state"
)

// Snapshot returns what a forecast simulates forward from, at now (Unix
// seconds): a copy of the configuration in force, with each host's
// status as the scheduler has it (an unavail or closed host takes no job
// in the forecast either), and as its jobs the state's unfinished ones,
// the state itself untouched:
//
//   - a running job holds exactly what it holds on each host (RunningOn,
//     and Holds: its consumables, GPUs and shared resources, so that a
//     compound job's terms hold what they hold where they run), from its
//     start, and runs for its estimate (-W, else its
//     queue's default_runlimit; the scheduler plans for LiveSlack more,
//     as the server's does); one that has run past its estimate ends at
//     now + 1, one with none never (a job of unknown length holds its
//     slots for good);
//   - a pending job is submitted at now (submit order kept by job ID) and
//     runs for its estimate, never ending without one.
//   - a pending job's dependency keeps the value of each condition on
//     jobs that have all ended (the copy holds no ended job), and looks up
//     the others in the copy.
//
// It fails only when a job's queue or host is not in the configuration
// (which the server's checks rule out).
//
// reserved holds the reservations the conservative queues keep for
// pending jobs (the state's), for the forecast's scheduler to keep too
// (sim.Forecasts).
func (k *Core) Snapshot(now int64) (c *cluster.Cluster, reserved map[cluster.JobID]Reserved, err error) {
	cp := *k.Cluster
	c = &cp
	c.Hosts = slices.Clone(k.Cluster.Hosts)
	c.Queues = slices.Clone(k.Cluster.Queues)
	c.Jobs = nil
	reserved = map[cluster.JobID]Reserved{}
	for _, j := range k.State.Jobs {
		if j.State != state.Pend && j.State != state.Run {
			continue
		}
		spec, err := k.spec(&j.Submit, j.SubmitTime)
		if err != nil {
			return nil, nil, err
		}
		if spec.Estimate > 0 {
			// It runs its estimate, the end the scheduler plans for is a
			// second later (LiveSlack), as in the live server.
			spec.Runtime = max(spec.Estimate-LiveSlack, 1)
		}
		if j.State == state.Pend {
			spec.Submit = now
			if spec.Depend != nil {
				// The copy holds no ended job: what its conditions on
				// ended jobs say is fixed now (depend.Expr.Bind).
				spec.Depend = spec.Depend.Bind(k.stateJobs(j.User, j.Job))
			}
			c.Jobs = append(c.Jobs, *spec)
			if r := j.Reserved; r != nil {
				if alloc, err := k.alloc(j.Job, r.Hosts, r.Shared); err == nil {
					reserved[spec.ID] = Reserved{Start: r.Start, Alloc: alloc}
				}
			}
			continue
		}
		spec.Start = seconds(j.StartTime)
		spec.Submit = min(spec.Submit, spec.Start)
		if spec.Runtime > 0 && spec.Start+spec.Runtime <= now {
			spec.Runtime = now + 1 - spec.Start
		}
		for _, a := range j.Hosts {
			h, ok := c.HostByName(a.Host)
			if !ok {
				return nil, nil, fmt.Errorf("job %d runs on host %q, which the configuration no longer has", j.Job, a.Host)
			}
			spec.RunningOn = append(spec.RunningOn, cluster.HostSlots{Host: h, Slots: a.Slots})
		}
		slices.SortFunc(spec.RunningOn, func(a, b cluster.HostSlots) int { return int(a.Host) - int(b.Host) })
		// Exactly what it holds: which compound term runs where, its GPUs.
		if spec.Holds, err = k.alloc(j.Job, j.Hosts, j.Shared); err != nil {
			return nil, nil, err
		}
		slices.SortFunc(spec.Holds.Hosts, func(a, b cluster.HostAlloc) int { return int(a.Host) - int(b.Host) })
		c.Jobs = append(c.Jobs, *spec)
	}
	return c, reserved, nil
}

// Reserved is a kept reservation: from Start (seconds), on Alloc.
type Reserved struct {
	Start int64
	Alloc *cluster.JobAlloc
}
