package api

import (
	"cmp"
	"fmt"
	"net/http"
	"os/user"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/xce-sched/xce/internal/auth"
	"github.com/xce-sched/xce/internal/event"
	"github.com/xce-sched/xce/internal/limitview"
	"github.com/xce-sched/xce/internal/live"
	"github.com/xce-sched/xce/internal/state"
)

// HistoryEvent is one event of a job's history, as GET
// /v1/jobs/{id}/history shows it: its index, time (Unix nanoseconds), type
// and a one-line description.
type HistoryEvent struct {
	Index uint64 `json:"index"`
	Time  int64  `json:"time"`
	Type  string `json:"type"`
	What  string `json:"what"`
}

// HistoryReply is the answer to GET /v1/jobs/{id}/history.
type HistoryReply struct {
	// ID and ArrayIndex name the job as JobInfo does (an element by its
	// array's ID and its index).
	ID         int64          `json:"id"`
	ArrayIndex int64          `json:"array_index,omitempty"`
	Events     []HistoryEvent `json:"events"`
}

func (h *Handler) history(w http.ResponseWriter, r *http.Request) {
	sel, ok := pathSelector(w, r)
	if !ok {
		return
	}
	c, _ := callerOf(r.Context())
	private := h.Private && !h.admin(c)
	var indexes []uint64
	var missing *Error
	var id, shown, index int64
	h.loop.View(func(k *live.Core) {
		j, e := oneJob(k.State, sel, private, c.User)
		if e != nil {
			missing = e
			return
		}
		id, indexes = j.Job, append(indexes, j.Events...)
		shown, index = displayID(j)
	})
	if missing != nil {
		fail(w, missing)
		return
	}
	rep := HistoryReply{ID: shown, ArrayIndex: index, Events: []HistoryEvent{}}
	for _, i := range indexes {
		e, err := h.log.Event(i)
		if err != nil {
			fail(w, &Error{Status: http.StatusInternalServerError, Msg: err.Error()})
			return
		}
		rep.Events = append(rep.Events, HistoryEvent{Index: e.Index, Time: e.At, Type: string(e.Type), What: describe(&e, id)})
	}
	reply(w, http.StatusOK, rep)
}

// describe says in one line what e did to job id, as LSF's bhist does.
func describe(e *event.Event, id int64) string {
	switch e.Type {
	case event.JobSubmitted:
		s := e.Submit
		return fmt.Sprintf("submitted by %s to queue %s, %d-%d tasks, resreq %q", s.User, s.Queue, s.TasksMin, s.TasksMax, s.ResReq)
	case event.CycleDecided:
		for _, p := range e.Cycle.Started {
			if p.Job == id {
				where := ""
				for _, h := range p.Hosts {
					where += fmt.Sprintf(" %d*%s", h.Slots, h.Host)
				}
				return fmt.Sprintf("dispatched by cycle %d, attempt %d, to%s", e.Cycle.Number, p.Attempt, where)
			}
		}
		var what []string
		if slices.Contains(e.Cycle.Resumed, id) {
			what = append(what, "resumed")
		}
		for _, p := range e.Cycle.Preempted {
			if p.Job == id {
				if p.Action == event.PreemptSuspend {
					what = append(what, fmt.Sprintf("suspended by preemption (attempt %d)", p.Attempt))
				} else {
					what = append(what, fmt.Sprintf("requeued by preemption: attempt %d is killed", p.Attempt))
				}
			}
		}
		if len(what) > 0 {
			return fmt.Sprintf("cycle %d: %s", e.Cycle.Number, strings.Join(what, ", then "))
		}
		return fmt.Sprintf("cycle %d", e.Cycle.Number)
	case event.JobStarted:
		return fmt.Sprintf("started on %s, pid %d (attempt %d)", e.Started.Host, e.Started.PID, e.Started.Attempt)
	case event.JobFinished:
		f := e.Finished
		what := fmt.Sprintf("attempt %d ended, exit code %d", f.Attempt, f.ExitCode)
		if f.Signal != "" {
			what += ", " + f.Signal
		}
		if f.Reason != "" {
			what += ", " + f.Reason
		}
		if f.Requeued {
			what += "; requeued"
		}
		return what
	case event.JobKilled:
		return "killed by " + e.Killed.By
	}
	return string(e.Type)
}

