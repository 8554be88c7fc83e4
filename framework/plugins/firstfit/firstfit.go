// Package firstfit is the policy of LSF's dispatch without slot
// reservation: every pending job in order, any job that fits starts, no
// reservations.
package firstfit

import "github.com/xce-sched/xce/framework"

// Name is the plugin's registry name (and the scenario's policy name).
const Name = "firstfit"

// Plugin is the firstfit policy.
type Plugin struct{}

var (
	_ framework.Policy         = Plugin{}
	_ framework.SkipsUnchanged = Plugin{}
	_ framework.SkipsTooLarge  = Plugin{}
)

// SkipsUnchanged implements framework.SkipsUnchanged: a job whose decision stands is skipped.
func (Plugin) SkipsUnchanged() {}

// Name implements framework.Plugin.
func (Plugin) Name() string { return Name }

// Dispatch implements framework.Policy. A job that pended in the previous
// cycle, with nothing released since, still cannot fit: it is skipped.
func (Plugin) Dispatch(d framework.Dispatcher, jobs framework.Jobs) error {
	for job, ok := jobs.Next(); ok; job, ok = jobs.Next() {
		if d.Unchanged(job) {
			continue
		}
		if _, err := d.Allocate(job); err != nil {
			return err
		}
	}
	return nil
}

// FirstBlocked implements framework.SkipsTooLarge: false (no job holds others back).
func (Plugin) FirstBlocked() bool { return false }
