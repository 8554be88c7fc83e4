// Package fcfs is the strict first-come-first-served policy: no job of a
// queue starts before an earlier one (the baseline of the scheduling
// literature). A job that could not run even with every open host idle
// (BadRequest, or too large for the open hosts or for its limits:
// PendReasons.Stuck) does not hold the queue.
package fcfs

import "github.com/xce-sched/xce/framework"

// Name is the plugin's registry name (and the scenario's policy name).
const Name = "fcfs"

// Plugin is the fcfs policy.
type Plugin struct{}

var (
	_ framework.Policy          = Plugin{}
	_ framework.HoldsBehindHead = Plugin{}
)

// HoldsBehindHead implements framework.HoldsBehindHead: once a job pends
// (and is not stuck), every later job pends with Priority.
func (Plugin) HoldsBehindHead() {}

// Name implements framework.Plugin.
func (Plugin) Name() string { return Name }

// Dispatch implements framework.Policy: jobs start in order while they
// fit; once one pends, the rest pend with Priority.
func (Plugin) Dispatch(d framework.Dispatcher, jobs framework.Jobs) error {
	blocked := false
	for job, ok := jobs.Next(); ok; job, ok = jobs.Next() {
		if blocked {
			d.Hold(job)
			continue
		}
		if d.Unchanged(job) {
			// It pended last cycle and nothing was released since.
			blocked = !job.Reasons.Stuck
			continue
		}
		placed, err := d.Allocate(job)
		if err != nil {
			return err
		}
		if !placed && !job.Reasons.Stuck {
			blocked = true
		}
	}
	return nil
}
