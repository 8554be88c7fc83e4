package daemon

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/xce-sched/xce/internal/api"
	"github.com/xce-sched/xce/internal/client"
	"github.com/xce-sched/xce/internal/event"
	"github.com/xce-sched/xce/internal/store"
)

// BenchmarkIdleLatency: on an idle dev server (the agent in the process),
// one `true` job at a time: the time from its submit event to its agent's
// start event, both stamped by the server, p50 and p99 in ms. Each job is
// awaited, and the server left idle for 25 ms (more than its 20 ms
// cycle interval), before the next is submitted.
func BenchmarkIdleLatency(b *testing.B) {
	c, s, text, err := DevCluster()
	if err != nil {
		b.Fatal(err)
	}
	data := filepath.Join(b.TempDir(), "data")
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		done <- Serve(ctx, Options{Cluster: c, Server: s, ConfigText: text, DataDir: data, Dev: true, Ready: func(sock, _ string) { ready <- sock }})
	}()
	sock := <-ready
	cl := client.New(sock)
	job := []api.JobRequest{{TasksMin: 1, TasksMax: 1, Command: []string{"true"}, Cwd: b.TempDir(), Stdout: "/dev/null"}}
	for b.Loop() {
		rep, err := cl.Submit(context.Background(), job)
		if err != nil {
			b.Fatal(err)
		}
		deadline := time.Now().Add(10 * time.Second)
		for {
			js, err := cl.Jobs(context.Background(), "", true, rep.IDs)
			if err != nil {
				b.Fatal(err)
			}
			if js[0].State == "DONE" || js[0].State == "EXIT" {
				break
			}
			if time.Now().After(deadline) {
				b.Fatalf("job %d: %s after 10 s", rep.IDs[0], js[0].State)
			}
			time.Sleep(time.Millisecond)
		}
		time.Sleep(25 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		b.Fatal(err)
	}
	log, err := store.Open(filepath.Join(data, "events.db"), store.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer log.Close()
	submitted, placed := map[int64]int64{}, map[int64]int64{}
	var lat, toCycle []float64
	if err := log.Read(1, func(e event.Event) error {
		switch e.Type {
		case event.JobSubmitted:
			submitted[e.Submit.Job] = e.At
		case event.CycleDecided:
			for _, p := range e.Cycle.Started {
				placed[p.Job] = e.At
				toCycle = append(toCycle, float64(e.At-submitted[p.Job])/1e6)
			}
		case event.JobStarted:
			lat = append(lat, float64(e.At-submitted[e.Started.Job])/1e6)
		}
		return nil
	}); err != nil {
		b.Fatal(err)
	}
	slices.Sort(lat)
	if len(lat) > 0 {
		b.ReportMetric(lat[len(lat)/2], "p50-ms")
		b.ReportMetric(lat[len(lat)*99/100], "p99-ms")
		slices.Sort(toCycle)
		b.ReportMetric(toCycle[len(toCycle)/2], "p50-to-cycle-ms")
	}
}
