// Package event holds every event type of the live scheduler's event log,
// in this one file. The log is the truth (Flux's job eventlog, LSF's
// lsb.events, Nomad's FSM): every change of the server's state is one
// typed event, appended durably, and the state is a fold of the log by one
// apply function, at start-up, for `xce history`, for parity with the
// simulator and, later, as a raft FSM.
//
// Compatibility: an event has exactly one payload, named by its Type. A
// reader that does not know a Type stops loudly, unless the event says it
// may be skipped (SkipOK; Nomad's IgnoreUnknownTypeFlag), so an older
// binary never silently misreads a newer log. Fields are only ever added,
// never renamed or reused; Version in the store's header changes when an
// old binary could misread what a new one writes.
package event

import (
	"encoding/json"
	"errors"
	"fmt"
)

// Type names an event kind.
type Type string

// The event types.
const (
	// JobSubmitted: a job accepted by the server, the whole request as
	// submitted, with its submitter (payload Submit).
	JobSubmitted Type = "job.submitted"
	// CycleDecided: one scheduling cycle's decisions (payload Cycle). It is
	// written as one batch before any agent is told to start a job.
	CycleDecided Type = "cycle.decided"
	// JobStarted: an agent started a job's command (payload Started).
	JobStarted Type = "job.started"
	// JobFinished: a job's attempt ended: its command exited, was
	// signalled, or its host was lost (payload Finished).
	JobFinished Type = "job.finished"
	// JobKilled: a user or an administrator asked for a job to be killed
	// (payload Killed); a running job then finishes with a signal.
	JobKilled Type = "job.killed"
	// HostRegistered, HostLost, HostClosed and HostOpened change a host's
	// status (payload Host).
	HostRegistered Type = "host.registered"
	HostLost       Type = "host.lost"
	HostClosed     Type = "host.closed"
	HostOpened     Type = "host.opened"
	// ConfigReloaded: the cluster configuration was replaced (payload
	// Config).
	ConfigReloaded Type = "config.reloaded"
	// ServerStarted: a server started on this log and rebuilt its
	// scheduler from the state (payload Server). It changes no job or
	// host, but the scheduler's memory that the state does not hold (kept
	// reservations, fair-share usage) starts afresh there, so a replay
	// (xce sim verify) rebuilds at the same point. Written with SkipOK.
	ServerStarted Type = "server.started"
	// ClusterKeys: the secrets every member of a replicated control plane
	// shares (payload Keys; docs/ha.md): the key that signs users' tokens
	// and the agents' token, written once by the first leader, so that a
	// token issued through any member is valid on all of them and an agent
	// may register through any of them.
	ClusterKeys Type = "cluster.keys"
)

// Event is one durable change. Index is assigned by the store when the
// event is appended: 1 for the first event of a log, then dense. At is
// the server's wall clock when the event was made, in Unix nanoseconds.
// Exactly one payload is set: the one Type names.
type Event struct {
	Index uint64 `json:"index"`
	At    int64  `json:"at"`
	Type  Type   `json:"type"`
	// SkipOK: a reader that does not know Type may skip the event.
	SkipOK bool `json:"skip_ok,omitempty"`

	Submit   *Submit   `json:"submit,omitempty"`
	Cycle    *Cycle    `json:"cycle,omitempty"`
	Started  *Started  `json:"started,omitempty"`
	Finished *Finished `json:"finished,omitempty"`
	Killed   *Killed   `json:"killed,omitempty"`
	Host     *Host     `json:"host,omitempty"`
	Config   *Config   `json:"config,omitempty"`
	Server   *Server   `json:"server,omitempty"`
	Keys     *Keys     `json:"keys,omitempty"`
}

// JobID identifies a job; the server assigns them from 1, in submit order.
type JobID = int64

