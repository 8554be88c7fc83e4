package sim

import (
	"context"
	"errors"
	"math"
	"slices"

	"github.com/xce-sched/xce/cluster"
	"github.com/xce-sched/xce/framework"
	"github.com/xce-sched/xce/framework/runtime"
	"github.com/xce-sched/xce/internal/live"
)

// Forecast is when and where a pending job is predicted to start: Start
// in the snapshot's seconds (Unix seconds for a live one), and the slots
// on each host, in the placement's order.
type Forecast struct {
	Start int64
	Hosts []cluster.HostSlots
}

// MaxForecastRun bounds, in seconds (about 136 years), how long a job
// runs and is estimated to run in a forecast: a longer one (2^62 s, from
// an event stored before the server bounded estimates, docs/api.md) runs
// that long instead. Every time of the simulation is then at most the
// snapshot's time plus MaxForecastRun for each job (they end one after
// the other at worst), far from overflowing an int64 for any number of
// jobs a server holds (under 2^30), so starts saturate where they would
// have wrapped around.
const MaxForecastRun = 1 << 32

// Forecasts simulates snapshot c (a cluster whose jobs are what runs and
// what waits now, as live.Core.Snapshot makes it, with the reservations
// its conservative queues keep) forward with the plugins of reg, on its
// own scheduler, until every pending job has started or
// nothing is left to happen, and returns when and where each pending job
// starts. A job absent from the answer never starts in the forecast (its
// request cannot be met, or it waits behind a job of unknown length). The
// simulation is Run's: each job runs for its Runtime, a job with none
// never ends.
func Forecasts(ctx context.Context, c *cluster.Cluster, reserved map[cluster.JobID]live.Reserved, reg framework.Registry) (map[cluster.JobID]Forecast, error) {
	s, err := runtime.New(saturate(c), runtime.Options{Registry: reg, EndSlack: live.LiveSlack})
	if err != nil {
		return nil, err
	}
	waiting := 0
	for _, j := range s.Jobs {
		if j.State == framework.Pending {
			waiting++
			if r, ok := reserved[j.Spec.ID]; ok {
				s.RestoreReservation(j, r.Start, r.Alloc)
			}
		}
	}
	out := make(map[cluster.JobID]Forecast, waiting)
	if waiting == 0 {
		return out, nil
	}
	runCtx, done := context.WithCancel(ctx)
	defer done()
	_, err = Run(runCtx, s, Options{Until: math.MaxInt64, Observe: func(e *Event) {
		for _, j := range e.Considered {
			if j.State != framework.Running || j.Start != e.Now {
				continue
			}
			f := Forecast{Start: e.Now}
			for _, h := range j.Alloc.Hosts {
				f.Hosts = append(f.Hosts, cluster.HostSlots{Host: h.Host, Slots: h.Slots})
			}
			out[j.Spec.ID] = f
		}
		if len(out) == waiting {
			done() // every pending job has its start
		}
	}})
	if err != nil && !(errors.Is(err, context.Canceled) && ctx.Err() == nil) {
		return nil, err
	}
	return out, nil
}

// saturate returns c, or a copy of it whose jobs run and are estimated at
// most MaxForecastRun seconds (their estimates keep their LiveSlack).
func saturate(c *cluster.Cluster) *cluster.Cluster {
	long := func(j cluster.Job) bool {
		return j.Runtime > MaxForecastRun || j.Estimate > MaxForecastRun+live.LiveSlack
	}
	if !slices.ContainsFunc(c.Jobs, long) {
		return c
	}
	cp := *c
	cp.Jobs = slices.Clone(c.Jobs)
	for i := range cp.Jobs {
		j := &cp.Jobs[i]
		j.Runtime = min(j.Runtime, MaxForecastRun)
		j.Estimate = min(j.Estimate, MaxForecastRun+live.LiveSlack)
	}
	return &cp
}
