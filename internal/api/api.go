// Package api is the live scheduler's HTTP/JSON API, version 1
// (docs/api.md): the handlers the CLI calls, over the server loop, and
// the caller's identity from the Unix socket's peer credentials.
package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/xce-sched/xce/cluster"
	"github.com/xce-sched/xce/framework/plugins"
	"github.com/xce-sched/xce/internal/auth"
	"github.com/xce-sched/xce/internal/event"
	"github.com/xce-sched/xce/internal/live"
	"github.com/xce-sched/xce/internal/server"
	"github.com/xce-sched/xce/internal/state"
	"github.com/xce-sched/xce/internal/submit"
	"github.com/xce-sched/xce/jobarray"
	"github.com/xce-sched/xce/sim"
)

// MaxBody is the largest request body accepted, in bytes.
const MaxBody = 8 << 20

// Caller is who makes a request: a user of the machine.
type Caller struct {
	User     string
	UID, GID uint32
}

type callerKey struct{}

// WithCaller returns ctx carrying c (set per connection by the listener).
func WithCaller(ctx context.Context, c Caller) context.Context {
	return context.WithValue(ctx, callerKey{}, c)
}

func callerOf(ctx context.Context) (Caller, bool) {
	c, ok := ctx.Value(callerKey{}).(Caller)
	return c, ok
}

// Handler serves the API over a server loop.
type Handler struct {
	// Reconfig, when set, reads and checks the configuration file again
	// and returns its text (POST /v1/reconfig); nil: nothing to reload.
	Reconfig func() (string, error)
	// Tokens, when set, issues tokens for TCP clients (POST /v1/tokens).
	Tokens *auth.Issuer
	// Private: a user sees only their own jobs (administrators all).
	Private bool
	// Members, when set, changes the voters of a replicated control
	// plane (POST /v1/members/join and /remove, administrators); nil: a
	// single server, 409.
	Members MemberFunc

	loop *server.Loop
	// do is how submit asks the loop for its change: loop.Do (tests time
	// the loop's work through it).
	do     func(ctx context.Context, make func(st *state.State, now int64) ([]event.Event, error)) ([]event.Event, error)
	log    EventReader
	admins []string
	mux    *http.ServeMux
}

// EventReader reads one event of the log by index (the store).
type EventReader interface {
	Event(i uint64) (event.Event, error)
}

// NewHandler returns the API over loop, reading job histories from log;
// admins (and root) may act on every job and host. A job submitted
// without a queue goes to the configuration's first queue.
func NewHandler(loop *server.Loop, log EventReader, admins []string) *Handler {
	h := &Handler{loop: loop, do: loop.Do, log: log, admins: admins, mux: http.NewServeMux()}
	h.mux.HandleFunc("POST /v1/jobs", h.submit)
	h.mux.HandleFunc("GET /v1/jobs", h.jobs)
	h.mux.HandleFunc("POST /v1/jobs/{id}/kill", h.kill)
	h.mux.HandleFunc("GET /v1/jobs/{id}/history", h.history)
	h.mux.HandleFunc("GET /v1/jobs/{id}/why", h.why)
	h.mux.HandleFunc("GET /v1/events", h.events)
	h.mux.HandleFunc("GET /v1/hosts", h.hosts)
	h.mux.HandleFunc("POST /v1/hosts/{name}/close", h.hostStatus(event.HostClosed))
	h.mux.HandleFunc("POST /v1/hosts/{name}/open", h.hostStatus(event.HostOpened))
	h.mux.HandleFunc("GET /v1/queues", h.queues)
	h.mux.HandleFunc("POST /v1/reconfig", h.reconfig)
	h.mux.HandleFunc("GET /v1/limits", h.limits)
	h.mux.HandleFunc("POST /v1/tokens", h.token)
	h.mux.HandleFunc("POST /v1/members/join", h.changeMember(true))
	h.mux.HandleFunc("POST /v1/members/remove", h.changeMember(false))
	h.mux.HandleFunc("/", h.noRoute)
	return h
}

