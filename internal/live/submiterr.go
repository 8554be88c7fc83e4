package live

import (
	"fmt"
	"strings"

	"github.com/xce-sched/xce/internal/event"
)

// SubmitError is a submit the core refused (Check, Apply, Precheck): Job is
// the ID the submit would have taken, the first of its elements for an
// array, and Err why. A client that sent several jobs learns which of
// them is at fault from Job (the API names its field, jobs[i]); the ID
// was never given, since nothing of the request was applied.
type SubmitError struct {
	Job event.JobID
	Err error
}

// Error returns Err's message, which names the job ("job 3: queue …").
func (e *SubmitError) Error() string { return e.Err.Error() }

// Unwrap returns Err.
func (e *SubmitError) Unwrap() error { return e.Err }

// Reason returns Err's message without the job it names, for a client
// that names the job its own way.
func (e *SubmitError) Reason() string {
	return strings.TrimPrefix(e.Err.Error(), fmt.Sprintf("job %d: ", e.Job))
}

// submitError returns err, if any, as the refusal of sub.
func submitError(sub *event.Submit, err error) error {
	if err == nil {
		return nil
	}
	return &SubmitError{Job: sub.Job, Err: err}
}
