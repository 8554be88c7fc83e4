package api

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/xce-sched/xce/cluster"
	"github.com/xce-sched/xce/framework/plugins"
	"github.com/xce-sched/xce/internal/live"
	"github.com/xce-sched/xce/internal/state"
	"github.com/xce-sched/xce/sim"
)

// WhyBudget bounds the search for a pending job's counterfactuals (GET
// /v1/jobs/{id}/why): what was found by then is answered, marked Partial.
const WhyBudget = 10 * time.Second

// WhyReply is the answer to GET /v1/jobs/{id}/why: the job (with its
// host reasons and, when pending, its forecast), the server's now (Unix
// seconds), and for a pending job the changes to its request that would
// let it start now or sooner, each checked by a simulation of the cluster
// with the change (sim.Suggest). Partial: the search ran out of its
// budget (WhyBudget).
type WhyReply struct {
	Job         JobInfo          `json:"job"`
	Now         int64            `json:"now"`
	Suggestions []sim.Suggestion `json:"suggestions"`
	Partial     bool             `json:"partial,omitempty"`
}

func (h *Handler) why(w http.ResponseWriter, r *http.Request) {
	sel, ok := pathSelector(w, r)
	if !ok {
		return
	}
	c, _ := callerOf(r.Context())
	private := h.Private && !h.admin(c)
	rep := WhyReply{Now: time.Now().Unix(), Suggestions: []sim.Suggestion{}}
	var snap *cluster.Cluster
	var reserved map[cluster.JobID]live.Reserved
	var err error
	var missing *Error
	var id int64
	h.loop.View(func(k *live.Core) {
		j, e := oneJob(k.State, sel, private, c.User)
		if e != nil {
			missing = e
			return
		}
		id = j.Job
		rep.Job = info(j)
		rep.Job.HostReasons = k.HostReasons(id)
		if j.State == state.Pend {
			snap, reserved, err = k.Snapshot(rep.Now)
		}
	})
	switch {
	case missing != nil:
		fail(w, missing)
		return
	case err != nil:
		fail(w, &Error{Status: http.StatusInternalServerError, Msg: "snapshot: " + err.Error()})
		return
	case snap == nil:
		reply(w, http.StatusOK, rep)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), WhyBudget)
	defer cancel()
	base, sugg, err := sim.Suggest(ctx, snap, reserved, cluster.JobID(id), rep.Now, plugins.NewInTreeRegistry())
	if errors.Is(err, context.DeadlineExceeded) && r.Context().Err() == nil {
		rep.Partial, err = true, nil
	}
	if err != nil {
		fail(w, &Error{Status: http.StatusInternalServerError, Msg: "why: " + err.Error()})
		return
	}
	rep.Job.setForecast(base, snap)
	if sugg != nil {
		rep.Suggestions = sugg
	}
	reply(w, http.StatusOK, rep)
}