// noRoute answers a request no route takes, in JSON as every error: 405
// with the methods the path takes (Allow), or 404.
func (h *Handler) noRoute(w http.ResponseWriter, r *http.Request) {
	var allow []string
	for _, m := range []string{http.MethodGet, http.MethodPost} {
		if m == r.Method {
			continue
		}
		probe := r.Clone(r.Context())
		probe.Method = m
		if _, pattern := h.mux.Handler(probe); pattern != "/" && pattern != "" {
			allow = append(allow, m)
		}
	}
	if len(allow) > 0 {
		w.Header().Set("Allow", strings.Join(allow, ", "))
		fail(w, &Error{Status: http.StatusMethodNotAllowed, Msg: fmt.Sprintf("%s %s: the path takes %s", r.Method, r.URL.Path, strings.Join(allow, ", "))})
		return
	}
	fail(w, &Error{Status: http.StatusNotFound, Msg: fmt.Sprintf("no route %s %s (docs/api.md)", r.Method, r.URL.Path)})
}

// ServeHTTP implements http.Handler: every request needs an identity.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if _, ok := callerOf(r.Context()); !ok {
		fail(w, &Error{Status: http.StatusUnauthorized, Msg: "no identity: connect through the server's socket"})
		return
	}
	h.mux.ServeHTTP(w, r)
}

// Error is an API error: the HTTP status, the message and, for a request
// refused for one of its fields, the field's path.
type Error struct {
	Status int    `json:"-"`
	Msg    string `json:"error"`
	Field  string `json:"field,omitempty"`
}

// Error implements error: the field's path, if any, then the message.
func (e *Error) Error() string {
	if e.Field != "" {
		return e.Field + ": " + e.Msg
	}
	return e.Msg
}

func fail(w http.ResponseWriter, err error) {
	var e *Error
	if !errors.As(err, &e) {
		e = &Error{Status: http.StatusBadRequest, Msg: err.Error()}
		if errors.Is(err, server.ErrStopped) {
			e.Status = http.StatusServiceUnavailable
		}
	}
	reply(w, e.Status, e)
}

func reply(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// decode reads the body strictly into v: one JSON value, no unknown field,
// at most MaxBody bytes.
func decode(w http.ResponseWriter, r *http.Request, v any) error {
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, MaxBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return &Error{Status: http.StatusRequestEntityTooLarge, Msg: fmt.Sprintf("the body is over %d bytes", MaxBody)}
		}
		return &Error{Status: http.StatusBadRequest, Msg: "body: " + err.Error()}
	}
	if _, err := dec.Token(); err != io.EOF {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return &Error{Status: http.StatusRequestEntityTooLarge, Msg: fmt.Sprintf("the body is over %d bytes", MaxBody)}
		}
		return &Error{Status: http.StatusBadRequest, Msg: "body: more than one JSON value"}
	}
	return nil
}

// SubmitRequest is the body of POST /v1/jobs.
type SubmitRequest struct {
	Jobs []JobRequest `json:"jobs"`
}

// JobRequest is one job to submit: event.Submit without the job ID and the
// submitter, which the server fills in.
type JobRequest struct {
	Name       string   `json:"name,omitempty"`
	Queue      string   `json:"queue,omitempty"`
	Project    string   `json:"project,omitempty"`
	TasksMin   int      `json:"tasks_min"`
	TasksMax   int      `json:"tasks_max"`
	ResReq     string   `json:"resreq,omitempty"`
	Estimate   int64    `json:"estimate,omitempty"`
	Command    []string `json:"command,omitempty"`
	Script     string   `json:"script,omitempty"`
	Cwd        string   `json:"cwd"`
	Env        []string `json:"env,omitempty"`
	Stdout     string   `json:"stdout,omitempty"`
	Stderr     string   `json:"stderr,omitempty"`
	Rerunnable bool     `json:"rerunnable,omitempty"`
	// Array makes the request a job array: its index list and cap,
	// "1-10:2%3" (docs/arrays.md).
	Array string `json:"array,omitempty"`
	// Depend is a dependency expression, LSF's syntax
	// (docs/dependencies.md).
	Depend string `json:"depend,omitempty"`
	// Exclusive: the job runs alone on its hosts (docs/exclusive.md).
	Exclusive bool `json:"exclusive,omitempty"`
	// GPU is a GPU requirement, LSF's bsub -gpu syntax (docs/gpus.md).
	GPU string `json:"gpu,omitempty"`
}

// submitOf returns the job as the event stores it, without what the
// server fills in (Job, User, UID, GID; and Queue when it is empty).
func (j *JobRequest) submitOf() event.Submit {
	return event.Submit{Array: j.Array, Depend: j.Depend, Exclusive: j.Exclusive, GPU: j.GPU, Name: j.Name,
		Queue: j.Queue, Project: j.Project, TasksMin: j.TasksMin, TasksMax: j.TasksMax, ResReq: j.ResReq,
		Estimate: j.Estimate, Command: j.Command, Script: j.Script, Cwd: j.Cwd, Env: j.Env,
		Stdout: j.Stdout, Stderr: j.Stderr, Rerunnable: j.Rerunnable}
}

