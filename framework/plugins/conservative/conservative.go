// Package conservative is conservative backfilling (Mu'alem & Feitelson
// 2001, IEEE TPDS 12(6)): every waiting job gets a reservation at the
// earliest time it fits without delaying any reservation made before it,
// and keeps it from cycle to cycle; when resources are released, each
// waiting job in priority order is re-planned with every other
// reservation in place and moves only if an earlier start is free
// (compression). A job whose reservation comes due starts
// (docs/backfill.md).
package conservative

import "github.com/xce-sched/xce/framework"

// Name is the plugin's registry name (and the scenario's policy name).
const Name = "conservative"

// Plugin is the conservative backfilling policy. Depth bounds how many
// jobs a cycle plans: the queue's MaxJobTest (cluster.Queue; 0: every job).
type Plugin struct{ Depth int }

var (
	_ framework.Policy            = Plugin{}
	_ framework.KeepsReservations = Plugin{}
	_ framework.TestsFirst        = Plugin{}
)

// KeepsReservations implements framework.KeepsReservations.
func (Plugin) KeepsReservations() {}

// MaxJobTest implements framework.TestsFirst.
func (p Plugin) MaxJobTest() int { return p.Depth }

// Name implements framework.Plugin.
func (Plugin) Name() string { return Name }

// Dispatch implements framework.Policy. Jobs are taken in priority order;
// each is re-planned with every other reservation in place (Earliest keeps
// a held reservation unless an earlier start is free), so a job that ends
// before its estimate lets the others move up and none moves back. The
// jobs after the first Depth are deferred (Dispatcher.Defer).
func (p Plugin) Dispatch(d framework.Dispatcher, jobs framework.Jobs) error {
	test := framework.JobTest{Depth: p.Depth}
	for job, ok := jobs.Next(); ok; job, ok = jobs.Next() {
		if !test.Admit(d, job) {
			continue
		}
		if d.Unchanged(job) {
			// Nothing was released early since the last cycle: its
			// reservation, still in place, cannot move earlier.
			continue
		}
		if err := framework.StartOrReserve(d, job); err != nil {
			return err
		}
	}
	return nil
}
