package api

import (
	"encoding/json"
	"net/http"
	"testing"
)

// TestLoopRefusalNamesJob: a request the loop refuses for one of its
// jobs (what only the configuration can tell: a queue that does not
// exist, an exclusive job in a queue that takes none, a resource the
// cluster lacks, an array over max_array_size 1000) answers 400 naming
// that job's place in the request, jobs[i], and a message without the ID
// it would have taken (found attacking issue 29's fixes: "job 3: queue …"
// named a job no one has). Jobs 0 and 1 are fine, job 0 an array of 3;
// the array over the cap goes alone (a request of several jobs takes 1,000
// in all, which the check before the loop enforces).
func TestLoopRefusalNamesJob(t *testing.T) {
	r := newRig(t)
	defer r.stop()
	ok := func() JobRequest {
		return JobRequest{TasksMin: 1, TasksMax: 1, Command: []string{"true"}, Cwd: "/"}
	}
	arr := ok()
	arr.Array = "1-3"
	for _, tc := range []struct {
		name  string
		bad   func(j *JobRequest)
		alone bool
		field string
		msg   string
	}{
		{"queue", func(j *JobRequest) { j.Queue = "nosuch" }, false, "jobs[2]", `queue "nosuch" does not exist`},
		{"exclusive", func(j *JobRequest) { j.Exclusive = true }, false, "jobs[2]", "queue normal does not take exclusive jobs (-x): its configuration needs exclusive: true"},
		{"resource", func(j *JobRequest) { j.ResReq = "rusage[bogus=1]" }, false, "jobs[2]", `resource requirement: rusage[]: unknown resource "bogus"`},
		{"array", func(j *JobRequest) { j.Array = "1-1001" }, true, "jobs[0]", "array: col 1: more than 1000 elements (the most an array may have)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bad := ok()
			tc.bad(&bad)
			jobs := []JobRequest{arr, ok(), bad}
			if tc.alone {
				jobs = jobs[2:]
			}
			w := r.postJobs(t, jobs...)
			var e Error
			if err := json.Unmarshal(w.Body.Bytes(), &e); err != nil || w.Code != http.StatusBadRequest {
				t.Fatalf("%d %s", w.Code, w.Body)
			}
			if e.Field != tc.field || e.Msg != tc.msg {
				t.Errorf("field %q, error %q; want %q, %q", e.Field, e.Msg, tc.field, tc.msg)
			}
		})
	}
}
