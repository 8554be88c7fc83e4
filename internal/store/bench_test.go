package store

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/xce-sched/xce/internal/event"
)

// benchSubmit is a JobSubmitted event of a realistic size (about 300
// bytes encoded).
func benchSubmit(job int64) event.Event {
	return event.Event{At: time.Now().UnixNano(), Type: event.JobSubmitted, Submit: &event.Submit{
		Job: job, User: "alice", UID: 1000, GID: 1000, Name: "sweep", Queue: "normal", Project: "climate",
		TasksMin: 4, TasksMax: 4, ResReq: "select[mem>4000] rusage[mem=4000] span[ptile=4]", Estimate: 3600,
		Command: []string{"/home/alice/bin/model", "--input", "run.nc"}, Cwd: "/home/alice/runs", Env: []string{"PATH=/usr/bin:/bin", "OMP_NUM_THREADS=4"},
		Stdout: "out.%J"}}
}

// parallel runs b.N calls of one over writers goroutines and reports
// acknowledged appends per second.
func parallel(b *testing.B, writers int, one func(job int64) error) {
	var next atomic.Int64
	var wg sync.WaitGroup
	b.ResetTimer()
	start := time.Now()
	for range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				j := next.Add(1)
				if j > int64(b.N) {
					return
				}
				if err := one(j); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	b.StopTimer()
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "appends/s")
}

// BenchmarkAppend: acknowledged (fsynced) appends of one JobSubmitted
// event each, from 1 and 8 concurrent writers, with the default
// CommitWindow and a few others. docs/store.md has the numbers:
//
//	go test -run '^$' -bench Append -benchtime 3s ./internal/store/
func BenchmarkAppend(b *testing.B) {
	for _, c := range []struct {
		writers int
		window  time.Duration
	}{{1, 0}, {8, 0}, {8, 200 * time.Microsecond}, {8, time.Millisecond}} {
		b.Run(fmt.Sprintf("writers=%d/window=%v", c.writers, c.window), func(b *testing.B) {
			s, err := Open(filepath.Join(b.TempDir(), "log.db"), Options{CommitWindow: c.window})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			ctx := context.Background()
			parallel(b, c.writers, func(job int64) error {
				_, err := s.Append(ctx, benchSubmit(job))
				return err
			})
			st := s.Stats()
			b.ReportMetric(float64(st.Commits)/float64(st.Appends), "commits/append")
		})
	}
}

// BenchmarkBoltBatch: the same appends through bbolt's own DB.Batch (its
// default 10 ms window and 1000 calls), for the comparison in
// docs/store.md. Each call numbers its event from the log's last key
// inside the transaction, as DB.Batch may run it more than once.
func BenchmarkBoltBatch(b *testing.B) {
	for _, writers := range []int{1, 8} {
		b.Run(fmt.Sprintf("writers=%d", writers), func(b *testing.B) {
			db, err := bolt.Open(filepath.Join(b.TempDir(), "log.db"), 0o600, &bolt.Options{Timeout: time.Second})
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			if err := db.Update(func(tx *bolt.Tx) error { _, err := tx.CreateBucket([]byte(bucketLog)); return err }); err != nil {
				b.Fatal(err)
			}
			var commits atomic.Int64
			var lastTx atomic.Int64
			parallel(b, writers, func(job int64) error {
				e := benchSubmit(job)
				return db.Batch(func(tx *bolt.Tx) error {
					if id := int64(tx.ID()); lastTx.Swap(id) != id {
						commits.Add(1)
					}
					bk := tx.Bucket([]byte(bucketLog))
					e.Index = 1
					if k, _ := bk.Cursor().Last(); k != nil {
						e.Index = decodeKey(k) + 1
					}
					rec, err := encodeRecord(&e)
					if err != nil {
						return err
					}
					return bk.Put(u64(e.Index), rec)
				})
			})
			b.ReportMetric(float64(commits.Load())/float64(b.N), "commits/append")
		})
	}
}

func decodeKey(k []byte) uint64 {
	var i uint64
	for _, c := range k {
		i = i<<8 | uint64(c)
	}
	return i
}
