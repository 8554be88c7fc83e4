// Package state is the live scheduler's state as a fold of its event log:
// State.Apply(event) is the one function that builds it, at start-up
// (snapshot + the log after it), for `xce history`, for parity with the
// simulator and, later, as the raft FSM. It is deterministic: the same
// events give the same state, whatever the machine or the time.
//
// Apply checks an event against the state before changing anything, so a
// log that breaks an invariant (a job started twice, a finish for an
// attempt that is not the current one, an index out of order) stops the
// fold with an error and leaves the state as it was. The server runs the
// same check (State.Check) before it appends, so it never writes such an
// event: a repeated start or finish from an agent is dropped there.
package state

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/xce-sched/xce/internal/event"
	"github.com/xce-sched/xce/jobarray"
)

// JobState is where a job is in its life, with LSF's names (bjobs).
type JobState string

// The job states.
const (
	Pend JobState = "PEND" // waiting to be placed
	Run  JobState = "RUN"  // placed by a cycle (its agent starts it)
	Done JobState = "DONE" // its command exited with 0
	Exit JobState = "EXIT" // it exited non-zero, was signalled or killed, or its host was lost
	Susp JobState = "SUSP" // suspended by preemption where it runs (docs/preemption.md)
)

// Job is one job: the request as submitted and what happened to it. Times
// are Unix nanoseconds, from the events' At; 0 when not yet.
type Job struct {
	event.Submit
	State   JobState `json:"state"`
	Attempt int      `json:"attempt"` // starts so far (a requeue makes one more)
	// Hosts and Shared are what the current (or last) attempt holds.
	Hosts  []event.HostAlloc  `json:"hosts,omitempty"`
	Shared map[string]float64 `json:"shared,omitempty"`
	// Host and PID: where the agent runs the command (the first host),
	// once it reported the start.
	Host string `json:"host,omitempty"`
	PID  int    `json:"pid,omitempty"`
	// Reason and Detail: the main pending reason from the last cycle.
	Reason   string             `json:"reason,omitempty"`
	Detail   string             `json:"detail,omitempty"`
	Reserved *event.Reservation `json:"reserved,omitempty"`
	// Held is what a suspended job keeps of Hosts (its mem), and
	// SuspendTime when it was suspended; Suspended sums, in nanoseconds,
	// the times it was suspended before. Requeuing: preemption requeued
	// the job and its attempt is being killed; no cycle starts it before
	// the attempt's finish (which leaves it pending) is in the log.
	Held        []event.HostAlloc `json:"held,omitempty"`
	SuspendTime int64             `json:"suspend_time,omitempty"`
	Suspended   int64             `json:"suspended,omitempty"`
	Requeuing   bool              `json:"requeuing,omitempty"`

	SubmitTime int64 `json:"submit_time"`
	StartTime  int64 `json:"start_time,omitempty"`
	EndTime    int64 `json:"end_time,omitempty"`
	ExitCode   int   `json:"exit_code,omitempty"`
	// Signal names the signal that ended the job; EndReason says why the
	// server ended it ("killed", "host lost"), empty when it ended itself.
	Signal    string `json:"signal,omitempty"`
	EndReason string `json:"end_reason,omitempty"`
	KilledBy  string `json:"killed_by,omitempty"`
	// Events are the indexes of the events about this job, in order.
	Events []uint64 `json:"events"`
}

// Host is a host's state: Up while its agent is registered and
// heartbeating, Closed while an administrator has it closed.
type Host struct {
	Name   string `json:"name"`
	Up     bool   `json:"up"`
	Closed bool   `json:"closed"`
	Reason string `json:"reason,omitempty"` // why it was lost or closed
}

// Status is the host's status as `xce hosts` shows it: "unavail" when its
// agent is not up, else "closed" or "ok".
func (h *Host) Status() string {
	switch {
	case !h.Up:
		return "unavail"
	case h.Closed:
		return "closed"
	}
	return "ok"
}

// State is the fold of an event log up to Index.
type State struct {
	Index  uint64  `json:"index"`  // the last event applied; 0 for none
	Config string  `json:"config"` // the configuration text in force
	Cycles int64   `json:"cycles"` // cycles decided
	Jobs   []*Job  `json:"jobs"`   // Jobs[i] has ID i+1
	Hosts  []*Host `json:"hosts"`  // by name
	// Keys are a replicated control plane's shared secrets (the last
	// event.ClusterKeys), nil for none.
	Keys *event.Keys `json:"keys,omitempty"`
	// APIs maps the raft address of each member of a replicated control
	// plane that has led to the address of its TCP listener (from its
	// server.started events); nil for a single server.
	APIs map[string]string `json:"apis,omitempty"`
}

