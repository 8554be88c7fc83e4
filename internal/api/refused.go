package api

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/xce-sched/xce/internal/live"
)

// refusedJob returns err, a refusal of POST /v1/jobs by the loop, naming
// the job at fault by its place in the request (jobs[i]) rather than by
// the ID it would have taken, which no job has (nothing of a refused
// request is applied): first is the ID the loop gave the request's first
// job, counts[i] how many IDs job i takes (an array's elements). An error
// that is not one job's is returned as it is.
func refusedJob(err error, first int64, counts []int64) error {
	var se *live.SubmitError
	if !errors.As(err, &se) {
		return err
	}
	at := int64(se.Job) - first
	for i, n := range counts {
		if at >= 0 && at < n {
			return &Error{Status: http.StatusBadRequest, Msg: se.Reason(), Field: fmt.Sprintf("jobs[%d]", i)}
		}
		at -= n
	}
	return err
}
