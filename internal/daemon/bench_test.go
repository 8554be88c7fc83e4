package daemon

import (
	"context"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/xce-sched/xce/cluster"
	"github.com/xce-sched/xce/internal/api"
	"github.com/xce-sched/xce/internal/client"
)

// serveForBench starts a server over a fresh data directory with a
// configuration of 10 hosts × 16 slots whose agents never register (the
// jobs pend: only the submit path is timed) and returns its socket.
func serveForBench(b *testing.B) (string, func()) {
	b.Helper()
	c, s, err := cluster.ParseConfig("bench", []byte("hosts:\n"+func() string {
		out := ""
		for i := range 10 {
			out += "  - {name: h" + string(rune('0'+i)) + ", slots: 16}\n"
		}
		return out
	}()+"queues: [{name: normal}]\n"))
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		done <- Serve(ctx, Options{Cluster: c, Server: s, DataDir: filepath.Join(dir, "data"), Ready: func(sock, _ string) { ready <- sock }})
	}()
	select {
	case sock := <-ready:
		return sock, func() {
			cancel()
			if err := <-done; err != nil {
				b.Error(err)
			}
		}
	case err := <-done:
		b.Fatal(err)
	case <-time.After(10 * time.Second):
		b.Fatal("the server did not start within 10 s")
	}
	return "", nil
}

// BenchmarkSubmit8: acknowledged submits (each durable in the event log
// before its answer) from 8 concurrent API clients over the Unix socket,
// one job per request. Reports submits/s.
func BenchmarkSubmit8(b *testing.B) {
	sock, stop := serveForBench(b)
	defer stop()
	job := []api.JobRequest{{TasksMin: 1, TasksMax: 1, Command: []string{"true"}, Cwd: "/"}}
	var left atomic.Int64
	left.Store(int64(b.N))
	b.ResetTimer()
	start := time.Now()
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := client.New(sock)
			for left.Add(-1) >= 0 {
				if _, err := c.Submit(context.Background(), job); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "submits/s")
}
