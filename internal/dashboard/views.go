package dashboard

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/xce-sched/xce/framework"
	"github.com/xce-sched/xce/internal/api"
	"github.com/xce-sched/xce/internal/event"
	"github.com/xce-sched/xce/internal/live"
	"github.com/xce-sched/xce/internal/state"
)

// JobRow is one job of the jobs view (GET /ui/v1/jobs). ID and
// ArrayIndex name it as the API does (an array element by its array's
// ID and its index); Job is its own unique ID. Hosts says where it runs
// (or ran last): its first host, and "+N" for N more. Times are Unix
// seconds, 0 for not yet.
type JobRow struct {
	Job        int64  `json:"job"`
	ID         int64  `json:"id"`
	ArrayIndex int64  `json:"array_index,omitempty"`
	Name       string `json:"name"`
	User       string `json:"user"`
	Queue      string `json:"queue"`
	State      string `json:"state"`
	Reason     string `json:"reason,omitempty"`
	Detail     string `json:"detail,omitempty"`
	Slots      int    `json:"slots"`
	Hosts      string `json:"hosts,omitempty"`
	Submit     int64  `json:"submit"`
	Start      int64  `json:"start"`
	End        int64  `json:"end"`
	ExitCode   int    `json:"exit_code"`
}

// JobsPage is the answer to GET /ui/v1/jobs: the page's jobs, how many
// pass the filters in all, the state's index, and the users and queues
// the filters offer (users only when the caller may see every job).
type JobsPage struct {
	Index  uint64   `json:"index"`
	Total  int      `json:"total"`
	Offset int      `json:"offset"`
	Limit  int      `json:"limit"`
	Jobs   []JobRow `json:"jobs"`
	Users  []string `json:"users,omitempty"`
	Queues []string `json:"queues"`
}

// ParseJobsQuery reads a jobs view query: user, queue, state, host, sort
// (a key, "-key" for descending; default "-id", the newest first),
// offset (default 0) and limit (default DefaultLimit, at most MaxLimit).
func ParseJobsQuery(v map[string][]string) (JobsQuery, error) {
	get := func(k string) string {
		if s := v[k]; len(s) > 0 {
			return s[0]
		}
		return ""
	}
	q := JobsQuery{User: get("user"), Queue: get("queue"), State: get("state"), Host: get("host"), Sort: "id", Desc: true, Limit: DefaultLimit}
	if q.User == "all" {
		q.User = ""
	}
	if s := get("sort"); s != "" {
		q.Sort, q.Desc = strings.TrimPrefix(s, "-"), strings.HasPrefix(s, "-")
		if _, ok := sortKeys[q.Sort]; !ok {
			return q, fmt.Errorf("sort %q: want one of id, name, user, queue, state, reason, slots, submit, start, end (- for descending)", s)
		}
	}
	switch q.State {
	case "", "active", "ended", string(state.Pend), string(state.Run), string(state.Susp), string(state.Done), string(state.Exit):
	default:
		return q, fmt.Errorf("state %q: want PEND, RUN, SUSP, DONE, EXIT, active or ended", q.State)
	}
	for _, p := range []struct {
		key string
		to  *int
		max int
	}{{"offset", &q.Offset, 1 << 30}, {"limit", &q.Limit, MaxLimit}} {
		if s := get(p.key); s != "" {
			n, err := strconv.Atoi(s)
			if err != nil || n < 0 {
				return q, fmt.Errorf("%s %q: want a count, 0 or more", p.key, s)
			}
			*p.to = min(n, p.max)
		}
	}
	return q, nil
}

func (h *Handler) jobs(w http.ResponseWriter, r *http.Request, c api.Caller) {
	q, err := ParseJobsQuery(r.URL.Query())
	if err != nil {
		fail(w, http.StatusBadRequest, err.Error())
		return
	}
	all := !h.o.API.Private || h.o.API.Admin(c)
	if !all {
		q.User = c.User // private jobs: one's own only
	}
	p := JobsPage{Offset: q.Offset, Limit: q.Limit}
	var rows []row
	h.read(func(ix *index) {
		rows, p.Total = ix.page(q)
		p.Index, p.Queues = ix.at, slices.Clone(ix.queues)
		if all {
			p.Users = ix.userList()
		}
	})
	p.Jobs = make([]JobRow, 0, len(rows))
	for i := range rows {
		p.Jobs = append(p.Jobs, jobRow(&rows[i]))
	}
	reply(w, p)
}

