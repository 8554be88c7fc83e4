// Package backfill is Slurm's backfill scheduling (SchedulerType=
// sched/backfill; slurm.conf(5) and the Scheduling Configuration Guide,
// https://slurm.schedmd.com/sched_config.html): the pending jobs are
// taken in priority order; each starts now if it fits without delaying
// any job before it, and otherwise gets a reservation at the earliest
// time it fits, which the jobs after it must respect. Unlike conservative
// backfilling, the reservations are planned afresh in every cycle, in
// that cycle's priority order (Slurm's backfill pass keeps none from one
// pass to the next), so a job whose priority rises (age, fair-share)
// passes the reservations of jobs now behind it (docs/slurm.md).
package backfill

import "github.com/xce-sched/xce/framework"

// Name is the plugin's registry name (and the scenario's policy name).
const Name = "backfill"

// Plugin is the Slurm backfill policy. Depth bounds how many jobs a cycle
// plans: bf_max_job_test, the queue's MaxJobTest (cluster.Queue; 0: every
// job).
type Plugin struct{ Depth int }

var (
	_ framework.Policy     = Plugin{}
	_ framework.TestsFirst = Plugin{}
)

// MaxJobTest implements framework.TestsFirst.
func (p Plugin) MaxJobTest() int { return p.Depth }

// Name implements framework.Plugin.
func (Plugin) Name() string { return Name }

// Dispatch implements framework.Policy. Each job, in the picker's order,
// is planned with the reservations of the jobs before it in place: it
// starts when its earliest start is now, else it pends with the
// reservation found (Priority when it would fit now but for the
// reservations, else its own reason). A job that can never run pends
// with its own reason and holds nobody back. The jobs after the first
// Depth are deferred (Dispatcher.Defer), as Slurm's backfill tests
// no more than bf_max_job_test jobs.
func (p Plugin) Dispatch(d framework.Dispatcher, jobs framework.Jobs) error {
	test := framework.JobTest{Depth: p.Depth}
	for job, ok := jobs.Next(); ok; job, ok = jobs.Next() {
		if !test.Admit(d, job) {
			continue
		}
		if err := framework.StartOrReserve(d, job); err != nil {
			return err
		}
	}
	return nil
}