// Submit is a job as submitted (xce submit, LSF's bsub), and who submitted
// it. Times are in seconds.
type Submit struct {
	Job     JobID  `json:"job"`
	User    string `json:"user"`
	UID     uint32 `json:"uid"`
	GID     uint32 `json:"gid"`
	Name    string `json:"name,omitempty"`    // -J
	Queue   string `json:"queue"`             // -q, or the default queue
	Project string `json:"project,omitempty"` // -P
	// TasksMin and TasksMax: -n min[,max].
	TasksMin int    `json:"tasks_min"`
	TasksMax int    `json:"tasks_max"`
	ResReq   string `json:"resreq,omitempty"` // -R
	// Estimate is the run limit (-W), in seconds; 0 when not given.
	Estimate int64 `json:"estimate,omitempty"`
	// Command is the command and its arguments; Script, when set, is a
	// job script run by /bin/sh instead.
	Command []string `json:"command,omitempty"`
	Script  string   `json:"script,omitempty"`
	Cwd     string   `json:"cwd"`
	Env     []string `json:"env,omitempty"`    // NAME=value
	Stdout  string   `json:"stdout,omitempty"` // -o, with %J unexpanded
	Stderr  string   `json:"stderr,omitempty"` // -e
	// Rerunnable (-r): a job whose host is lost goes back to pending.
	Rerunnable bool `json:"rerunnable,omitempty"`
	// Array is a job array's index list and cap, "1-10:2%3" (from -J
	// "name[1-10:2]%3"; docs/arrays.md): the event stands for the array's
	// elements, jobs Job, Job+1, ... in index order. The state keeps one
	// copy of the submit per element, with ArrayJob (the array's ID, Job
	// of the event), ArrayIndex and ArrayLimit (the cap, 0 for none) set;
	// a submit event never carries those three.
	// Exclusive (-x): the job runs alone on its hosts; its queue must take
	// exclusive jobs (docs/exclusive.md).
	Exclusive bool `json:"exclusive,omitempty"`
	// Depend is the job's dependency expression (-w, LSF's syntax;
	// docs/dependencies.md), "" for none.
	Depend string `json:"depend,omitempty"`
	// GPU is the job's GPU requirement as written (-gpu, LSF's syntax;
	// docs/gpus.md), "" for none.
	GPU        string `json:"gpu,omitempty"`
	Array      string `json:"array,omitempty"`
	ArrayJob   JobID  `json:"array_job,omitempty"`
	ArrayIndex int64  `json:"array_index,omitempty"`
	ArrayLimit int    `json:"array_limit,omitempty"`
}

// Cycle is one scheduling cycle's decisions. Now is the cycle's time in
// seconds, as the scheduler saw it.
type Cycle struct {
	Number   int64         `json:"number"`
	Now      int64         `json:"now"`
	Started  []Placement   `json:"started,omitempty"`
	Pending  []Pending     `json:"pending,omitempty"`
	Reserved []Reservation `json:"reserved,omitempty"`
	// Resumed are the jobs suspended by preemption that the cycle
	// resumed before placing any job (docs/preemption.md); Preempted the
	// running jobs it preempted, in order.
	Resumed   []JobID      `json:"resumed,omitempty"`
	Preempted []Preemption `json:"preempted,omitempty"`
}

// The preemption actions (Preemption.Action).
const (
	// PreemptSuspend: the job is stopped where it runs (SIGSTOP) and
	// keeps Held until a cycle resumes it.
	PreemptSuspend = "suspend"
	// PreemptRequeue: the job is killed and pends again; no cycle starts
	// it before its attempt's finish is in the log.
	PreemptRequeue = "requeue"
)

// Preemption is a running job a cycle preempted: its current attempt,
// the action, and, when suspended, what it keeps on each host (its mem).
type Preemption struct {
	Job     JobID       `json:"job"`
	Attempt int         `json:"attempt"`
	Action  string      `json:"action"`
	Held    []HostAlloc `json:"held,omitempty"`
}

// Placement is a job started by a cycle: its attempt (1 for its first
// start, one more for each requeue) and what it holds.
type Placement struct {
	Job     JobID       `json:"job"`
	Attempt int         `json:"attempt"`
	Hosts   []HostAlloc `json:"hosts"`
	// Shared is what the job holds of each shared resource (licenses).
	Shared map[string]float64 `json:"shared,omitempty"`
}

// HostAlloc is what a job holds on one host: slots, the consumables it
// reserved (mem in MB) and, in a placement, the indices of the host's
// GPUs it holds (ascending; as many as its ngpus_physical; docs/gpus.md).
// The log carries the devices so that a replay never chooses them again.
// A reservation names none: devices are chosen when a job starts.
type HostAlloc struct {
	Host  string             `json:"host"`
	Slots int                `json:"slots"`
	Res   map[string]float64 `json:"res,omitempty"`
	GPUs  []int              `json:"gpus,omitempty"`
}

// Pending is a job a cycle left pending, with its main reason's code (a
// framework.Reason name) and detail (the resource, shared resource or
// limit it names).
type Pending struct {
	Job    JobID  `json:"job"`
	Reason string `json:"reason"`
	Detail string `json:"detail,omitempty"`
}

// Reservation is a backfill reservation a cycle left: the planned start in
// seconds and the slots per host.
type Reservation struct {
	Job   JobID       `json:"job"`
	Start int64       `json:"start"`
	Hosts []HostAlloc `json:"hosts"`
	// Shared is what the job will hold of each shared resource.
	Shared map[string]float64 `json:"shared,omitempty"`
}

