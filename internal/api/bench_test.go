package api

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/xce-sched/xce/internal/submit"
	"github.com/xce-sched/xce/resreq"
)

// BenchmarkSubmitLoopWorst: the loop time of the costliest requests the
// limits allow (docs/api.md, Limits), each on a fresh cluster, its
// requirements on a conservative queue: MaxCompiled (64 KiB) of distinct
// select[]s of resreq.MaxTerms operands (512 comparisons, 3.6 KB; 16
// jobs), MaxParsed (256 KiB) of one such select[] (64 jobs, or one array of 64 elements, each
// element's parsed again in the loop), of dependencies on job names
// (about 70 jobs of 301 conditions), and MaxJobs (1,000) jobs with 8 KB
// environments (an 8 MB body). Reported: loop-ms per
// request.
//
//	go test -run '^$' -bench BenchmarkSubmitLoopWorst -benchtime 5x ./internal/api/
func BenchmarkSubmitLoopWorst(b *testing.B) {
	sel := func(i int) string {
		s, terms := fmt.Sprintf("select[mem>%d", i), 2
		for len(s)+len("&&mem>1]") <= submit.MaxResReq && terms+2 <= resreq.MaxTerms {
			s, terms = s+"&&mem>1", terms+2
		}
		return s + "]"
	}
	names := `ended("a")` + strings.Repeat(`||ended("a")`, 300)
	jobs := func(n int, edit func(i int, j *JobRequest)) []JobRequest {
		js := make([]JobRequest, n)
		for i := range js {
			js[i] = JobRequest{TasksMin: 1, TasksMax: 1, Command: []string{"true"}, Cwd: "/", Queue: "cons"}
			edit(i, &js[i])
		}
		return js
	}
	for _, c := range []struct {
		name string
		jobs []JobRequest
	}{
		{"distinct", jobs(submit.MaxCompiled/4096, func(i int, j *JobRequest) { j.ResReq = sel(i) })},
		{"same", jobs(submit.MaxParsed/4096, func(i int, j *JobRequest) { j.ResReq = sel(0) })},
		{"array", jobs(1, func(i int, j *JobRequest) { j.ResReq, j.Array = sel(i), fmt.Sprintf("1-%d", submit.MaxParsed/4096) })},
		{"depend", jobs(submit.MaxParsed/len(names), func(i int, j *JobRequest) { j.Depend = names })},
		{"env", jobs(submit.MaxJobs, func(i int, j *JobRequest) { j.Env = []string{"A=" + strings.Repeat("a", 8000)} })},
	} {
		b.Run(c.name, func(b *testing.B) {
			var loop time.Duration
			for b.Loop() {
				b.StopTimer()
				r := newRig(b)
				b.StartTimer()
				if w := r.postJobs(b, c.jobs...); w.Code != http.StatusOK {
					b.Fatalf("%d %s", w.Code, w.Body.String())
				}
				loop += time.Duration(r.took.Load())
				b.StopTimer()
				r.stop()
				b.StartTimer()
			}
			b.ReportMetric(float64(loop.Microseconds())/1e3/float64(b.N), "loop-ms/op")
		})
	}
}
