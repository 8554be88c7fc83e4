// Package plugins assembles the in-tree plugins into a registry.
package plugins

import (
	"errors"

	"github.com/xce-sched/xce/framework"
	"github.com/xce-sched/xce/framework/plugins/array"
	"github.com/xce-sched/xce/framework/plugins/backfill"
	"github.com/xce-sched/xce/framework/plugins/conservative"
	"github.com/xce-sched/xce/framework/plugins/dependency"
	"github.com/xce-sched/xce/framework/plugins/easy"
	"github.com/xce-sched/xce/framework/plugins/exclusive"
	"github.com/xce-sched/xce/framework/plugins/fairshare"
	"github.com/xce-sched/xce/framework/plugins/fcfs"
	"github.com/xce-sched/xce/framework/plugins/firstfit"
	"github.com/xce-sched/xce/framework/plugins/limit"
	"github.com/xce-sched/xce/framework/plugins/multifactor"
	"github.com/xce-sched/xce/framework/plugins/parjob"
	"github.com/xce-sched/xce/framework/plugins/priority"
	"github.com/xce-sched/xce/framework/plugins/seqjob"
)

// NewInTreeRegistry returns a registry of every plugin shipped with xce:
// the seqjob and parjob allocators, the priority, fairshare and multifactor
// pickers, the fcfs, firstfit, easy, conservative and backfill policies, the limit and exclusive
// preparers, and
// the array and dependency gates.
func NewInTreeRegistry() framework.Registry {
	r := framework.Registry{}
	must := func(err error) {
		if err != nil {
			panic(err) // names below are distinct constants; a clash is a programming error
		}
	}
	must(r.Register(seqjob.Name, func(framework.Handle) (framework.Plugin, error) { return seqjob.New(), nil }))
	must(r.Register(parjob.Name, func(framework.Handle) (framework.Plugin, error) { return parjob.New(), nil }))
	must(r.Register(priority.Name, func(framework.Handle) (framework.Plugin, error) { return priority.Plugin{}, nil }))
	must(r.Register(fairshare.Name, func(h framework.Handle) (framework.Plugin, error) {
		if h.Queue < 0 {
			return nil, errors.New("fairshare is a per-queue picker")
		}
		return fairshare.New(h.Cluster, h.Queue), nil
	}))
	must(r.Register(multifactor.Name, func(h framework.Handle) (framework.Plugin, error) {
		if h.Queue < 0 {
			return nil, errors.New("multifactor is a per-queue picker")
		}
		return multifactor.New(h.Cluster, h.Queue), nil
	}))
	must(r.Register(fcfs.Name, func(framework.Handle) (framework.Plugin, error) { return fcfs.Plugin{}, nil }))
	must(r.Register(firstfit.Name, func(framework.Handle) (framework.Plugin, error) { return firstfit.Plugin{}, nil }))
	must(r.Register(easy.Name, func(framework.Handle) (framework.Plugin, error) { return easy.Plugin{}, nil }))
	must(r.Register(conservative.Name, func(h framework.Handle) (framework.Plugin, error) {
		return conservative.Plugin{Depth: maxJobTest(h)}, nil
	}))
	must(r.Register(backfill.Name, func(h framework.Handle) (framework.Plugin, error) {
		return backfill.Plugin{Depth: maxJobTest(h)}, nil
	}))
	must(r.Register(array.Name, func(framework.Handle) (framework.Plugin, error) { return array.New(), nil }))
	must(r.Register(dependency.Name, func(h framework.Handle) (framework.Plugin, error) {
		if h.Jobs == nil {
			return nil, errors.New("the dependency gate needs the scheduler's jobs (Handle.Jobs)")
		}
		return dependency.New(h.Jobs), nil
	}))
	must(r.Register(exclusive.Name, func(h framework.Handle) (framework.Plugin, error) { return exclusive.New(h.Cluster, h.State), nil }))
	must(r.Register(limit.Name, func(h framework.Handle) (framework.Plugin, error) { return limit.New(h.Cluster, h.State), nil }))
	return r
}

// maxJobTest is the MaxJobTest of the queue a policy is built for (0 for
// a cluster-wide build).
func maxJobTest(h framework.Handle) int {
	if h.Queue < 0 || h.Cluster == nil || int(h.Queue) >= len(h.Cluster.Queues) {
		return 0
	}
	return h.Cluster.Queues[h.Queue].MaxJobTest
}