// checkJobs returns the events of the jobs of a request, without their IDs
// and submitter, and how many jobs each stands for; or why the request
// is refused whatever the cluster holds (a 400 naming the field:
// submit.CheckJobs, the rules `xce submit` follows, docs/api.md). Every
// field is parsed here, before the request enters the loop, whose own
// checks then parse again only what is within these limits; nothing here
// waits for the loop.
func checkJobs(jobs []JobRequest) ([]event.Submit, []int64, *Error) {
	subs := make([]event.Submit, len(jobs))
	for i := range jobs {
		subs[i] = jobs[i].submitOf()
	}
	counts, err := submit.CheckJobs(subs)
	if err != nil {
		e := &Error{Status: http.StatusBadRequest, Msg: err.Error(), Field: "jobs"}
		var fe *submit.FieldError
		if errors.As(err, &fe) {
			e.Msg = fe.Text()
			switch {
			case fe.Job >= 0 && fe.Field != "":
				e.Field = fmt.Sprintf("jobs[%d].%s", fe.Job, fe.Field)
			case fe.Job >= 0:
				e.Field = fmt.Sprintf("jobs[%d]", fe.Job)
			}
		}
		return nil, nil, e
	}
	return subs, counts, nil
}

// SubmitReply is the answer to POST /v1/jobs.
type SubmitReply struct {
	IDs    []int64  `json:"ids"`
	Queues []string `json:"queues"`
}

func (h *Handler) submit(w http.ResponseWriter, r *http.Request) {
	c, _ := callerOf(r.Context())
	var req SubmitRequest
	if err := decode(w, r, &req); err != nil {
		fail(w, err)
		return
	}
	subs, counts, bad := checkJobs(req.Jobs)
	if bad != nil {
		fail(w, bad)
		return
	}
	var first int64 // the ID the loop gave the first job (its last try)
	evs, err := h.do(r.Context(), func(st *state.State, _ int64) ([]event.Event, error) {
		out := make([]event.Event, len(subs))
		next := st.NextJob()
		first = next
		for i := range subs {
			sub := subs[i] // a copy: a refused request may be made again
			sub.Job, sub.User, sub.UID, sub.GID = next, c.User, c.UID, c.GID
			out[i] = event.Event{Type: event.JobSubmitted, Submit: &sub}
			next += counts[i]
		}
		return out, nil
	})
	if err != nil {
		fail(w, refusedJob(err, first, counts))
		return
	}
	var rep SubmitReply
	for _, e := range evs {
		rep.IDs = append(rep.IDs, e.Submit.Job)
		rep.Queues = append(rep.Queues, e.Submit.Queue)
	}
	reply(w, http.StatusOK, rep)
}

// JobInfo is one job as GET /v1/jobs shows it.
type JobInfo struct {
	// ID names the job: its own ID, or an array element's array's ID,
	// with ArrayIndex its index; Job is always the job's own ID (unique).
	ID         int64          `json:"id"`
	ArrayIndex int64          `json:"array_index,omitempty"`
	Job        int64          `json:"job"`
	Name       string         `json:"name"`
	User       string         `json:"user"`
	Queue      string         `json:"queue"`
	State      string         `json:"state"`
	Hosts      map[string]int `json:"hosts"`
	// GPUs are the device indices the job holds on each host (running,
	// or its last attempt's); absent for a job holding none
	// (docs/gpus.md).
	GPUs       map[string][]int `json:"gpus,omitempty"`
	Reason     string           `json:"reason"`
	Detail     string           `json:"detail"`
	ExitCode   int              `json:"exit_code"`
	Signal     string           `json:"signal"`
	EndReason  string           `json:"end_reason"`
	SubmitTime int64            `json:"submit_time"`
	StartTime  int64            `json:"start_time"`
	EndTime    int64            `json:"end_time"`
	TasksMin   int              `json:"tasks_min"`
	TasksMax   int              `json:"tasks_max"`
	ResReq     string           `json:"resreq"`
	// GPU is the job's -gpu as submitted, "" for none.
	GPU     string   `json:"gpu,omitempty"`
	Command []string `json:"command"`
	Stdout  string   `json:"stdout"`
	PID     int      `json:"pid"`
	// HostReasons: for a pending job, why each host could not take it in
	// the last cycle that tried, with how many hosts (most first).
	HostReasons []live.HostReason `json:"host_reasons,omitempty"`
	// ForecastStart and ForecastHosts, asked for with forecast=1: when
	// (Unix seconds; null when it never starts in the forecast) and where a
	// pending job is predicted to start (docs/forecast.md).
	ForecastStart Forecast       `json:"forecast_start,omitzero"`
	ForecastHosts map[string]int `json:"forecast_hosts,omitempty"`
}

