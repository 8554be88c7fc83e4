// Package store is the live scheduler's durable event log: the truth the
// server's state is folded from (docs/store.md).
//
// A Store is one bbolt file holding a header (the format version), the log
// (one record per event, keyed by its index: 1, 2, … dense) and the latest
// snapshot (the folded state at some index, opaque to the store). Append
// returns only once its events are fsynced, and concurrent Append calls
// share one transaction and one fsync (group commit). Start-up is Snapshot,
// then Read from the snapshot's index plus one.
//
// After a failed write the store refuses every further write (ErrFailed):
// the server stops and rebuilds from the log, so nothing is ever
// half-applied.
package store

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

// FormatVersion is the version of the on-disk layout this binary reads and
// writes. It changes when an older binary could misread what a newer one
// writes; a file of another version is refused (ErrVersion).
const FormatVersion uint64 = 1

// Defaults for the zero Options.
const (
	// DefaultLockTimeout is how long Open waits for the file lock.
	DefaultLockTimeout = time.Second
	// DefaultMaxBatchEvents bounds the events of one group commit.
	DefaultMaxBatchEvents = 4096
)

// Bucket and key names (docs/store.md).
const (
	bucketHeader   = "xce.store"
	bucketLog      = "log"
	bucketSnapshot = "snapshot"
	keyFormat      = "format"
	keyCompacted   = "compacted"
)

// Errors, each returned wrapped with the file's path and what was asked.
var (
	// ErrLocked: the file is locked by another process (another server
	// on the same data directory) and stayed locked for the lock timeout.
	ErrLocked = errors.New("in use by another process")
	// ErrVersion: the file's format version is not FormatVersion.
	ErrVersion = errors.New("unsupported format version")
	// ErrNotStore: the file is not a store (not a bbolt file, or a bbolt
	// file without the store's header).
	ErrNotStore = errors.New("not an xce store")
	// ErrCorrupt: a record, a key or the header does not read back as
	// written (checksum, length, or a gap in the indexes).
	ErrCorrupt = errors.New("corrupt store")
	// ErrClosed: the store was closed.
	ErrClosed = errors.New("store closed")
	// ErrFailed: an earlier write failed; the store refuses every further
	// write. Close it and reopen to rebuild from what is durable.
	ErrFailed = errors.New("store failed")
	// ErrNotFound: no event at that index (0, or beyond Last).
	ErrNotFound = errors.New("no such event")
	// ErrCompacted: the event was deleted by Compact; start from the
	// snapshot instead.
	ErrCompacted = errors.New("event compacted")
)

// Options tune Open. The zero value is the default.
type Options struct {
	// LockTimeout is how long Open waits for the file's lock before
	// failing with ErrLocked; zero or less means DefaultLockTimeout. Open
	// never waits forever.
	LockTimeout time.Duration
	// MaxBatchEvents bounds the events one group commit writes; zero or
	// less means DefaultMaxBatchEvents. One Append call larger than this is
	// still written whole, in a transaction of its own.
	MaxBatchEvents int
	// CommitWindow, when positive, makes the committer wait this long
	// after the first pending Append before it commits, to gather more.
	// Zero (the default) commits at once: appends that arrive during a
	// commit's fsync form the next batch (docs/store.md has the numbers).
	CommitWindow time.Duration
	// OnCommit, when set, is called by the committer after each write
	// transaction of appends that committed: how many events it held and
	// how long the transaction took, writes and syncs included (the
	// commit latency; metrics). It must return quickly.
	OnCommit func(events int, took time.Duration)

	// beforeCommit, when set (tests only), is called inside each write
	// transaction of the committer, after the puts, with the number of
	// Append calls in the batch; an error fails the transaction.
	beforeCommit func(calls int) error
}

func (o Options) withDefaults() Options {
	if o.LockTimeout <= 0 {
		o.LockTimeout = DefaultLockTimeout
	}
	if o.MaxBatchEvents <= 0 {
		o.MaxBatchEvents = DefaultMaxBatchEvents
	}
	return o
}

