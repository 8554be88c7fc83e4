// Package replica replicates the live scheduler's event log with raft
// (github.com/hashicorp/raft; docs/ha.md): one raft entry is one batch of
// events as the server's loop appends it, and the raft FSM is the state
// package's apply, so a server's state is the same fold of the same
// events whether it runs alone or in a cluster. Node is one member: its
// raft log and stable store (github.com/hashicorp/raft-boltdb/v2), its
// snapshots, its transport, and the FSM whose state followers serve
// reads from.
package replica

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/hashicorp/raft"

	"github.com/xce-sched/xce/internal/event"
	"github.com/xce-sched/xce/internal/state"
)

// ErrStale is the answer to a batch whose first event's index is not the
// next one of the replicated state: it was built by a leader whose view
// was behind (a deposed leader's last batch). Nothing of it is applied, on
// every member alike.
var ErrStale = errors.New("stale batch: built on another state than the replicated one")

// entry is the data of one raft log entry: a batch of events, each as
// event.Encode writes it.
type entry struct {
	Events []json.RawMessage `json:"events"`
}

// encodeEntry returns the raft data of a batch of events.
func encodeEntry(events []event.Event) ([]byte, error) {
	en := entry{Events: make([]json.RawMessage, len(events))}
	for i := range events {
		b, err := event.Encode(&events[i])
		if err != nil {
			return nil, fmt.Errorf("event %d of %d: %w", i+1, len(events), err)
		}
		en.Events[i] = b
	}
	return json.Marshal(en)
}

// Applied is what FSM.Apply returns for an entry (raft's ApplyFuture
// Response): the indexes of its events, First to Last, or the error that
// refused it (ErrStale, or an event the state refused).
type Applied struct {
	First, Last uint64
	Err         error
}

// FSM is the raft state machine: the fold of every committed entry by
// state.State.Apply. Snapshots are state.State.Marshal's JSON. Its
// methods are safe for concurrent use; raft calls Apply, Snapshot and
// Restore from one goroutine.
type FSM struct {
	mu sync.RWMutex
	st *state.State
	// raftIndex is the raft index of the last entry applied.
	raftIndex uint64
	// OnApply, when set before the node starts, is called after each
	// entry was applied with its events (not under the FSM's lock; from
	// raft's FSM goroutine, so it must return quickly).
	OnApply func(events []event.Event)
	// OnRestore, when set before the node starts, is called after the
	// state was replaced by a raft snapshot's (at a node's start, or when
	// the leader sent one: this member lacked entries the leader had
	// compacted) with the index of the snapshot state's last event (not
	// under the FSM's lock; from raft's FSM goroutine).
	OnRestore func(index uint64)
}

// NewFSM returns an FSM over st (the state to continue from: state.New()
// for a new cluster, or a single server's recovered state when it
// becomes a cluster's first member).
func NewFSM(st *state.State) *FSM { return &FSM{st: st} }

// View runs fn on the replicated state; fn must not keep or change it.
func (f *FSM) View(fn func(st *state.State)) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	fn(f.st)
}

// Clone returns a deep copy of the replicated state and the raft index it
// is at (for a new leader's loop to continue from).
func (f *FSM) Clone() (*state.State, uint64, error) {
	f.mu.RLock()
	data, err := f.st.Marshal()
	at := f.raftIndex
	f.mu.RUnlock()
	if err != nil {
		return nil, 0, err
	}
	st, err := state.Unmarshal(data)
	return st, at, err
}

// Apply implements raft.FSM: it folds an entry's events, or none of them
// when the first one's index is not the next (ErrStale) or an event does
// not decode. An event the state refuses after others of the same entry
// were applied stops the entry there, alike on every member (the leader
// checked the whole batch against the same state before proposing it, so
// this is a bug, reported in Applied.Err). Entries of other raft types
// than commands are not given to the FSM.
func (f *FSM) Apply(l *raft.Log) any {
	var en entry
	if err := json.Unmarshal(l.Data, &en); err != nil {
		return Applied{Err: fmt.Errorf("raft entry %d: %w", l.Index, err)}
	}
	events := make([]event.Event, 0, len(en.Events))
	skip := make([]bool, 0, len(en.Events))
	for i, raw := range en.Events {
		e, sk, err := event.Decode(raw)
		if err != nil {
			return Applied{Err: fmt.Errorf("raft entry %d, event %d: %w", l.Index, i+1, err)}
		}
		events, skip = append(events, e), append(skip, sk)
	}
	f.mu.Lock()
	f.raftIndex = l.Index
	if len(events) == 0 {
		f.mu.Unlock()
		return Applied{}
	}
	if events[0].Index != f.st.Index+1 {
		err := fmt.Errorf("raft entry %d: first event %d, the next is %d: %w", l.Index, events[0].Index, f.st.Index+1, ErrStale)
		f.mu.Unlock()
		return Applied{Err: err}
	}
	res := Applied{First: events[0].Index}
	for i, e := range events {
		if skip[i] && e.Index == f.st.Index+1 {
			f.st.Index = e.Index // a newer binary's event this one may skip
		} else if err := f.st.Apply(e); err != nil {
			res.Err = fmt.Errorf("raft entry %d: %w", l.Index, err)
			events = events[:i]
			break
		}
		res.Last = e.Index
	}
	f.mu.Unlock()
	if f.OnApply != nil && len(events) > 0 {
		f.OnApply(events)
	}
	return res
}

// Snapshot implements raft.FSM: the state as state.State.Marshal writes
// it, taken now (raft persists it later, concurrently with Apply).
func (f *FSM) Snapshot() (raft.FSMSnapshot, error) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	data, err := f.st.Marshal()
	if err != nil {
		return nil, fmt.Errorf("fsm snapshot: %w", err)
	}
	return snapshot(data), nil
}

// Restore implements raft.FSM: it replaces the state with a snapshot's.
func (f *FSM) Restore(rc io.ReadCloser) error {
	defer rc.Close()
	data, err := io.ReadAll(rc)
	if err != nil {
		return fmt.Errorf("fsm restore: %w", err)
	}
	st, err := state.Unmarshal(data)
	if err != nil {
		return fmt.Errorf("fsm restore: %w", err)
	}
	f.mu.Lock()
	f.st = st
	f.mu.Unlock()
	if f.OnRestore != nil {
		f.OnRestore(st.Index)
	}
	return nil
}

// snapshot is a state's JSON, ready for raft's snapshot store.
type snapshot []byte

// Persist implements raft.FSMSnapshot.
func (s snapshot) Persist(sink raft.SnapshotSink) error {
	if _, err := sink.Write(s); err != nil {
		_ = sink.Cancel()
		return fmt.Errorf("fsm snapshot: write: %w", err)
	}
	return sink.Close()
}

// Release implements raft.FSMSnapshot.
func (snapshot) Release() {}