// Forecast is a predicted start time: absent from JSON when no forecast
// was asked for (IsZero), null when the job never starts in it, else Unix
// seconds.
type Forecast struct {
	Asked bool
	Start *int64
}

// IsZero reports whether no forecast was asked for.
func (f Forecast) IsZero() bool { return !f.Asked }

// MarshalJSON writes the start, or null.
func (f Forecast) MarshalJSON() ([]byte, error) { return json.Marshal(f.Start) }

// UnmarshalJSON reads a start or null.
func (f *Forecast) UnmarshalJSON(b []byte) error {
	f.Asked = true
	return json.Unmarshal(b, &f.Start)
}

// JobsReply is the answer to GET /v1/jobs.
type JobsReply struct {
	Jobs []JobInfo `json:"jobs"`
}

func info(j *state.Job) JobInfo {
	hosts := map[string]int{}
	for _, h := range j.Hosts {
		hosts[h.Host] += h.Slots
	}
	sec := func(ns int64) int64 { return ns / 1e9 }
	id, index := displayID(j)
	return JobInfo{ID: id, ArrayIndex: index, Job: j.Job, Name: j.Name, User: j.User, Queue: j.Queue, State: string(j.State), Hosts: hosts, GPUs: gpusOf(j.Hosts),
		Reason: j.Reason, Detail: j.Detail, ExitCode: j.ExitCode, Signal: j.Signal, EndReason: j.EndReason,
		SubmitTime: sec(j.SubmitTime), StartTime: sec(j.StartTime), EndTime: sec(j.EndTime),
		TasksMin: j.TasksMin, TasksMax: j.TasksMax, ResReq: j.ResReq, GPU: j.Submit.GPU, Command: j.Command, Stdout: j.Stdout, PID: j.PID}
}

func (h *Handler) jobs(w http.ResponseWriter, r *http.Request) {
	c, _ := callerOf(r.Context())
	q := r.URL.Query()
	user := q.Get("user")
	if user == "" {
		user = c.User
	}
	private := h.Private && !h.admin(c)
	if private && user != c.User {
		fail(w, &Error{Status: http.StatusForbidden, Msg: "jobs are private here: you may see only your own"})
		return
	}
	all := q.Get("all") == "1"
	forecast := q.Get("forecast") == "1"
	var sels []jobarray.Ref
	for _, s := range q["id"] {
		sel, err := jobarray.ParseRef(s)
		if err != nil {
			fail(w, &Error{Status: http.StatusBadRequest, Msg: err.Error(), Field: "id"})
			return
		}
		sels = append(sels, sel)
	}
	rep := JobsReply{Jobs: []JobInfo{}}
	var missing string
	var snap *cluster.Cluster
	var reserved map[cluster.JobID]live.Reserved
	var snapErr error
	now := time.Now().Unix()
	h.loop.View(func(k *live.Core) {
		if forecast {
			snap, reserved, snapErr = k.Snapshot(now)
		}
		add := func(j *state.Job) {
			ji := info(j)
			ji.HostReasons = k.HostReasons(j.Job)
			rep.Jobs = append(rep.Jobs, ji)
		}
		if sels != nil {
			for _, sel := range sels {
				js := k.State.Select(sel.ID, sel.Index)
				if len(js) == 0 || private && js[0].User != c.User {
					missing = sel.String() // another user's private job is not there
					return
				}
				for _, j := range js {
					add(j)
				}
			}
			return
		}
		for _, j := range k.State.Jobs {
			if (user == "all" || j.User == user) && (all || j.State == state.Pend || j.State == state.Run || j.State == state.Susp) {
				add(j)
			}
		}
	})
	if missing != "" {
		fail(w, &Error{Status: http.StatusNotFound, Msg: fmt.Sprintf("job %s does not exist", missing)})
		return
	}
	if forecast {
		if err := addForecasts(r.Context(), rep.Jobs, snap, reserved, snapErr); err != nil {
			fail(w, &Error{Status: http.StatusInternalServerError, Msg: "forecast: " + err.Error()})
			return
		}
	}
	reply(w, http.StatusOK, rep)
}