// New returns the state of an empty log.
func New() *State { return &State{} }

// Job returns job id, or nil.
func (s *State) Job(id event.JobID) *Job {
	if id < 1 || id > int64(len(s.Jobs)) {
		return nil
	}
	return s.Jobs[id-1]
}

// Host returns the host named name, or nil.
func (s *State) Host(name string) *Host {
	i, ok := slices.BinarySearchFunc(s.Hosts, name, func(h *Host, n string) int { return strings.Compare(h.Name, n) })
	if !ok {
		return nil
	}
	return s.Hosts[i]
}

// NextJob is the ID the next submitted job gets.
func (s *State) NextJob() event.JobID { return int64(len(s.Jobs)) + 1 }

// Apply folds e into s. It checks e first (Check); on error s is
// unchanged.
func (s *State) Apply(e event.Event) error {
	if err := s.Check(e); err != nil {
		return err
	}
	s.Index = e.Index
	switch e.Type {
	case event.JobSubmitted:
		sub := *e.Submit
		if sub.Array == "" {
			s.Jobs = append(s.Jobs, &Job{Submit: sub, State: Pend, SubmitTime: e.At, Events: []uint64{e.Index}})
			break
		}
		spec, _ := jobarray.Parse(sub.Array, jobarray.MaxSize) // Check parsed it
		for k, index := range spec.Indices {
			el := sub
			el.Job, el.ArrayJob, el.ArrayIndex, el.ArrayLimit = sub.Job+int64(k), sub.Job, index, spec.Limit
			s.Jobs = append(s.Jobs, &Job{Submit: el, State: Pend, SubmitTime: e.At, Events: []uint64{e.Index}})
		}
	case event.CycleDecided:
		s.applyCycle(e)
	case event.JobStarted:
		j := s.Job(e.Started.Job)
		j.Host, j.PID = e.Started.Host, e.Started.PID
		j.Events = append(j.Events, e.Index)
	case event.JobFinished:
		f := e.Finished
		j := s.Job(f.Job)
		j.Events = append(j.Events, e.Index)
		if j.Requeuing {
			// The attempt preemption requeued is gone: the job may run.
			j.Requeuing, j.Host, j.PID, j.Hosts, j.Shared, j.StartTime = false, "", 0, nil, nil, 0
			return nil
		}
		j.ExitCode, j.Signal, j.EndReason = f.ExitCode, f.Signal, f.Reason
		j.Held = nil
		if f.Requeued {
			j.State, j.Host, j.PID, j.Hosts, j.Shared = Pend, "", 0, nil, nil
			j.StartTime = 0
			return nil
		}
		j.EndTime = e.At
		j.State = Exit
		if f.ExitCode == 0 && f.Signal == "" && f.Reason == "" {
			j.State = Done
		}
	case event.JobKilled:
		j := s.Job(e.Killed.Job)
		j.KilledBy = e.Killed.By
		j.Events = append(j.Events, e.Index)
		if j.State == Pend {
			j.State, j.EndTime, j.EndReason, j.Reserved = Exit, e.At, "killed", nil
			j.Reason, j.Detail = "", ""
			if j.Requeuing { // its killed run's finish, if it comes, is dropped
				j.Requeuing, j.Hosts, j.Shared, j.Host, j.PID = false, nil, nil, "", 0
			}
		}
	case event.HostRegistered, event.HostLost, event.HostClosed, event.HostOpened:
		h := s.host(e.Host.Name)
		switch e.Type {
		case event.HostRegistered:
			h.Up = true
		case event.HostLost:
			h.Up, h.Reason = false, e.Host.Reason
		case event.HostClosed:
			h.Closed, h.Reason = true, e.Host.Reason
		case event.HostOpened:
			h.Closed, h.Reason = false, ""
		}
	case event.ConfigReloaded:
		s.Config = e.Config.Text
	case event.ClusterKeys:
		k := *e.Keys
		s.Keys = &k
	case event.ServerStarted:
		if e.Server.Raft != "" {
			if s.APIs == nil {
				s.APIs = map[string]string{}
			}
			s.APIs[e.Server.Raft] = e.Server.API
		}
	}
	return nil
}