// QueueInfo is one queue as GET /v1/queues shows it (LSF's bqueues).
type QueueInfo struct {
	Name     string `json:"name"`
	Priority int    `json:"priority"`
	Policy   string `json:"policy"`
	Status   string `json:"status"` // open or closed
	Pend     int    `json:"pend"`
	Run      int    `json:"run"`
	Slots    int    `json:"slots"` // slots its running jobs hold
}

// QueuesReply is the answer to GET /v1/queues.
type QueuesReply struct {
	Queues []QueueInfo `json:"queues"`
}

func (h *Handler) queues(w http.ResponseWriter, _ *http.Request) {
	var rep QueuesReply
	h.loop.View(func(k *live.Core) {
		index := map[string]int{}
		for i, q := range k.Cluster.Queues {
			status := "open"
			if q.Closed {
				status = "closed"
			}
			policy := string(q.Policy)
			if policy == "" {
				policy = "firstfit"
			}
			index[q.Name] = i
			rep.Queues = append(rep.Queues, QueueInfo{Name: q.Name, Priority: q.Priority, Policy: policy, Status: status})
		}
		for _, j := range k.State.Jobs {
			i, ok := index[j.Queue]
			if !ok {
				continue
			}
			switch j.State {
			case state.Pend:
				rep.Queues[i].Pend++
			case state.Run:
				rep.Queues[i].Run++
				for _, a := range j.Hosts {
					rep.Queues[i].Slots += a.Slots
				}
			}
		}
	})
	reply(w, http.StatusOK, rep)
}

// hostStatus returns the handler that closes or opens a host (LSF's
// badmin hclose / hopen): administrators only.
func (h *Handler) hostStatus(t event.Type) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		c, _ := callerOf(r.Context())
		name := r.PathValue("name")
		if !h.admin(c) {
			fail(w, &Error{Status: http.StatusForbidden, Msg: "only an administrator may close or open a host"})
			return
		}
		known := false
		h.loop.View(func(k *live.Core) { _, known = k.Cluster.HostByName(name) })
		if !known {
			fail(w, &Error{Status: http.StatusNotFound, Msg: fmt.Sprintf("host %q is not in the configuration", name)})
			return
		}
		_, err := h.loop.Do(r.Context(), func(*state.State, int64) ([]event.Event, error) {
			return []event.Event{{Type: t, Host: &event.Host{Name: name, Reason: "by " + c.User}}}, nil
		})
		if err != nil {
			fail(w, err)
			return
		}
		reply(w, http.StatusOK, map[string]string{"host": name})
	}
}

// reconfig reloads the configuration file (LSF's badmin reconfig):
// administrators only; a file that is not a configuration, or that the
// jobs do not fit (a host with running jobs removed), is refused with 400
// and nothing changes.
func (h *Handler) reconfig(w http.ResponseWriter, r *http.Request) {
	c, _ := callerOf(r.Context())
	if !h.admin(c) {
		fail(w, &Error{Status: http.StatusForbidden, Msg: "only an administrator may reload the configuration"})
		return
	}
	if h.Reconfig == nil {
		fail(w, &Error{Status: http.StatusConflict, Msg: "this server has no configuration file to reload (a dev server)"})
		return
	}
	text, err := h.Reconfig()
	if err != nil {
		fail(w, &Error{Status: http.StatusBadRequest, Msg: err.Error()})
		return
	}
	if _, err := h.loop.Do(r.Context(), func(*state.State, int64) ([]event.Event, error) {
		return []event.Event{{Type: event.ConfigReloaded, Config: &event.Config{Text: text}}}, nil
	}); err != nil {
		fail(w, err)
		return
	}
	reply(w, http.StatusOK, map[string]bool{"reloaded": true})
}

// LimitInfo is one limit instance as GET /v1/limits shows it (LSF's
// blimits): its consumers and, per limited resource in the limit's order,
// what is used and the maximum.
type LimitInfo struct {
	Name     string       `json:"name"`
	Users    string       `json:"users"`
	Queues   string       `json:"queues"`
	Hosts    string       `json:"hosts"`
	Projects string       `json:"projects"`
	Usage    []LimitUsage `json:"usage"`
}

// LimitUsage is one limited resource of an instance.
type LimitUsage struct {
	Resource string  `json:"resource"`
	Used     float64 `json:"used"`
	Max      float64 `json:"max"`
}

// LimitsReply is the answer to GET /v1/limits.
type LimitsReply struct {
	Limits []LimitInfo `json:"limits"`
}

