package daemon

import (
	"context"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/xce-sched/xce/cluster"
	"github.com/xce-sched/xce/framework/plugins"
	"github.com/xce-sched/xce/internal/event"
	"github.com/xce-sched/xce/internal/live"
	"github.com/xce-sched/xce/internal/server"
	"github.com/xce-sched/xce/internal/store"
)

// BenchmarkStartup100k: the start-up of a server whose log holds 100,000
// submitted jobs: recovering the state (from the log alone, or from a
// snapshot of it) and rebuilding the scheduler (every job pending again).
// Reports the start-up in seconds and the memory the state and scheduler
// hold per job (heap in use after a GC, before and after).
func BenchmarkStartup100k(b *testing.B) {
	b.Run("log", func(b *testing.B) { startup(b, false) })
	b.Run("snapshot", func(b *testing.B) { startup(b, true) })
}

func startup(b *testing.B, snapshot bool) {
	const jobs = 100_000
	path := filepath.Join(b.TempDir(), "events.db")
	log, err := store.Open(path, store.Options{})
	if err != nil {
		b.Fatal(err)
	}
	batch := make([]event.Event, 0, 1000)
	for id := int64(1); id <= jobs; id++ {
		batch = append(batch, event.Event{At: id * 1e6, Type: event.JobSubmitted, Submit: &event.Submit{Job: id, User: "alice", UID: 1000, GID: 1000,
			Queue: "normal", TasksMin: 1, TasksMax: 1, Command: []string{"sleep", "10"}, Cwd: "/home/alice", Env: []string{"PATH=/usr/bin:/bin", "HOME=/home/alice"}}})
		if len(batch) == cap(batch) {
			if _, err := log.Append(context.Background(), batch...); err != nil {
				b.Fatal(err)
			}
			batch = batch[:0]
		}
	}
	if snapshot {
		st, err := server.Recover(log)
		if err != nil {
			b.Fatal(err)
		}
		data, err := st.Marshal()
		if err != nil {
			b.Fatal(err)
		}
		if err := log.SaveSnapshot(st.Index, data); err != nil {
			b.Fatal(err)
		}
	}
	log.Close()
	c, _, err := cluster.ParseConfig("bench", []byte("hosts: [{name: h1, slots: 16}]\nqueues: [{name: normal}]\n"))
	if err != nil {
		b.Fatal(err)
	}
	var perJob float64
	var took time.Duration
	for b.Loop() {
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		start := time.Now()
		log, err := store.Open(path, store.Options{})
		if err != nil {
			b.Fatal(err)
		}
		st, err := server.Recover(log)
		if err != nil {
			b.Fatal(err)
		}
		k, err := live.New(c, st, plugins.NewInTreeRegistry())
		if err != nil {
			b.Fatal(err)
		}
		took = time.Since(start)
		runtime.GC()
		runtime.ReadMemStats(&after)
		perJob = float64(after.HeapInuse-before.HeapInuse) / jobs
		if len(k.Sched.Jobs) != jobs {
			b.Fatalf("%d jobs", len(k.Sched.Jobs))
		}
		log.Close()
		runtime.KeepAlive(k)
	}
	b.ReportMetric(took.Seconds(), "startup-s")
	b.ReportMetric(perJob, "B/job")
}