// Started: an agent started attempt Attempt of a job on Host as process
// PID (the leader of the job's process group).
type Started struct {
	Job     JobID  `json:"job"`
	Attempt int    `json:"attempt"`
	Host    string `json:"host"`
	PID     int    `json:"pid"`
}

// Finished: attempt Attempt of a job ended. ExitCode is the command's
// exit status when it exited; Signal names the signal that ended it
// ("SIGKILL"), else empty. Reason says why when the server ended it: "host
// lost", "killed", or empty for a command that ended by itself. Requeued:
// the job goes back to pending (a rerunnable job whose host was lost).
type Finished struct {
	Job      JobID  `json:"job"`
	Attempt  int    `json:"attempt"`
	ExitCode int    `json:"exit_code"`
	Signal   string `json:"signal,omitempty"`
	Reason   string `json:"reason,omitempty"`
	Requeued bool   `json:"requeued,omitempty"`
}

// Killed: user By asked for a job to be killed.
type Killed struct {
	Job JobID  `json:"job"`
	By  string `json:"by"`
}

// Host names a host whose status changed, and why (for a lost host, the
// missed heartbeats; for a closed one, the administrator).
type Host struct {
	Name   string `json:"name"`
	Reason string `json:"reason,omitempty"`
}

// Config is the cluster configuration the server runs with from this event
// on: the configuration file's text, as loaded.
type Config struct {
	Text string `json:"text"`
}

// Server is a server's start: its process id and, when known, the
// version of its binary (the main module's, as `go version -m` gives it).
// In a replicated control plane it is a leader's start (docs/ha.md), with
// its raft address and the address of its TCP listener (API), so that
// followers can say where the leader is.
type Server struct {
	PID     int    `json:"pid"`
	Version string `json:"version,omitempty"`
	Raft    string `json:"raft,omitempty"`
	API     string `json:"api,omitempty"`
}

// Keys are a replicated control plane's shared secrets: SigningKey, the
// HMAC key of users' tokens (64 hex digits, internal/auth), and
// AgentToken, the token agents present (internal/agent). The API never
// shows them (GET /v1/events blanks them).
type Keys struct {
	SigningKey string `json:"signing_key"`
	AgentToken string `json:"agent_token"`
}

// ErrUnknown is returned (wrapped) by Decode for an event of a type this
// binary does not know and that may not be skipped.
var ErrUnknown = errors.New("unknown event type")

// payload returns whether e carries the payload its type names, and no
// other.
func (e *Event) payload() error {
	set := 0
	for _, p := range []bool{e.Submit != nil, e.Cycle != nil, e.Started != nil, e.Finished != nil, e.Killed != nil, e.Host != nil, e.Config != nil, e.Server != nil, e.Keys != nil} {
		if p {
			set++
		}
	}
	var ok bool
	switch e.Type {
	case JobSubmitted:
		ok = e.Submit != nil
	case CycleDecided:
		ok = e.Cycle != nil
	case JobStarted:
		ok = e.Started != nil
	case JobFinished:
		ok = e.Finished != nil
	case JobKilled:
		ok = e.Killed != nil
	case HostRegistered, HostLost, HostClosed, HostOpened:
		ok = e.Host != nil
	case ConfigReloaded:
		ok = e.Config != nil
	case ServerStarted:
		ok = e.Server != nil
	case ClusterKeys:
		ok = e.Keys != nil
	default:
		return fmt.Errorf("event %d: %w %q", e.Index, ErrUnknown, e.Type)
	}
	if !ok || set != 1 {
		return fmt.Errorf("event %d (%s): want exactly its own payload, %d set", e.Index, e.Type, set)
	}
	return nil
}

// Check returns an error when e does not have exactly the payload its
// type names (a programming error in the writer).
func (e *Event) Check() error { return e.payload() }

// Encode returns e as JSON.
func Encode(e *Event) ([]byte, error) {
	if err := e.payload(); err != nil {
		return nil, err
	}
	return json.Marshal(e)
}

// Decode parses an event written by Encode. skip is true for an event of
// an unknown type that may be skipped; an unknown type that may not be
// skipped is an error wrapping ErrUnknown, as is a payload that does not
// match the type.
func Decode(data []byte) (e Event, skip bool, err error) {
	if err := json.Unmarshal(data, &e); err != nil {
		return Event{}, false, fmt.Errorf("decode event: %w", err)
	}
	if err := e.payload(); err != nil {
		if errors.Is(err, ErrUnknown) && e.SkipOK {
			return e, true, nil
		}
		return Event{}, false, err
	}
	return e, false, nil
}