// Stats counts the committer's work since Open. The counters are read one
// by one, not as one atomic snapshot.
type Stats struct {
	// Commits is the number of write transactions the committer committed
	// successfully; each is one bbolt commit, fsynced (bbolt calls
	// fdatasync twice per commit: data pages, then the meta page).
	Commits uint64
	// Appends is the number of Append calls acknowledged, and Events the
	// number of events they held.
	Appends uint64
	Events  uint64
	// MaxCalls is the largest number of Append calls one commit held.
	MaxCalls uint64
	// Syncs counts the fdatasync calls of the write transactions that
	// committed, appends and snapshots alike: SyncsPerCommit each (bbolt
	// syncs the data pages, then the meta page). Counted, not traced:
	// the few syncs bbolt makes when it grows the file are not in it.
	Syncs uint64
}

// SyncsPerCommit is how many times bbolt calls fdatasync to commit one
// write transaction: once for the data pages, once for the meta page.
const SyncsPerCommit = 2

// Store is an open event log. Its methods are safe for concurrent use.
type Store struct {
	path string
	db   *bolt.DB
	opts Options

	last atomic.Uint64 // the highest durable index; written by the committer only

	mu      sync.Mutex
	queue   []*request // Append calls waiting for the committer
	closing bool
	failed  error // the first write error, or nil

	wake      chan struct{} // cap 1: the queue is not empty, or closing
	done      chan struct{} // closed when the committer has returned
	closeOnce sync.Once
	closeErr  error

	commits, appends, events, maxCalls, syncs atomic.Uint64
}

// Open opens the store at path, creating it (mode 0600: the log holds
// users' commands and environments) when the file does not exist or is
// empty. It refuses a file of another format version (ErrVersion), a
// file that is not a store (ErrNotStore), and a file another process has
// open (ErrLocked, after opts.LockTimeout). The directory must exist.
func Open(path string, opts Options) (*Store, error) {
	opts = opts.withDefaults()
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: opts.LockTimeout})
	switch {
	case errors.Is(err, berrors.ErrTimeout):
		return nil, fmt.Errorf("store %s: %w (its lock was not released within %v): %w", path, ErrLocked, opts.LockTimeout, err)
	case errors.Is(err, berrors.ErrInvalid), errors.Is(err, berrors.ErrVersionMismatch), errors.Is(err, berrors.ErrChecksum):
		return nil, fmt.Errorf("store %s: %w (not a bbolt file: %w)", path, ErrNotStore, err)
	case err != nil:
		return nil, fmt.Errorf("store %s: open: %w", path, err)
	}
	s := &Store{
		path: path,
		db:   db,
		opts: opts,
		wake: make(chan struct{}, 1),
		done: make(chan struct{}),
	}
	last, err := s.header()
	if err != nil {
		_ = db.Close()
		return nil, err
	}
	s.last.Store(last)
	go s.run()
	return s, nil
}

