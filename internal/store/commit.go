package store

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/xce-sched/xce/internal/event"
)

// A request is one Append call waiting for the committer.
type request struct {
	ctx    context.Context
	events []event.Event // a copy: the committer sets Index
	state  atomic.Int32  // pending, then taken (by the committer) or withdrawn
	done   chan result   // cap 1; written once, by whoever leaves pending

	first uint64   // the committer's: the index of events[0]
	recs  [][]byte // the committer's: the encoded records
}

// A request's states. Only the committer moves pending to taken; either
// side may move pending to withdrawn, and whoever does answers done (the
// caller answers itself by returning).
const (
	pending int32 = iota
	taken
	withdrawn
)

type result struct {
	indexes []uint64
	err     error
}

// Append writes events at the end of the log, in order and contiguous, and
// returns their indexes once they are durable (fsynced); each event's
// Index field is ignored and set by the store. The events of one call are
// written atomically: all or none. Concurrent calls share one transaction
// and one fsync (group commit, docs/store.md).
//
// Errors: an event without exactly its type's payload, or that cannot be
// encoded, fails this call only. A failed write fails every call of its
// batch, none of their events becomes visible, and every later write
// returns ErrFailed. After Close: ErrClosed. When ctx ends before the
// committer takes the call, its events are withdrawn and ctx's error is
// returned (wrapped); once taken, Append waits for that commit's outcome
// and reports it, whatever ctx does. No events: nil, and the error the
// call would have had for the store's state.
func (s *Store) Append(ctx context.Context, events ...event.Event) ([]uint64, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("store %s: append: %w", s.path, err)
	}
	for i := range events {
		if err := events[i].Check(); err != nil {
			return nil, fmt.Errorf("store %s: append: event %d of %d: %w", s.path, i+1, len(events), err)
		}
	}
	r := &request{ctx: ctx, events: slices.Clone(events), done: make(chan result, 1)}
	s.mu.Lock()
	switch {
	case s.closing:
		s.mu.Unlock()
		return nil, fmt.Errorf("store %s: append: %w", s.path, ErrClosed)
	case s.failed != nil:
		err := s.failed
		s.mu.Unlock()
		return nil, err
	case len(events) == 0:
		s.mu.Unlock()
		return nil, nil
	}
	s.queue = append(s.queue, r)
	s.mu.Unlock()
	s.signal()

	select {
	case res := <-r.done:
		return res.indexes, res.err
	case <-ctx.Done():
		if r.state.CompareAndSwap(pending, withdrawn) {
			return nil, fmt.Errorf("store %s: append withdrawn: %w", s.path, ctx.Err())
		}
		res := <-r.done // taken: the commit is under way, and answers
		return res.indexes, res.err
	}
}

// signal wakes the committer; it never blocks.
func (s *Store) signal() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// run is the committer: it takes the queued calls, writes them in one
// transaction, answers them, and again, until Close empties the queue.
func (s *Store) run() {
	defer close(s.done)
	for {
		batch, stop := s.take()
		if len(batch) > 0 {
			s.commit(batch)
		}
		if stop {
			return
		}
	}
}

// take waits for queued calls and takes the next batch: calls in queue
// order up to opts.MaxBatchEvents events (at least one call). Calls whose
// ctx ended are withdrawn and answered; after a write error every queued
// call is answered with it. stop: closing, and nothing is left queued.
func (s *Store) take() (batch []*request, stop bool) {
	for {
		s.mu.Lock()
		n, closing := len(s.queue), s.closing
		s.mu.Unlock()
		if closing || n > 0 {
			if !closing && s.opts.CommitWindow > 0 {
				time.Sleep(s.opts.CommitWindow)
			}
			break
		}
		<-s.wake
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failed != nil {
		for _, r := range s.queue {
			if r.state.CompareAndSwap(pending, taken) {
				r.done <- result{err: s.failed}
			}
		}
		s.queue = nil
		return nil, s.closing
	}
	events, i := 0, 0
	for ; i < len(s.queue); i++ {
		r := s.queue[i]
		if len(batch) > 0 && events+len(r.events) > s.opts.MaxBatchEvents {
			break
		}
		if err := r.ctx.Err(); err != nil {
			if r.state.CompareAndSwap(pending, withdrawn) {
				r.done <- result{err: fmt.Errorf("store %s: append withdrawn: %w", s.path, err)}
			}
			continue
		}
		if !r.state.CompareAndSwap(pending, taken) {
			continue // withdrawn by its caller
		}
		batch = append(batch, r)
		events += len(r.events)
	}
	if i == len(s.queue) {
		s.queue = nil
	} else {
		s.queue = slices.Clone(s.queue[i:])
	}
	return batch, s.closing && len(s.queue) == 0
}

// commit writes the batch in one transaction and answers every call.
func (s *Store) commit(batch []*request) {
	next := s.last.Load() + 1
	ok := batch[:0]
	for _, r := range batch {
		recs, err := s.encode(r.events, next)
		if err != nil {
			r.done <- result{err: err}
			continue
		}
		r.first, r.recs = next, recs
		next += uint64(len(recs))
		ok = append(ok, r)
	}
	if len(ok) == 0 {
		return
	}
	began := time.Now()
	err := s.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket([]byte(bucketLog))
		b.FillPercent = 1 // keys only ever grow: fill pages before splitting
		for _, r := range ok {
			for j, rec := range r.recs {
				if err := b.Put(u64(r.first+uint64(j)), rec); err != nil {
					return err
				}
			}
		}
		if s.opts.beforeCommit != nil {
			return s.opts.beforeCommit(len(ok))
		}
		return nil
	})
	if err != nil {
		ferr := s.fail(fmt.Errorf("write events %d to %d: %w", ok[0].first, next-1, err))
		for _, r := range ok {
			r.done <- result{err: ferr}
		}
		return
	}
	s.last.Store(next - 1)
	s.commits.Add(1)
	s.syncs.Add(SyncsPerCommit)
	if s.opts.OnCommit != nil {
		s.opts.OnCommit(int(next-ok[0].first), time.Since(began))
	}
	if n := uint64(len(ok)); n > s.maxCalls.Load() {
		s.maxCalls.Store(n) // only the committer writes it
	}
	for _, r := range ok {
		indexes := make([]uint64, len(r.recs))
		for j := range indexes {
			indexes[j] = r.first + uint64(j)
		}
		s.appends.Add(1)
		s.events.Add(uint64(len(indexes)))
		r.done <- result{indexes: indexes}
	}
}

// encode returns the records of events numbered from first.
func (s *Store) encode(events []event.Event, first uint64) ([][]byte, error) {
	recs := make([][]byte, len(events))
	for j := range events {
		e := &events[j]
		e.Index = first + uint64(j)
		rec, err := encodeRecord(e)
		if err != nil {
			return nil, fmt.Errorf("store %s: append: event %d of %d: %w", s.path, j+1, len(events), err)
		}
		recs[j] = rec
	}
	return recs, nil
}
