package api

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// BenchmarkSubmitLoopWorst: the loop time of the largest request of plain
// jobs the limits allow with the costliest requirements: MaxJobs (1,000)
// jobs, each with its own requirement of nearly MaxResReq (4 KiB) bytes,
// a select[] of about 400 terms (parsed and compiled in the loop), on a
// conservative queue (docs/api.md, Limits). Reported: loop-ms per
// request.
//
//	go test -run '^$' -bench BenchmarkSubmitLoopWorst -benchtime 5x ./internal/api/
func BenchmarkSubmitLoopWorst(b *testing.B) {
	jobs := make([]JobRequest, 1000)
	for i := range jobs {
		var s strings.Builder
		fmt.Fprintf(&s, "select[mem>%d", i)
		for s.Len() < 4080 {
			fmt.Fprintf(&s, " && mem>%d", s.Len())
		}
		s.WriteString("]")
		jobs[i] = JobRequest{TasksMin: 1, TasksMax: 1, Command: []string{"true"}, Cwd: "/", ResReq: s.String(), Queue: "cons"}
	}
	var loop time.Duration
	for b.Loop() {
		b.StopTimer()
		r := newRig(b)
		b.StartTimer()
		if w := r.postJobs(b, jobs...); w.Code != http.StatusOK {
			b.Fatalf("%d %s", w.Code, w.Body.String())
		}
		loop += r.took
		b.StopTimer()
		r.stop()
		b.StartTimer()
	}
	b.ReportMetric(float64(loop.Milliseconds())/float64(b.N), "loop-ms/op")
}