// addForecasts fills in the forecast of each pending job of jobs, from a
// simulation of snap (outside the loop's lock: the live state is not
// touched, nor held while the forecast runs).
func addForecasts(ctx context.Context, jobs []JobInfo, snap *cluster.Cluster, reserved map[cluster.JobID]live.Reserved, snapErr error) error {
	if snapErr != nil {
		return snapErr
	}
	if !slices.ContainsFunc(jobs, func(j JobInfo) bool { return j.State == string(state.Pend) }) {
		return nil
	}
	fc, err := sim.Forecasts(ctx, snap, reserved, plugins.NewInTreeRegistry())
	if err != nil {
		return err
	}
	for i := range jobs {
		j := &jobs[i]
		if j.State != string(state.Pend) {
			continue
		}
		var f *sim.Forecast // nil: it never starts
		if x, ok := fc[cluster.JobID(j.Job)]; ok {
			f = &x
		}
		j.setForecast(f, snap)
	}
	return nil
}

// setForecast gives j forecast f (nil: it never starts), whose hosts are
// those of snap.
func (j *JobInfo) setForecast(f *sim.Forecast, snap *cluster.Cluster) {
	j.ForecastStart = Forecast{Asked: true}
	if f == nil {
		return
	}
	start := f.Start
	j.ForecastStart.Start = &start
	j.ForecastHosts = map[string]int{}
	for _, h := range f.Hosts {
		j.ForecastHosts[snap.Hosts[h.Host].Name] += h.Slots
	}
}

// admin reports whether c is root or an administrator of the
// configuration in force (a reloaded one's at once: server.Loop.Server),
// else of the list NewHandler was given.
func (h *Handler) admin(c Caller) bool {
	admins := h.admins
	if s := h.loop.Server(); s != nil {
		admins = s.Admins
	}
	return c.UID == 0 || slices.Contains(admins, c.User)
}

func (h *Handler) kill(w http.ResponseWriter, r *http.Request) {
	c, _ := callerOf(r.Context())
	sel, ok := pathSelector(w, r)
	if !ok {
		return
	}
	_, err := h.loop.Do(r.Context(), func(st *state.State, _ int64) ([]event.Event, error) {
		js := st.Select(sel.ID, sel.Index)
		if len(js) == 0 {
			return nil, &Error{Status: http.StatusNotFound, Msg: fmt.Sprintf("job %s does not exist", sel)}
		}
		if j := js[0]; j.User != c.User && !h.admin(c) {
			return nil, &Error{Status: http.StatusForbidden, Msg: fmt.Sprintf("job %s is %s's: only its owner or an administrator may kill it", sel, j.User)}
		}
		var out []event.Event
		for _, j := range js {
			if j.State != state.Done && j.State != state.Exit {
				out = append(out, event.Event{Type: event.JobKilled, Killed: &event.Killed{Job: j.Job, By: c.User}})
			}
		}
		if len(out) == 0 {
			what := "has already ended (" + string(js[0].State) + ")"
			if len(js) > 1 {
				what = "has ended: every element did"
			}
			return nil, &Error{Status: http.StatusConflict, Msg: fmt.Sprintf("job %s %s", sel, what)}
		}
		return out, nil
	})
	if err != nil {
		fail(w, err)
		return
	}
	reply(w, http.StatusOK, map[string]string{"id": sel.String()})
}

// HostInfo is one host as GET /v1/hosts shows it.
type HostInfo struct {
	Name   string `json:"name"`
	Status string `json:"status"`
	Slots  int    `json:"slots"`
	Used   int    `json:"used"`
}

// HostsReply is the answer to GET /v1/hosts.
type HostsReply struct {
	Hosts []HostInfo `json:"hosts"`
}

func (h *Handler) hosts(w http.ResponseWriter, r *http.Request) {
	var rep HostsReply
	h.loop.View(func(k *live.Core) {
		used := map[string]int{}
		for _, j := range k.State.Jobs {
			if j.State == state.Run {
				for _, a := range j.Hosts {
					used[a.Host] += a.Slots
				}
			}
		}
		for _, host := range k.Cluster.Hosts {
			status := "unavail"
			if sh := k.State.Host(host.Name); sh != nil {
				status = sh.Status()
			}
			rep.Hosts = append(rep.Hosts, HostInfo{Name: host.Name, Status: status, Slots: host.Slots, Used: used[host.Name]})
		}
	})
	reply(w, http.StatusOK, rep)
}
