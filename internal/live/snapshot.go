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
//   - a running job holds exactly the slots it holds on each host
//     (RunningOn), from its start, and runs for its estimate (-W, else its
//     queue's default_runlimit); one that has run past its estimate, or
//     has none, ends at now + 1 if its estimate is past, never if it has
//     none (a job of unknown length holds its slots for good);
//   - a pending job is submitted at now (submit order kept by job ID) and
//     runs for its estimate, never ending without one.
//
// It fails only when a job's queue or host is not in the configuration
// (which the server's checks rule out).
func (k *Core) Snapshot(now int64) (*cluster.Cluster, error) {
	c := *k.Cluster
	c.Hosts = slices.Clone(k.Cluster.Hosts)
	c.Queues = slices.Clone(k.Cluster.Queues)
	c.Jobs = nil
	for _, j := range k.State.Jobs {
		if j.State != state.Pend && j.State != state.Run {
			continue
		}
		spec, err := k.spec(&j.Submit, j.SubmitTime)
		if err != nil {
			return nil, err
		}
		spec.Runtime = spec.Estimate
		if j.State == state.Pend {
			spec.Submit = now
			c.Jobs = append(c.Jobs, *spec)
			continue
		}
		spec.Start = seconds(j.StartTime)
		spec.Submit = min(spec.Submit, spec.Start)
		if spec.Estimate > 0 && spec.Start+spec.Estimate <= now {
			spec.Runtime = now + 1 - spec.Start
		}
		for _, a := range j.Hosts {
			h, ok := c.HostByName(a.Host)
			if !ok {
				return nil, fmt.Errorf("job %d runs on host %q, which the configuration no longer has", j.Job, a.Host)
			}
			spec.RunningOn = append(spec.RunningOn, cluster.HostSlots{Host: h, Slots: a.Slots})
		}
		slices.SortFunc(spec.RunningOn, func(a, b cluster.HostSlots) int { return int(a.Host) - int(b.Host) })
		c.Jobs = append(c.Jobs, *spec)
	}
	return &c, nil
}