// header checks the file's header, writing it into a new file, and
// returns the log's last index.
func (s *Store) header() (last uint64, err error) {
	var fresh bool
	err = s.db.View(func(tx *bolt.Tx) error {
		h := tx.Bucket([]byte(bucketHeader))
		if h == nil {
			empty := true
			_ = tx.ForEach(func([]byte, *bolt.Bucket) error { empty = false; return nil })
			if !empty {
				return fmt.Errorf("store %s: %w (a bbolt file without the %q bucket)", s.path, ErrNotStore, bucketHeader)
			}
			fresh = true
			return nil
		}
		v := h.Get([]byte(keyFormat))
		if len(v) != 8 {
			return fmt.Errorf("store %s: %w: header has no format version (%d bytes)", s.path, ErrCorrupt, len(v))
		}
		if got := binary.BigEndian.Uint64(v); got != FormatVersion {
			return fmt.Errorf("store %s: %w: the file is format version %d, this binary reads version %d", s.path, ErrVersion, got, FormatVersion)
		}
		if tx.Bucket([]byte(bucketLog)) == nil || tx.Bucket([]byte(bucketSnapshot)) == nil {
			return fmt.Errorf("store %s: %w: a bucket is missing", s.path, ErrCorrupt)
		}
		last, err = s.lastIndex(tx)
		return err
	})
	if err != nil || !fresh {
		return last, err
	}
	err = s.db.Update(func(tx *bolt.Tx) error {
		h, err := tx.CreateBucket([]byte(bucketHeader))
		if err != nil {
			return err
		}
		if err := h.Put([]byte(keyFormat), u64(FormatVersion)); err != nil {
			return err
		}
		if err := h.Put([]byte(keyCompacted), u64(0)); err != nil {
			return err
		}
		if _, err := tx.CreateBucket([]byte(bucketLog)); err != nil {
			return err
		}
		_, err = tx.CreateBucket([]byte(bucketSnapshot))
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("store %s: write header: %w", s.path, err)
	}
	return 0, nil
}

// lastIndex returns the highest index the log has held: its last key, or
// the compacted index when compaction left the log empty.
func (s *Store) lastIndex(tx *bolt.Tx) (uint64, error) {
	compacted, err := s.compacted(tx)
	if err != nil {
		return 0, err
	}
	k, _ := tx.Bucket([]byte(bucketLog)).Cursor().Last()
	if k == nil {
		return compacted, nil
	}
	i, err := s.key(k)
	if err != nil {
		return 0, err
	}
	if i <= compacted {
		return 0, fmt.Errorf("store %s: %w: last event %d is at or below the compacted index %d", s.path, ErrCorrupt, i, compacted)
	}
	return i, nil
}

// compacted returns the highest index Compact deleted (0 when none).
func (s *Store) compacted(tx *bolt.Tx) (uint64, error) {
	v := tx.Bucket([]byte(bucketHeader)).Get([]byte(keyCompacted))
	if len(v) != 8 {
		return 0, fmt.Errorf("store %s: %w: header's compacted index is %d bytes, want 8", s.path, ErrCorrupt, len(v))
	}
	return binary.BigEndian.Uint64(v), nil
}

// key decodes a log or snapshot key: the index, 8 bytes big-endian, so
// bbolt's byte order is index order.
func (s *Store) key(k []byte) (uint64, error) {
	if len(k) != 8 {
		return 0, fmt.Errorf("store %s: %w: key of %d bytes, want 8", s.path, ErrCorrupt, len(k))
	}
	return binary.BigEndian.Uint64(k), nil
}

func u64(i uint64) []byte { return binary.BigEndian.AppendUint64(nil, i) }

// Path returns the file the store was opened from.
func (s *Store) Path() string { return s.path }

// Last returns the index of the last durable event: 0 for an empty log.
// It never decreases, and Compact does not lower it.
func (s *Store) Last() uint64 { return s.last.Load() }

// Stats returns the committer's counters since Open.
func (s *Store) Stats() Stats {
	return Stats{Commits: s.commits.Load(), Appends: s.appends.Load(), Events: s.events.Load(), MaxCalls: s.maxCalls.Load(), Syncs: s.syncs.Load()}
}

// Err returns the write error that made the store refuse writes, wrapped
// in ErrFailed, or nil.
func (s *Store) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.failed
}

// Close stops the committer and closes the file. Appends already queued
// are committed (or fail, after a write error) before it returns; Appends
// called after Close starts fail with ErrClosed. A second Close returns
// what the first did.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		s.mu.Lock()
		s.closing = true
		s.mu.Unlock()
		s.signal()
		<-s.done
		if err := s.db.Close(); err != nil {
			s.closeErr = fmt.Errorf("store %s: close: %w", s.path, err)
		}
	})
	return s.closeErr
}

// fail records a write error: from now on every write is refused.
func (s *Store) fail(err error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failed == nil {
		s.failed = fmt.Errorf("store %s: %w: %w", s.path, ErrFailed, err)
	}
	return s.failed
}

// viewErr maps bbolt's "not open" to ErrClosed.
func (s *Store) viewErr(err error) error {
	if errors.Is(err, berrors.ErrDatabaseNotOpen) {
		return fmt.Errorf("store %s: %w", s.path, ErrClosed)
	}
	return err
}
