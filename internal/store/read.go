package store

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

	"github.com/xce-sched/xce/internal/event"
)

// readChunk is how many events Read decodes in one read transaction; fn
// runs outside it, so fn may call Append and a long replay does not hold
// a transaction open.
const readChunk = 256

// crcTable is CRC-32C (Castagnoli), the records' checksum.
func crcTable() *crc32.Table { return crc32.MakeTable(crc32.Castagnoli) }

// frame returns payload behind its CRC-32C, 4 bytes big-endian: how every
// log record and snapshot is stored.
func frame(payload []byte) []byte {
	out := make([]byte, 4, 4+len(payload))
	binary.BigEndian.PutUint32(out, crc32.Checksum(payload, crcTable()))
	return append(out, payload...)
}

// unframe returns the payload of a framed value, checking its CRC.
func unframe(v []byte) ([]byte, error) {
	if len(v) < 4 {
		return nil, fmt.Errorf("%w: record of %d bytes, shorter than its checksum", ErrCorrupt, len(v))
	}
	payload := v[4:]
	if want, got := binary.BigEndian.Uint32(v), crc32.Checksum(payload, crcTable()); want != got {
		return nil, fmt.Errorf("%w: checksum %08x, want %08x", ErrCorrupt, got, want)
	}
	return payload, nil
}

// encodeRecord returns e's record: event.Encode's JSON, framed.
func encodeRecord(e *event.Event) ([]byte, error) {
	data, err := event.Encode(e)
	if err != nil {
		return nil, err
	}
	if len(data)+4 > bolt.MaxValueSize {
		return nil, fmt.Errorf("event of %d bytes, more than bbolt's %d", len(data), bolt.MaxValueSize)
	}
	return frame(data), nil
}

// decodeRecord returns the event stored at index. An unknown type that may
// be skipped comes back with its Index, Type and SkipOK; an unknown one
// that may not is an error wrapping event.ErrUnknown.
func decodeRecord(index uint64, v []byte) (event.Event, error) {
	data, err := unframe(v)
	if err != nil {
		return event.Event{}, err
	}
	e, _, err := event.Decode(data)
	if err != nil {
		return event.Event{}, err
	}
	if e.Index != index {
		return event.Event{}, fmt.Errorf("%w: record says index %d", ErrCorrupt, e.Index)
	}
	return e, nil
}

// Read calls fn with every event from index from (0 is 1) to Last as it
// is when Read is called, in index order; events appended meanwhile, by fn
// or others, are not read. An event of an unknown type that may be
// skipped is passed with its Index, Type and SkipOK (and no payload), for
// fn to skip. Read stops at the first error: fn's, returned as is; an
// unknown event that may not be skipped (wrapping event.ErrUnknown,
// naming its index); a corrupt or missing record (ErrCorrupt); or from at
// or below the compacted index (ErrCompacted: start from the snapshot).
// from beyond Last reads nothing. fn runs outside any transaction: it may
// call the store.
func (s *Store) Read(from uint64, fn func(event.Event) error) error {
	if from == 0 {
		from = 1
	}
	end := s.Last()
	for first := true; first || from <= end; first = false { // one View at least: a closed store says so
		var evs []event.Event
		var bad error
		err := s.db.View(func(tx *bolt.Tx) error {
			compacted, err := s.compacted(tx)
			if err != nil {
				return err
			}
			if from <= compacted {
				return fmt.Errorf("store %s: read from %d: %w (the log starts at %d)", s.path, from, ErrCompacted, compacted+1)
			}
			c := tx.Bucket([]byte(bucketLog)).Cursor()
			want := from
			for k, v := c.Seek(u64(from)); want <= end && len(evs) < readChunk; k, v = c.Next() {
				var i uint64
				if k != nil {
					if i, err = s.key(k); err != nil {
						bad = err
						return nil
					}
				}
				if k == nil || i != want {
					bad = fmt.Errorf("store %s: %w: event %d is missing", s.path, ErrCorrupt, want)
					return nil
				}
				e, err := decodeRecord(i, v)
				if err != nil {
					bad = fmt.Errorf("store %s: event %d: %w", s.path, i, err)
					return nil
				}
				evs = append(evs, e)
				want++
			}
			return nil
		})
		if err != nil {
			return s.viewErr(err)
		}
		for _, e := range evs {
			if err := fn(e); err != nil {
				return err
			}
		}
		if bad != nil {
			return bad
		}
		from += uint64(len(evs))
	}
	return nil
}

// Event returns the event at index i, as Read would pass it. Errors:
// ErrNotFound (0, or beyond Last), ErrCompacted, ErrCorrupt, or one
// wrapping event.ErrUnknown.
func (s *Store) Event(i uint64) (event.Event, error) {
	var e event.Event
	last := s.Last()
	err := s.db.View(func(tx *bolt.Tx) error {
		if i == 0 || i > last {
			return fmt.Errorf("store %s: event %d: %w (last is %d)", s.path, i, ErrNotFound, last)
		}
		compacted, err := s.compacted(tx)
		if err != nil {
			return err
		}
		if i <= compacted {
			return fmt.Errorf("store %s: event %d: %w (the log starts at %d)", s.path, i, ErrCompacted, compacted+1)
		}
		v := tx.Bucket([]byte(bucketLog)).Get(u64(i))
		if v == nil {
			return fmt.Errorf("store %s: %w: event %d is missing", s.path, ErrCorrupt, i)
		}
		if e, err = decodeRecord(i, v); err != nil {
			return fmt.Errorf("store %s: event %d: %w", s.path, i, err)
		}
		return nil
	})
	return e, s.viewErr(err)
}