func (s *State) applyCycle(e event.Event) {
	c := e.Cycle
	s.Cycles = c.Number
	for _, id := range c.Resumed {
		j := s.Job(id)
		j.State, j.Held, j.Reason, j.Detail = Run, nil, "", ""
		j.Suspended += e.At - j.SuspendTime
		j.SuspendTime = 0
		j.Events = append(j.Events, e.Index)
	}
	for _, p := range c.Started {
		j := s.Job(p.Job)
		j.State, j.Attempt, j.Hosts, j.Shared = Run, p.Attempt, p.Hosts, p.Shared
		j.StartTime, j.Reason, j.Detail, j.Reserved = e.At, "", "", nil
		j.ExitCode, j.Signal, j.EndReason = 0, "", ""
		j.Events = append(j.Events, e.Index)
	}
	for _, p := range c.Pending {
		j := s.Job(p.Job)
		j.Reason, j.Detail, j.Reserved = p.Reason, p.Detail, nil
	}
	for i := range c.Reserved {
		r := c.Reserved[i]
		s.Job(r.Job).Reserved = &r
	}
	for _, p := range c.Preempted {
		j := s.Job(p.Job)
		if n := len(j.Events); n == 0 || j.Events[n-1] != e.Index { // resumed by the same cycle
			j.Events = append(j.Events, e.Index)
		}
		if p.Action == event.PreemptSuspend {
			j.State, j.Held, j.SuspendTime, j.Reason = Susp, p.Held, e.At, "Preempted"
			continue
		}
		j.State, j.Requeuing, j.Reason, j.Detail, j.Reserved = Pend, true, "Requeued", "", nil
		j.Held, j.Suspended, j.SuspendTime = nil, 0, 0
	}
}

// host returns the host named name, adding it (down, open) if new.
func (s *State) host(name string) *Host {
	i, ok := slices.BinarySearchFunc(s.Hosts, name, func(h *Host, n string) int { return strings.Compare(h.Name, n) })
	if !ok {
		s.Hosts = slices.Insert(s.Hosts, i, &Host{Name: name})
	}
	return s.Hosts[i]
}

// Check returns why e cannot be applied to s, or nil: its index is not the
// next one, its payload is not its type's, or it breaks a job's life (a
// submit with another ID than the next, a start of a job that is not
// pending or with another attempt than the next, an agent's start or a
// finish for an attempt that is not the current one or was reported
// already, a kill of an ended job).
func (s *State) Check(e event.Event) error {
	if e.Index != s.Index+1 {
		return fmt.Errorf("event %d: the next index is %d", e.Index, s.Index+1)
	}
	if err := e.Check(); err != nil {
		return err
	}
	bad := func(format string, args ...any) error {
		return fmt.Errorf("event %d (%s): %s", e.Index, e.Type, fmt.Sprintf(format, args...))
	}
	switch e.Type {
	case event.JobSubmitted:
		sub := e.Submit
		if sub.Job != s.NextJob() {
			return bad("job %d, the next job is %d", sub.Job, s.NextJob())
		}
		if sub.TasksMin < 1 || sub.TasksMax < sub.TasksMin || sub.Queue == "" {
			return bad("job %d: tasks %d,%d queue %q", sub.Job, sub.TasksMin, sub.TasksMax, sub.Queue)
		}
		if sub.ArrayJob != 0 || sub.ArrayIndex != 0 || sub.ArrayLimit != 0 {
			return bad("job %d: a submit names no array element", sub.Job)
		}
		if sub.Array != "" {
			if _, err := jobarray.Parse(sub.Array, jobarray.MaxSize); err != nil {
				return bad("job %d: %v", sub.Job, err)
			}
		}
	case event.CycleDecided:
		return s.checkCycle(e.Cycle, bad)
	case event.JobStarted:
		st := e.Started
		j := s.Job(st.Job)
		switch {
		case j == nil || j.State != Run:
			return bad("job %d is not placed", st.Job)
		case st.Attempt != j.Attempt || j.PID != 0:
			return bad("job %d: attempt %d (current %d, pid %d)", st.Job, st.Attempt, j.Attempt, j.PID)
		case st.PID < 1 || st.Host != j.Hosts[0].Host:
			return bad("job %d: pid %d on %q (its first host is %q)", st.Job, st.PID, st.Host, j.Hosts[0].Host)
		}
	case event.JobFinished:
		f := e.Finished
		if j := s.Job(f.Job); j == nil || !(j.State == Run || j.State == Susp || j.Requeuing) || f.Attempt != j.Attempt {
			return bad("job %d attempt %d is not running", f.Job, f.Attempt)
		}
	case event.JobKilled:
		if j := s.Job(e.Killed.Job); j == nil || j.State == Done || j.State == Exit {
			return bad("job %d is not pending or running", e.Killed.Job)
		}
	case event.HostRegistered, event.HostLost, event.HostClosed, event.HostOpened:
		if e.Host.Name == "" {
			return bad("no host name")
		}
	case event.ClusterKeys:
		if k, err := hex.DecodeString(e.Keys.SigningKey); err != nil || len(k) != 32 || e.Keys.AgentToken == "" {
			return bad("want a signing key of 64 hex digits and an agent token")
		}
	}
	return nil
}

