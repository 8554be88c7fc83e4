// Package conservative is conservative backfilling (Mu'alem & Feitelson
// 2001, IEEE TPDS 12(6)): every waiting job, in priority order, gets a
// reservation at the earliest time it fits without delaying any earlier
// reservation; a job whose earliest time is now starts now
// (docs/backfill.md).
package conservative

import "github.com/xce-sched/xce/framework"

// Name is the plugin's registry name (and the scenario's policy name).
const Name = "conservative"

// Plugin is the conservative backfilling policy.
type Plugin struct{}

var (
	_ framework.Policy             = Plugin{}
	_ framework.StickyReservations = Plugin{}
)

// StickyReservations implements framework.StickyReservations.
func (Plugin) StickyReservations() {}

// Name implements framework.Plugin.
func (Plugin) Name() string { return Name }

// Dispatch implements framework.Policy. Reservations are recomputed every
// cycle, so a job that ends before its estimate lets the others move up.
func (Plugin) Dispatch(d framework.Dispatcher, jobs []*framework.Job) error {
	for _, job := range jobs {
		if d.Unchanged(job) {
			// Nothing was released since the last cycle: its reservation
			// still holds and cannot move earlier.
			if job.Reserved != nil {
				d.Reserve(job, *job.Reserved)
			}
			continue
		}
		r, ok := d.Earliest(job)
		switch {
		case !ok:
			// It can never run here: its own reason, no reservation.
			if _, err := d.Allocate(job); err != nil {
				return err
			}
		case r.Start == d.Now():
			if err := d.Start(job, r); err != nil {
				return err
			}
		default:
			d.Reserve(job, r)
			if err := d.Block(job); err != nil {
				return err
			}
		}
	}
	return nil
}