func (h *Handler) limits(w http.ResponseWriter, _ *http.Request) {
	rep := LimitsReply{Limits: []LimitInfo{}}
	h.loop.View(func(k *live.Core) {
		for _, r := range limitview.Rows(k.Sched) {
			li := LimitInfo{Name: r.Name, Users: r.Users, Queues: r.Queues, Hosts: r.Hosts, Projects: r.Projects}
			for i, res := range r.Resources {
				li.Usage = append(li.Usage, LimitUsage{Resource: res, Used: r.Used[i], Max: r.Max[i]})
			}
			rep.Limits = append(rep.Limits, li)
		}
	})
	reply(w, http.StatusOK, rep)
}

// TokenRequest is the body of POST /v1/tokens: the user a token is for and
// its lifetime in seconds (default a day).
type TokenRequest struct {
	User string `json:"user"`
	TTL  int64  `json:"ttl,omitempty"`
}

// TokenReply is the answer to POST /v1/tokens.
type TokenReply struct {
	Token   string `json:"token"`
	Expires int64  `json:"expires"` // Unix seconds
}

// token issues a token for a user of this machine (administrators only):
// the user's uid and gid come from the user database.
func (h *Handler) token(w http.ResponseWriter, r *http.Request) {
	c, _ := callerOf(r.Context())
	if !h.admin(c) {
		fail(w, &Error{Status: http.StatusForbidden, Msg: "only an administrator may create tokens"})
		return
	}
	if h.Tokens == nil {
		fail(w, &Error{Status: http.StatusConflict, Msg: "this server issues no tokens"})
		return
	}
	var req TokenRequest
	if err := decode(w, r, &req); err != nil {
		fail(w, err)
		return
	}
	ttl := time.Duration(req.TTL) * time.Second
	if req.TTL == 0 {
		ttl = 24 * time.Hour
	}
	u, err := user.Lookup(req.User)
	if err != nil {
		fail(w, &Error{Status: http.StatusBadRequest, Msg: fmt.Sprintf("no user %q on the server's machine", req.User), Field: "user"})
		return
	}
	uid, _ := strconv.ParseUint(u.Uid, 10, 32)
	gid, _ := strconv.ParseUint(u.Gid, 10, 32)
	tok, err := h.Tokens.Issue(auth.Identity{User: u.Username, UID: uint32(uid), GID: uint32(gid)}, ttl)
	if err != nil {
		fail(w, &Error{Status: http.StatusBadRequest, Msg: err.Error(), Field: "ttl"})
		return
	}
	reply(w, http.StatusOK, TokenReply{Token: tok, Expires: time.Now().Add(ttl).Unix()})
}

// MaxEventsPage is the most events GET /v1/events returns at once.
const MaxEventsPage = 1000

// EventsReply is the answer to GET /v1/events: the log's events from the
// index asked for, at most limit of them, in order, and the log's last
// durable index (the events after the page's are read by asking again
// from one past the page's last).
type EventsReply struct {
	Events []event.Event `json:"events"`
	Last   uint64        `json:"last"`
}

// events serves GET /v1/events?from=N&limit=M: the raw event log
// (administrators only: it holds every job's command and environment),
// for `xce sim verify` and `xce sim --from-data` while the server runs.
func (h *Handler) events(w http.ResponseWriter, r *http.Request) {
	c, _ := callerOf(r.Context())
	if !h.admin(c) {
		fail(w, &Error{Status: http.StatusForbidden, Msg: "the event log holds every job's command and environment: administrators only"})
		return
	}
	q := r.URL.Query()
	from, err1 := strconv.ParseUint(q.Get("from"), 10, 64)
	limit, err2 := strconv.Atoi(cmp.Or(q.Get("limit"), strconv.Itoa(MaxEventsPage)))
	if err1 != nil || err2 != nil || from < 1 || limit < 1 {
		fail(w, &Error{Status: http.StatusBadRequest, Msg: fmt.Sprintf("want from (an index, 1 or more) and limit (1 or more), got %q", r.URL.RawQuery)})
		return
	}
	limit = min(limit, MaxEventsPage)
	var last uint64
	h.loop.View(func(k *live.Core) { last = k.State.Index })
	rep := EventsReply{Events: []event.Event{}, Last: last}
	for i := from; i <= last && len(rep.Events) < limit; i++ {
		e, err := h.log.Event(i)
		if err != nil {
			fail(w, &Error{Status: http.StatusInternalServerError, Msg: err.Error()})
			return
		}
		if e.Keys != nil {
			e.Keys = &event.Keys{} // shared secrets: never shown
		}
		rep.Events = append(rep.Events, e)
	}
	reply(w, http.StatusOK, rep)
}