func jobRow(r *row) JobRow {
	jr := JobRow{Job: r.Job, ID: r.ID, ArrayIndex: r.Index, Name: r.Name, User: r.User, Queue: r.Queue, State: r.State,
		Reason: r.Reason, Detail: r.Detail, Slots: r.Slots, Submit: r.Submit, Start: r.Start, End: r.End, ExitCode: r.ExitCode}
	if len(r.Hosts) > 0 {
		jr.Hosts = r.Hosts[0].Host
		if n := len(r.Hosts) - 1; n > 0 {
			jr.Hosts += fmt.Sprintf(" +%d", n)
		}
	}
	return jr
}

// JobPage is the answer to GET /ui/v1/jobs/{job} (the job's own ID): the
// job as the API shows it (with its host reasons), its request, what
// its current or last attempt holds, its reservation, and whether the
// caller may kill it (its owner or an administrator, and not ended).
// The page reads its history, forecast and counterfactuals from the
// API (GET /v1/jobs/{id}/history, /why).
type JobPage struct {
	Job  api.JobInfo `json:"job"`
	Name string      `json:"name"` // as the API's routes take it: "12", or "12[3]"
	// ReasonText is a pending or suspended job's main reason in words
	// (docs/pending-reasons.md), its detail put in.
	ReasonText string             `json:"reason_text,omitempty"`
	Request    Request            `json:"request"`
	Attempt    int                `json:"attempt"`
	Alloc      []event.HostAlloc  `json:"alloc"`
	Shared     map[string]float64 `json:"shared,omitempty"`
	Reserved   *Reservation       `json:"reserved,omitempty"`
	KilledBy   string             `json:"killed_by,omitempty"`
	CanKill    bool               `json:"can_kill"`
}

// Request is what a job asked for (xce submit's options). The
// environment is not shown, only how many entries it has; a script is
// cut at 4 KiB.
type Request struct {
	Queue      string   `json:"queue"`
	Project    string   `json:"project,omitempty"`
	TasksMin   int      `json:"tasks_min"`
	TasksMax   int      `json:"tasks_max"`
	ResReq     string   `json:"resreq,omitempty"`
	GPU        string   `json:"gpu,omitempty"`
	Estimate   int64    `json:"estimate,omitempty"`
	Command    []string `json:"command,omitempty"`
	Script     string   `json:"script,omitempty"`
	Cwd        string   `json:"cwd"`
	Stdout     string   `json:"stdout,omitempty"`
	Stderr     string   `json:"stderr,omitempty"`
	Env        int      `json:"env"`
	Rerunnable bool     `json:"rerunnable,omitempty"`
	Exclusive  bool     `json:"exclusive,omitempty"`
	Depend     string   `json:"depend,omitempty"`
	Array      string   `json:"array,omitempty"`
}

// Reservation is a pending job's backfill reservation: its planned
// start (Unix seconds) and hosts.
type Reservation struct {
	Start int64          `json:"start"`
	Hosts map[string]int `json:"hosts"`
}

// maxScript bounds the script a job page shows, in bytes.
const maxScript = 4 << 10

func (h *Handler) job(w http.ResponseWriter, r *http.Request, c api.Caller) {
	id, err := strconv.ParseInt(r.PathValue("job"), 10, 64)
	if err != nil || id < 1 {
		fail(w, http.StatusBadRequest, fmt.Sprintf("job %q: want a job's own ID, 1 or more", r.PathValue("job")))
		return
	}
	private := h.o.API.Private && !h.o.API.Admin(c)
	var p *JobPage
	h.o.View(func(k *live.Core) {
		j := k.State.Job(id)
		if j == nil || private && j.User != c.User {
			return
		}
		p = jobPage(k, j)
	})
	if p == nil {
		fail(w, http.StatusNotFound, fmt.Sprintf("job %d does not exist", id))
		return
	}
	p.CanKill = (p.Job.User == c.User || h.o.API.Admin(c)) && (p.Job.State == string(state.Pend) || p.Job.State == string(state.Run) || p.Job.State == string(state.Susp))
	reply(w, p)
}