func (s *State) checkCycle(c *event.Cycle, bad func(string, ...any) error) error {
	if c.Number != s.Cycles+1 {
		return bad("cycle %d, the next is %d", c.Number, s.Cycles+1)
	}
	seen := map[event.JobID]bool{}
	for _, id := range c.Resumed {
		if j := s.Job(id); j == nil || j.State != Susp || seen[id] {
			return bad("job %d resumed, but it is not suspended", id)
		}
		seen[id] = true
	}
	for _, p := range c.Started {
		j := s.Job(p.Job)
		switch {
		case j == nil || j.State != Pend || j.Requeuing || seen[p.Job]:
			return bad("job %d started, but it is not pending", p.Job)
		case p.Attempt != j.Attempt+1:
			return bad("job %d: attempt %d, the next is %d", p.Job, p.Attempt, j.Attempt+1)
		case len(p.Hosts) == 0:
			return bad("job %d started on no host", p.Job)
		}
		for _, h := range p.Hosts {
			if h.Slots < 1 || h.Host == "" {
				return bad("job %d: %d slots on %q", p.Job, h.Slots, h.Host)
			}
			if !gpusOK(h.GPUs) {
				return bad("job %d: GPUs %v on %q are not distinct device indices, ascending", p.Job, h.GPUs, h.Host)
			}
		}
		seen[p.Job] = true
	}
	for _, p := range c.Pending {
		if j := s.Job(p.Job); j == nil || j.State != Pend || seen[p.Job] {
			return bad("job %d left pending, but it is not pending", p.Job)
		}
	}
	for _, r := range c.Reserved {
		if j := s.Job(r.Job); j == nil || j.State != Pend || seen[r.Job] {
			return bad("job %d reserved, but it is not pending", r.Job)
		}
	}
	preempted := map[event.JobID]bool{}
	for _, p := range c.Preempted {
		j := s.Job(p.Job)
		// Running, or resumed by this cycle (then preempted again).
		running := j != nil && (j.State == Run || j.State == Susp && slices.Contains(c.Resumed, p.Job))
		switch {
		case !running || preempted[p.Job] || p.Attempt != j.Attempt:
			return bad("job %d attempt %d preempted, but it is not running", p.Job, p.Attempt)
		case p.Action != event.PreemptSuspend && p.Action != event.PreemptRequeue:
			return bad("job %d: preemption action %q", p.Job, p.Action)
		}
		preempted[p.Job] = true
	}
	return nil
}

// gpusOK reports whether gpus are device indices 0 … 63, strictly
// ascending.
func gpusOK(gpus []int) bool {
	for i, g := range gpus {
		if g < 0 || g >= 64 || i > 0 && g <= gpus[i-1] {
			return false
		}
	}
	return true
}

// Marshal returns s as a snapshot (JSON).
func (s *State) Marshal() ([]byte, error) { return json.Marshal(s) }

// Unmarshal returns the state a snapshot made by Marshal holds.
func Unmarshal(data []byte) (*State, error) {
	s := New()
	if err := json.Unmarshal(data, s); err != nil {
		return nil, fmt.Errorf("state snapshot: %w", err)
	}
	for i, j := range s.Jobs {
		if j == nil || j.Job != int64(i)+1 {
			return nil, fmt.Errorf("state snapshot: job %d out of place", i+1)
		}
	}
	if !slices.IsSortedFunc(s.Hosts, func(a, b *Host) int { return strings.Compare(a.Name, b.Name) }) {
		return nil, fmt.Errorf("state snapshot: hosts out of order")
	}
	return s, nil
}

// Select returns the jobs a user's name for them gives, in ID order
// (docs/arrays.md): with index 0, job id, or every element of the array
// whose ID id is (its first element's); with an index, that element of
// array id. None when there is no such job.
func (s *State) Select(id, index int64) []*Job {
	j := s.Job(id)
	switch {
	case j == nil:
		return nil
	case j.ArrayJob != id && index == 0:
		return []*Job{j}
	case j.ArrayJob != id:
		return nil // not an array
	}
	var out []*Job
	for k := id; ; k++ {
		el := s.Job(k)
		if el == nil || el.ArrayJob != id {
			break
		}
		if index == 0 || el.ArrayIndex == index {
			out = append(out, el)
		}
	}
	return out
}
