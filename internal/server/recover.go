package server

import (
	"fmt"

	"github.com/xce-sched/xce/internal/event"
	"github.com/xce-sched/xce/internal/state"
)

// Source is what Recover reads: the store's latest snapshot and the log
// after it.
type Source interface {
	Snapshot() (index uint64, data []byte, ok bool, err error)
	Read(from uint64, fn func(event.Event) error) error
}

// Recover rebuilds the state from src: the latest snapshot, if any, then
// every event after it, folded by state.Apply. An event of an unknown
// type marked skip_ok is passed over (its index still counts); any other
// that Apply refuses stops the recovery with an error naming it.
func Recover(src Source) (*state.State, error) {
	st := state.New()
	index, data, ok, err := src.Snapshot()
	if err != nil {
		return nil, fmt.Errorf("recover: %w", err)
	}
	if ok {
		if st, err = state.Unmarshal(data); err != nil {
			return nil, fmt.Errorf("recover: snapshot at %d: %w", index, err)
		}
		if st.Index != index {
			return nil, fmt.Errorf("recover: the snapshot saved at %d holds the state at %d", index, st.Index)
		}
	}
	err = src.Read(st.Index+1, func(e event.Event) error {
		if e.SkipOK && e.Check() != nil {
			st.Index = e.Index // a newer binary's event this one may skip
			return nil
		}
		if err := st.Apply(e); err != nil {
			return fmt.Errorf("recover: %w", err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return st, nil
}