// jobPage copies what the job page shows of j. The caller holds the
// loop's read lock.
func jobPage(k *live.Core, j *state.Job) *JobPage {
	s := &j.Submit
	p := &JobPage{Job: api.InfoOf(j), Attempt: j.Attempt, Alloc: slices.Clone(j.Hosts), KilledBy: j.KilledBy,
		Request: Request{Queue: s.Queue, Project: s.Project, TasksMin: s.TasksMin, TasksMax: s.TasksMax, ResReq: s.ResReq, GPU: s.GPU,
			Estimate: s.Estimate, Command: slices.Clone(s.Command), Script: s.Script, Cwd: s.Cwd, Stdout: s.Stdout, Stderr: s.Stderr,
			Env: len(s.Env), Rerunnable: s.Rerunnable, Exclusive: s.Exclusive, Depend: s.Depend, Array: s.Array}}
	if len(p.Request.Script) > maxScript {
		p.Request.Script = p.Request.Script[:maxScript] + "\n… (cut at 4 KiB)"
	}
	if len(j.Shared) > 0 {
		p.Shared = make(map[string]float64, len(j.Shared))
		for k, v := range j.Shared {
			p.Shared[k] = v
		}
	}
	p.Job.HostReasons = k.HostReasons(j.Job)
	p.ReasonText = reasonText(j.Reason, j.Detail)
	p.Name = strconv.FormatInt(p.Job.ID, 10)
	if p.Job.ArrayIndex != 0 {
		p.Name += "[" + strconv.FormatInt(p.Job.ArrayIndex, 10) + "]"
	}
	if rs := j.Reserved; rs != nil && j.State == state.Pend {
		p.Reserved = &Reservation{Start: rs.Start, Hosts: map[string]int{}}
		for _, a := range rs.Hosts {
			p.Reserved.Hosts[a.Host] += a.Slots
		}
	}
	return p
}

// HostsView is the answer to GET /ui/v1/hosts: every host of the
// configuration, in its order, as parallel arrays (compact for 10,000
// hosts): name, job slots, slots used by running jobs, and status, one
// letter each in Status: o (ok), c (closed), u (unavail).
type HostsView struct {
	Index  uint64   `json:"index"`
	Names  []string `json:"names"`
	Slots  []int    `json:"slots"`
	Used   []int    `json:"used"`
	Status string   `json:"status"`
}

func (h *Handler) hosts(w http.ResponseWriter, _ *http.Request, _ api.Caller) {
	var v HostsView
	h.read(func(ix *index) {
		v = HostsView{Index: ix.at, Names: make([]string, len(ix.hosts)), Slots: make([]int, len(ix.hosts)), Used: make([]int, len(ix.hosts))}
		var st strings.Builder
		for i, hr := range ix.hosts {
			v.Names[i], v.Slots[i], v.Used[i] = hr.Name, hr.Slots, hr.Used
			st.WriteByte(hr.Status[0])
		}
		v.Status = st.String()
	})
	reply(w, v)
}

// Summary is the answer to GET /ui/v1/summary: the cluster at a glance,
// for the header of every view: jobs by state, hosts by status, job
// slots used and in all.
type Summary struct {
	Index uint64         `json:"index"`
	Jobs  map[string]int `json:"jobs"`
	Hosts map[string]int `json:"hosts"`
	Used  int            `json:"used"`
	Slots int            `json:"slots"`
}

func (h *Handler) summary(w http.ResponseWriter, _ *http.Request, _ api.Caller) {
	s := Summary{Jobs: map[string]int{}, Hosts: map[string]int{"ok": 0, "closed": 0, "unavail": 0}}
	h.read(func(ix *index) {
		s.Index, s.Used, s.Slots = ix.at, ix.used, ix.slots
		for _, st := range []state.JobState{state.Pend, state.Run, state.Susp, state.Done, state.Exit} {
			s.Jobs[string(st)] = ix.counts[string(st)]
		}
		for _, hr := range ix.hosts {
			s.Hosts[hr.Status]++
		}
	})
	reply(w, s)
}

// reasonText returns the text of the reason whose code is code, its
// detail put in; "" for no reason or an unknown code.
func reasonText(code, detail string) string {
	if code == "" {
		return ""
	}
	for r := framework.Reason(1); r.String() != "Unknown"; r++ {
		if r.String() == code {
			return r.Text(detail)
		}
	}
	return ""
}
