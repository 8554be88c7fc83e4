// Package priority is the default job picker: within a queue, jobs are
// considered by submit time, then job ID (first come, first served; LSF's
// default order within a queue).
package priority

import (
	"cmp"
	"slices"

	"github.com/xce-sched/xce/framework"
)

// Name is the plugin's registry name.
const Name = "priority"

// Plugin is the priority picker.
type Plugin struct{}

var (
	_ framework.Picker       = Plugin{}
	_ framework.StableOrder  = Plugin{}
	_ framework.ArrivalOrder = Plugin{}
)

// ArrivalOrder implements framework.ArrivalOrder: the order is by
// arrival.
func (Plugin) ArrivalOrder() {}

// StableOrder implements framework.StableOrder: arrival order is stable,
// and new jobs arrive last.
func (Plugin) StableOrder() {}

// Name implements framework.Plugin.
func (Plugin) Name() string { return Name }

// Order implements framework.Picker: submit time ascending, then job ID.
// (Queue priority orders queues before any picker runs.)
func (Plugin) Order(_ int64, jobs []*framework.Job) {
	byArrival := func(a, b *framework.Job) int {
		return cmp.Or(cmp.Compare(a.Spec.Submit, b.Spec.Submit), cmp.Compare(a.Spec.ID, b.Spec.ID))
	}
	// The scheduler keeps pending jobs in arrival order: usually nothing
	// to do.
	if !slices.IsSortedFunc(jobs, byArrival) {
		slices.SortStableFunc(jobs, byArrival)
	}
}
