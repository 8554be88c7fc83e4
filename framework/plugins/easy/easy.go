// Package easy is EASY backfilling (Lifka 1995, "The ANL/IBM SP scheduling
// system"; Mu'alem & Feitelson 2001, "Utilization, predictability,
// workloads, and user runtime estimates in scheduling the IBM SP2 with
// backfilling", IEEE TPDS 12(6)): jobs start in order while they fit; the
// first job that does not gets a reservation at the earliest time it
// could run; a later job starts now only if it does not delay that
// reservation (docs/backfill.md).
package easy

import "github.com/xce-sched/xce/framework"

// Name is the plugin's registry name (and the scenario's policy name).
const Name = "easy"

// Plugin is the EASY backfilling policy.
type Plugin struct{}

var (
	_ framework.Policy         = Plugin{}
	_ framework.SkipsUnchanged = Plugin{}
	_ framework.SkipsTooLarge  = Plugin{}
)

// SkipsUnchanged implements framework.SkipsUnchanged: a job whose decision stands is skipped, the head re-recording its reservation.
func (Plugin) SkipsUnchanged() {}

// Name implements framework.Plugin.
func (Plugin) Name() string { return Name }

// Dispatch implements framework.Policy. Once the head job holds a
// reservation, each later job is planned over its own estimated run with
// that reservation in place: it starts now if it fits now and at the
// reservation's start (or ends before it); otherwise it pends with
// Priority when it would fit now, or with its own reason. A head job that
// can never get a reservation (no future time exists) pends with its own
// reason and holds nobody back.
func (Plugin) Dispatch(d framework.Dispatcher, jobs framework.Jobs) error {
	reserved := false
	for job, ok := jobs.Next(); ok; job, ok = jobs.Next() {
		if d.Unchanged(job) {
			// Its decision stands (nothing was released since the last
			// cycle); a head's reservation is re-recorded.
			if job.Reserved != nil {
				d.Reserve(job, *job.Reserved)
				reserved = true
			}
			continue
		}
		if !reserved {
			placed, err := d.Allocate(job)
			if err != nil {
				return err
			}
			if placed || job.Reasons.Main == framework.BadRequest {
				continue
			}
			r, ok := d.Earliest(job)
			switch {
			case !ok:
				// No future time: it keeps its own reason.
			case r.Start == d.Now():
				if err := d.Start(job, r); err != nil {
					return err
				}
			default:
				d.Reserve(job, r)
				reserved = true
			}
			continue
		}
		if _, err := d.TryStart(job); err != nil {
			return err
		}
	}
	return nil
}

// FirstBlocked implements framework.SkipsTooLarge: true (the first job that cannot start gets the reservation).
func (Plugin) FirstBlocked() bool { return true }
