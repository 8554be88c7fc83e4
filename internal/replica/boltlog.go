package replica

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/hashicorp/raft"
	bolt "go.etcd.io/bbolt"
)

// errKeyNotFound is what raft expects from a StableStore for a missing
// key: it compares the error's text with "not found".
var errKeyNotFound = errors.New("not found")

// Bucket names of the raft store's file.
const (
	bucketLogs   = "logs"
	bucketStable = "stable"
)

// BoltStore is raft's log and stable store in one bbolt file: the raft log
// (keyed by index, 8 bytes big-endian) and the few values raft keeps
// between runs (the current term, the last vote). Every write is one
// fsynced bbolt transaction. It stands in for raft-boltdb/v2, whose
// v2.3.1 imports a go-metrics package that raft v1.8.0's go-metrics no
// longer has (docs/ha.md).
type BoltStore struct {
	db *bolt.DB
}

// OpenBoltStore opens or creates (mode 0600) the raft store at path,
// waiting at most a second for its file lock.
func OpenBoltStore(path string) (*BoltStore, error) {
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		return nil, fmt.Errorf("raft store %s: open: %w", path, err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		for _, b := range []string{bucketLogs, bucketStable} {
			if _, err := tx.CreateBucketIfNotExists([]byte(b)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("raft store %s: buckets: %w", path, err)
	}
	return &BoltStore{db: db}, nil
}

// Close closes the file.
func (b *BoltStore) Close() error { return b.db.Close() }

// FirstIndex implements raft.LogStore: the lowest index held, 0 for none.
func (b *BoltStore) FirstIndex() (uint64, error) {
	var i uint64
	err := b.db.View(func(tx *bolt.Tx) error {
		if k, _ := tx.Bucket([]byte(bucketLogs)).Cursor().First(); k != nil {
			i = binary.BigEndian.Uint64(k)
		}
		return nil
	})
	return i, err
}

// LastIndex implements raft.LogStore: the highest index held, 0 for none.
func (b *BoltStore) LastIndex() (uint64, error) {
	var i uint64
	err := b.db.View(func(tx *bolt.Tx) error {
		if k, _ := tx.Bucket([]byte(bucketLogs)).Cursor().Last(); k != nil {
			i = binary.BigEndian.Uint64(k)
		}
		return nil
	})
	return i, err
}

// GetLog implements raft.LogStore: raft.ErrLogNotFound when index is not
// held.
func (b *BoltStore) GetLog(index uint64, log *raft.Log) error {
	return b.db.View(func(tx *bolt.Tx) error {
		v := tx.Bucket([]byte(bucketLogs)).Get(u64(index))
		if v == nil {
			return raft.ErrLogNotFound
		}
		return decodeLog(v, index, log)
	})
}

// StoreLog implements raft.LogStore.
func (b *BoltStore) StoreLog(log *raft.Log) error { return b.StoreLogs([]*raft.Log{log}) }

// StoreLogs implements raft.LogStore: the entries in one transaction.
func (b *BoltStore) StoreLogs(logs []*raft.Log) error {
	return b.db.Update(func(tx *bolt.Tx) error {
		bk := tx.Bucket([]byte(bucketLogs))
		for _, l := range logs {
			if err := bk.Put(u64(l.Index), encodeLog(l)); err != nil {
				return err
			}
		}
		return nil
	})
}

// DeleteRange implements raft.LogStore: deletes min to max, inclusive.
func (b *BoltStore) DeleteRange(lo, hi uint64) error {
	return b.db.Update(func(tx *bolt.Tx) error {
		c := tx.Bucket([]byte(bucketLogs)).Cursor()
		for k, _ := c.Seek(u64(lo)); k != nil && binary.BigEndian.Uint64(k) <= hi; k, _ = c.Next() {
			if err := c.Delete(); err != nil {
				return err
			}
		}
		return nil
	})
}

// Set implements raft.StableStore.
func (b *BoltStore) Set(key, val []byte) error {
	return b.db.Update(func(tx *bolt.Tx) error {
		return tx.Bucket([]byte(bucketStable)).Put(key, val)
	})
}

// Get implements raft.StableStore: an error reading "not found" for a key
// never set (raft's convention).
func (b *BoltStore) Get(key []byte) ([]byte, error) {
	var v []byte
	err := b.db.View(func(tx *bolt.Tx) error {
		if got := tx.Bucket([]byte(bucketStable)).Get(key); got != nil {
			v = append([]byte(nil), got...)
		}
		return nil
	})
	if err == nil && v == nil {
		return nil, errKeyNotFound
	}
	return v, err
}

// SetUint64 implements raft.StableStore.
func (b *BoltStore) SetUint64(key []byte, val uint64) error { return b.Set(key, u64(val)) }

// GetUint64 implements raft.StableStore.
func (b *BoltStore) GetUint64(key []byte) (uint64, error) {
	v, err := b.Get(key)
	if err != nil {
		return 0, err
	}
	if len(v) != 8 {
		return 0, fmt.Errorf("raft store: key %q holds %d bytes, want 8", key, len(v))
	}
	return binary.BigEndian.Uint64(v), nil
}

func u64(i uint64) []byte { return binary.BigEndian.AppendUint64(nil, i) }

// encodeLog frames a raft entry: term (8 bytes), type (1), appended-at
// (Unix nanoseconds, 8), then data and extensions, each after its length
// (4 bytes). All big-endian.
func encodeLog(l *raft.Log) []byte {
	out := make([]byte, 0, 29+len(l.Data)+len(l.Extensions))
	out = binary.BigEndian.AppendUint64(out, l.Term)
	out = append(out, byte(l.Type))
	var at int64
	if !l.AppendedAt.IsZero() {
		at = l.AppendedAt.UnixNano()
	}
	out = binary.BigEndian.AppendUint64(out, uint64(at))
	out = binary.BigEndian.AppendUint32(out, uint32(len(l.Data)))
	out = append(out, l.Data...)
	out = binary.BigEndian.AppendUint32(out, uint32(len(l.Extensions)))
	return append(out, l.Extensions...)
}

// decodeLog reads what encodeLog wrote into l.
func decodeLog(v []byte, index uint64, l *raft.Log) error {
	bad := fmt.Errorf("raft store: entry %d: corrupt (%d bytes)", index, len(v))
	if len(v) < 21 {
		return bad
	}
	l.Index = index
	l.Term = binary.BigEndian.Uint64(v)
	l.Type = raft.LogType(v[8])
	if at := int64(binary.BigEndian.Uint64(v[9:])); at != 0 {
		l.AppendedAt = time.Unix(0, at)
	} else {
		l.AppendedAt = time.Time{}
	}
	rest := v[17:]
	field := func() ([]byte, bool) {
		if len(rest) < 4 {
			return nil, false
		}
		n := int(binary.BigEndian.Uint32(rest))
		if len(rest)-4 < n {
			return nil, false
		}
		f := append([]byte(nil), rest[4:4+n]...)
		rest = rest[4+n:]
		return f, true
	}
	var ok bool
	if l.Data, ok = field(); !ok {
		return bad
	}
	if l.Extensions, ok = field(); !ok || len(rest) != 0 {
		return bad
	}
	return nil
}
