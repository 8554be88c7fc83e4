package api

import (
	"fmt"
	"net/http"

	"github.com/xce-sched/xce/internal/state"
	"github.com/xce-sched/xce/jobarray"
)

// This file holds how requests name jobs of arrays (docs/arrays.md): "12"
// is job 12, or every element of array 12 when 12 is an array's ID;
// "12[3]" is the element of array 12 with index 3 (jobarray.ParseRef,
// state.Select).

// pathSelector reads the job named by a /v1/jobs/{id}/... route; a bad
// name is answered with 400.
func pathSelector(w http.ResponseWriter, r *http.Request) (jobarray.Ref, bool) {
	sel, err := jobarray.ParseRef(r.PathValue("id"))
	if err != nil {
		fail(w, &Error{Status: http.StatusBadRequest, Msg: err.Error()})
		return jobarray.Ref{}, false
	}
	return sel, true
}

// displayID returns the ID and array index a job is shown with: an
// element's array's ID and its index, else its own ID and 0.
func displayID(j *state.Job) (id int64, index int64) {
	if j.ArrayJob != 0 {
		return j.ArrayJob, j.ArrayIndex
	}
	return j.Job, 0
}

// oneJob returns the one job sel names in st, for the routes about one job
// (history, why): nil with 404 when there is none (or, with private, it is
// not user's: another user's private job is not there), 400 when sel
// names a whole array of more than one element.
func oneJob(st *state.State, sel jobarray.Ref, private bool, user string) (*state.Job, *Error) {
	js := st.Select(sel.ID, sel.Index)
	switch {
	case len(js) == 0 || private && js[0].User != user:
		return nil, &Error{Status: http.StatusNotFound, Msg: fmt.Sprintf("job %s does not exist", sel)}
	case len(js) > 1:
		return nil, &Error{Status: http.StatusBadRequest, Msg: fmt.Sprintf("job %s is an array of %d elements: name one, as %d[INDEX]", sel, len(js), sel.ID)}
	}
	return js[0], nil
}