// Snapshot returns the latest snapshot: the index it was taken at and its
// data (a copy). ok is false when none was saved. A snapshot whose bytes
// do not read back as saved is ErrCorrupt.
func (s *Store) Snapshot() (index uint64, data []byte, ok bool, err error) {
	err = s.db.View(func(tx *bolt.Tx) error {
		k, v := tx.Bucket([]byte(bucketSnapshot)).Cursor().Last()
		if k == nil {
			return nil
		}
		if index, err = s.key(k); err != nil {
			return err
		}
		payload, err := unframe(v)
		if err != nil {
			return fmt.Errorf("store %s: snapshot at %d: %w", s.path, index, err)
		}
		data, ok = append([]byte{}, payload...), true
		return nil
	})
	if err != nil {
		return 0, nil, false, s.viewErr(err)
	}
	return index, data, ok, nil
}

// SaveSnapshot durably replaces the snapshot with data, the state folded
// from events 1 to index. index must be at least 1, at most Last, and not
// below the latest snapshot's (the same index replaces it). A failed
// write makes the store refuse writes (ErrFailed), as for Append.
func (s *Store) SaveSnapshot(index uint64, data []byte) error {
	return s.write("save snapshot", func(tx *bolt.Tx) (refused error, err error) {
		last, err := s.lastIndex(tx)
		if err != nil {
			return nil, err
		}
		b := tx.Bucket([]byte(bucketSnapshot))
		var cur uint64
		if k, _ := b.Cursor().Last(); k != nil {
			if cur, err = s.key(k); err != nil {
				return nil, err
			}
		}
		switch {
		case index == 0 || index > last:
			return fmt.Errorf("at %d: %w (last is %d)", index, ErrNotFound, last), nil
		case index < cur:
			return fmt.Errorf("at %d: older than the latest snapshot, at %d", index, cur), nil
		}
		for k, _ := b.Cursor().First(); k != nil; k, _ = b.Cursor().First() {
			if err := b.Delete(k); err != nil {
				return nil, err
			}
		}
		return nil, b.Put(u64(index), frame(data))
	})
}

// Compact deletes the log's events at or below upTo, which must not be
// beyond the latest snapshot's index: Read and Event then answer
// ErrCompacted for them, and start-up must load the snapshot. The store
// never compacts by itself: the log is kept whole unless the caller asks
// (for `xce history`). upTo at or below an earlier Compact's does
// nothing. bbolt reuses the freed pages; the file does not shrink.
func (s *Store) Compact(upTo uint64) error {
	return s.write("compact", func(tx *bolt.Tx) (refused error, err error) {
		var snap uint64
		if k, _ := tx.Bucket([]byte(bucketSnapshot)).Cursor().Last(); k != nil {
			if snap, err = s.key(k); err != nil {
				return nil, err
			}
		}
		if upTo > snap {
			return fmt.Errorf("up to %d: beyond the latest snapshot, at %d", upTo, snap), nil
		}
		compacted, err := s.compacted(tx)
		if err != nil || upTo <= compacted {
			return nil, err
		}
		b := tx.Bucket([]byte(bucketLog))
		for i := compacted + 1; i <= upTo; i++ {
			if err := b.Delete(u64(i)); err != nil {
				return nil, err
			}
		}
		return nil, tx.Bucket([]byte(bucketHeader)).Put([]byte(keyCompacted), u64(upTo))
	})
}

// write runs fn in a write transaction outside the committer. fn refuses
// a bad request (refused, which fails only this call) or fails (err,
// which makes the store refuse writes).
func (s *Store) write(what string, fn func(*bolt.Tx) (refused, err error)) error {
	s.mu.Lock()
	closing, failed := s.closing, s.failed
	s.mu.Unlock()
	switch {
	case closing:
		return fmt.Errorf("store %s: %s: %w", s.path, what, ErrClosed)
	case failed != nil:
		return failed
	}
	var refused error
	err := s.db.Update(func(tx *bolt.Tx) error {
		var err error
		if refused, err = fn(tx); refused != nil {
			return refused // rolls back
		}
		return err
	})
	switch {
	case refused != nil:
		return fmt.Errorf("store %s: %s %w", s.path, what, refused)
	case errors.Is(err, ErrCorrupt):
		return err
	case err != nil:
		if errors.Is(err, berrors.ErrDatabaseNotOpen) {
			return fmt.Errorf("store %s: %s: %w", s.path, what, ErrClosed)
		}
		return s.fail(fmt.Errorf("%s: %w", what, err))
	}
	s.syncs.Add(SyncsPerCommit)
	return nil
}
