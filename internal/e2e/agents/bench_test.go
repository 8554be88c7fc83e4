package agents

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/xce-sched/xce/internal/api"
	"github.com/xce-sched/xce/internal/event"
)

// benchConfig is the benchmarks' cluster: 10 hosts of 16 slots, h1..h10.
func benchConfig() (string, []string) {
	var b strings.Builder
	var hosts []string
	b.WriteString("hosts:\n")
	for i := 1; i <= 10; i++ {
		hosts = append(hosts, fmt.Sprintf("h%d", i))
		fmt.Fprintf(&b, "  - {name: h%d, slots: 16}\n", i)
	}
	b.WriteString("queues:\n  - {name: normal, policy: firstfit}\nserver:\n  allow_root_jobs: true\n")
	return b.String(), hosts
}

// trueJobs returns n jobs running `true`, their output to /dev/null.
func trueJobs(n int, cwd string) []api.JobRequest {
	jobs := make([]api.JobRequest, n)
	for i := range jobs {
		jobs[i] = api.JobRequest{TasksMin: 1, TasksMax: 1, Command: []string{"true"}, Cwd: cwd,
			Env: []string{"PATH=" + os.Getenv("PATH")}, Stdout: "/dev/null"}
	}
	return jobs
}

// BenchmarkAgents5000 (issue 12): 5,000 trivial jobs (`true`) end to
// end on 10 agents × 16 slots, all on this machine. Each iteration
// starts a fresh server and its 10 agents (not timed), times `seq 5000 |
// xargs -P 160 -n1 sh -c true`, then submits the 5,000 jobs in 10
// requests of 500 through the API and waits until none is pending or
// running. Reported: jobs/s from the first submit to the wait's end
// (jobs/s), the same by the event log (the first job.submitted to the
// last job.finished, log-jobs/s), xargs' jobs/s, and the ratio of the
// first to the last (target ≥ 0.5).
//
//	go test -run '^$' -bench BenchmarkAgents5000 -benchtime 1x -count 3 ./internal/e2e/agents/
func BenchmarkAgents5000(b *testing.B) {
	const n = 5000
	var wall, logSpan, xargs time.Duration
	for range b.N {
		b.StopTimer()
		cfg, hosts := benchConfig()
		r := newRig(b, cfg, hosts...)
		jobs := trueJobs(n, r.work)

		start := time.Now()
		cmd := exec.Command("sh", "-c", "seq 5000 | xargs -P 160 -n1 sh -c true")
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("xargs: %v %s", err, out)
		}
		xargsTook := time.Since(start)
		xargsCPU := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
		xargs += xargsTook

		b.StartTimer()
		start = time.Now()
		for i := 0; i < n; i += 500 {
			if _, err := r.c.Submit(context.Background(), jobs[i:i+500]); err != nil {
				b.Fatal(err)
			}
		}
		deadline := time.Now().Add(5 * time.Minute)
		for r.unfinished() > 0 {
			if time.Now().After(deadline) {
				b.Fatalf("%d jobs not ended after 5 min", r.unfinished())
			}
			time.Sleep(10 * time.Millisecond)
		}
		wall += time.Since(start)
		b.StopTimer()

		server, agents, jobCPU := r.cpu()
		b.Logf("the first submit to the last end %v, xargs %v (CPU %v); CPU since the start (user+system): server %v, agents %v, their jobs %v",
			time.Since(start).Round(time.Millisecond), xargsTook.Round(time.Millisecond), xargsCPU, server, agents, jobCPU)
		evs := r.events()
		var first, last int64
		ended := map[int64]bool{}
		for _, e := range evs {
			switch {
			case e.Type == event.JobSubmitted && first == 0:
				first = e.At
			case e.Type == event.JobFinished:
				last = max(last, e.At)
				if e.Finished.ExitCode != 0 || e.Finished.Reason != "" {
					b.Fatalf("job %d ended %+v", e.Finished.Job, *e.Finished)
				}
				ended[e.Finished.Job] = true
			}
		}
		if len(ended) != n {
			b.Fatalf("%d jobs ended in the log, want %d", len(ended), n)
		}
		logSpan += time.Duration(last - first)
		r.close()
	}
	per := func(d time.Duration) float64 { return float64(n*b.N) / d.Seconds() }
	b.ReportMetric(per(wall), "jobs/s")
	b.ReportMetric(per(logSpan), "log-jobs/s")
	b.ReportMetric(per(xargs), "xargs-jobs/s")
	b.ReportMetric(xargs.Seconds()/wall.Seconds(), "ratio")
}

// BenchmarkAgentsIdleLatency (issue 12): on an idle server with 10
// remote agents, one `true` job at a time: the time from its
// job.submitted event to its agent's job.started event, both stamped by
// the server, p50 and p99 in ms; also to its placement (p50-to-cycle-ms)
// and to its job.finished event (p50-to-end-ms, p99-to-end-ms). Each job
// is awaited, and the server left idle for 30 ms (more than its 20 ms
// cycle interval and the 25 ms of the issue), before the next is
// submitted. A job whose start its agent did not report (defect 1: the
// start of an attempt that has already ended when the agent reports is
// never sent) has no start latency; their number is reported
// (no-start-event).
//
//	go test -run '^$' -bench BenchmarkAgentsIdleLatency -benchtime 200x -count 3 ./internal/e2e/agents/
func BenchmarkAgentsIdleLatency(b *testing.B) {
	cfg, hosts := benchConfig()
	r := newRig(b, cfg, hosts...)
	job := trueJobs(1, r.work)
	b.ResetTimer()
	for b.Loop() {
		rep, err := r.c.Submit(context.Background(), job)
		if err != nil {
			b.Fatal(err)
		}
		deadline := time.Now().Add(waitShort)
		for {
			js, err := r.c.Jobs(context.Background(), "all", true, rep.IDs)
			if err != nil {
				b.Fatal(err)
			}
			if js[0].State == "DONE" || js[0].State == "EXIT" {
				break
			}
			if time.Now().After(deadline) {
				b.Fatalf("job %d: %s after %v", rep.IDs[0], js[0].State, waitShort)
			}
			time.Sleep(time.Millisecond)
		}
		time.Sleep(30 * time.Millisecond)
	}
	b.StopTimer()
	submitted := map[int64]int64{}
	var toStart, toCycle, toEnd []float64
	for _, e := range r.events() {
		switch e.Type {
		case event.JobSubmitted:
			submitted[e.Submit.Job] = e.At
		case event.CycleDecided:
			for _, p := range e.Cycle.Started {
				toCycle = append(toCycle, float64(e.At-submitted[p.Job])/1e6)
			}
		case event.JobStarted:
			toStart = append(toStart, float64(e.At-submitted[e.Started.Job])/1e6)
		case event.JobFinished:
			toEnd = append(toEnd, float64(e.At-submitted[e.Finished.Job])/1e6)
		}
	}
	q := func(xs []float64, p int) float64 {
		if len(xs) == 0 {
			return -1
		}
		slices.Sort(xs)
		return xs[min(len(xs)-1, len(xs)*p/100)]
	}
	b.ReportMetric(q(toStart, 50), "p50-ms")
	b.ReportMetric(q(toStart, 99), "p99-ms")
	b.ReportMetric(q(toCycle, 50), "p50-to-cycle-ms")
	b.ReportMetric(q(toEnd, 50), "p50-to-end-ms")
	b.ReportMetric(q(toEnd, 99), "p99-to-end-ms")
	b.ReportMetric(float64(len(submitted)-len(toStart)), "no-start-event")
}
