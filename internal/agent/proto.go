package agent

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/xce-sched/xce/internal/event"
)

// The agent protocol (docs/api.md, "Agents"): HTTP/JSON on the server's
// TCP listener, every request with "Authorization: Bearer TOKEN".
const (
	// PathRegister: POST a RegisterRequest, answered by a RegisterReply.
	PathRegister = "/v1/agent/register"
	// PathOrders: GET with the query name, session, after (the highest
	// order sequence number seen) and wait_ms, answered by an
	// OrdersReply.
	PathOrders = "/v1/agent/orders"
	// PathReport: POST a ReportRequest, answered by a ReportReply.
	PathReport = "/v1/agent/report"
	// PathLeave: POST a Leave when the agent stops, answered by {}.
	PathLeave = "/v1/agent/leave"
)

// Leave is what an agent that stops says last: its host goes unavail at
// once.
type Leave struct {
	Name    string `json:"name"`
	Session string `json:"session"`
	// Draining: the agent is about to stop (it will kill its jobs and
	// report their ends, then leave): its host takes no new job from now
	// on, and the session stays for those reports.
	Draining bool `json:"draining,omitempty"`
}

// Validate returns why l cannot be a leave, or nil.
func (l *Leave) Validate() error {
	if !validName(l.Name) || l.Session == "" {
		return fmt.Errorf("want a host name and a session, got %q and %q", l.Name, l.Session)
	}
	return nil
}

// MaxRunning is the most attempts a RegisterRequest may list, running and
// finished together.
const MaxRunning = 100_000

// MaxReason is the longest reason a Report may give, in bytes.
const MaxReason = 1024

// Running is an attempt an agent runs: PID is its process (group) id, 0
// while it is being started.
type Running struct {
	Job     event.JobID `json:"job"`
	Attempt int         `json:"attempt"`
	PID     int         `json:"pid"`
}

// RegisterRequest is what an agent says when it (re)registers: its host's
// name, the attempts it runs, and the ends it has not reported yet.
type RegisterRequest struct {
	Name     string    `json:"name"`
	Running  []Running `json:"running"`
	Finished []Report  `json:"finished"`
}

// RegisterReply gives a registered agent its session, to send with every
// later request, what it must do at once, and the server's timings in
// milliseconds.
type RegisterReply struct {
	Session     string  `json:"session"`
	Orders      []Order `json:"orders"`
	HeartbeatMS int64   `json:"heartbeat_ms"`
	KillGraceMS int64   `json:"kill_grace_ms"`
	// Term is the raft term of the leader that registered the agent (0
	// from a single server): the agent has seen it (Order.Term).
	Term uint64 `json:"term,omitempty"`
}

// The kinds of Order and Report.
const (
	KindStart    = "start"    // Order: run this attempt
	KindKill     = "kill"     // Order: kill this attempt
	KindSuspend  = "suspend"  // Order: stop this attempt (SIGSTOP; preemption)
	KindResume   = "resume"   // Order: continue this attempt (SIGCONT)
	KindStarted  = "started"  // Report: the attempt runs as PID
	KindFinished = "finished" // Report: the attempt ended
)

// Order is something the server asks of an agent. Seq numbers the orders
// of one session from 1, in the order they were made. A start carries the
// job as submitted, what the attempt holds (the first host runs the
// command, as in LSF; the other hosts' slots are only held) and whether
// root's jobs may run; a kill the grace before SIGKILL.
type Order struct {
	Seq       uint64            `json:"seq"`
	Kind      string            `json:"kind"`
	Job       event.JobID       `json:"job"`
	Attempt   int               `json:"attempt"`
	Submit    *event.Submit     `json:"submit,omitempty"`
	Hosts     []event.HostAlloc `json:"hosts,omitempty"`
	AllowRoot bool              `json:"allow_root,omitempty"`
	GraceMS   int64             `json:"grace_ms,omitempty"`
	// Term and Index fence the orders of a replicated control plane
	// (docs/ha.md): the raft term of the leader that sent the order, and
	// the raft index of the entry it had last appended then (for a
	// cycle's start, the cycle's own). An agent refuses a start whose
	// Term is older than a term it has seen. 0 from a single server.
	Term  uint64 `json:"term,omitempty"`
	Index uint64 `json:"index,omitempty"`
}

// OrdersReply is the answer to a poll: the session's orders after the
// sequence number the agent gave, possibly none.
type OrdersReply struct {
	Orders []Order `json:"orders"`
}

// Report is an agent's news of one attempt: it started (PID), or it ended
// (ExitCode, Signal, and Reason when it did not end by itself: "killed",
// "not started: ..."). Lost: the agent lost the job (it stopped or
// restarted while the job ran); the server then puts a rerunnable job
// back to pending. Unstarted: the agent never started the attempt (its
// launch failed); lost so, any job goes back to pending, since it cannot
// have run.
type Report struct {
	Kind      string      `json:"kind"`
	Job       event.JobID `json:"job"`
	Attempt   int         `json:"attempt"`
	PID       int         `json:"pid,omitempty"`
	ExitCode  int         `json:"exit_code,omitempty"`
	Signal    string      `json:"signal,omitempty"`
	Reason    string      `json:"reason,omitempty"`
	Lost      bool        `json:"lost,omitempty"`
	Unstarted bool        `json:"unstarted,omitempty"`
}

// MaxReports is the most reports a ReportRequest may carry.
const MaxReports = 1000

// ReportRequest is what an agent has to report since it last did, in the
// order it happened (a start before the end of the same attempt): one
// request, one sync of the event log on the server, however many jobs
// started and ended meanwhile.
type ReportRequest struct {
	Name    string   `json:"name"`
	Session string   `json:"session"`
	Reports []Report `json:"reports"`
}

// ReportReply says, for each report in order, whether it changed the
// state: false for a report that was already taken or is about an attempt
// that is no longer current (it is dropped; the agent need not send it
// again).
type ReportReply struct {
	Applied []bool `json:"applied"`
}

// validName reports whether name can be a host name: not empty, at most
// 255 bytes, no space, control character or NUL.
func validName(name string) bool {
	if name == "" || len(name) > 255 {
		return false
	}
	for _, r := range name {
		if r <= ' ' || r == 0x7f {
			return false
		}
	}
	return true
}

// Validate returns why r cannot be a registration, or nil.
func (r *RegisterRequest) Validate() error {
	if !validName(r.Name) {
		return fmt.Errorf("name: %q is not a host name", r.Name)
	}
	if len(r.Running)+len(r.Finished) > MaxRunning {
		return fmt.Errorf("running: %d attempts, at most %d", len(r.Running)+len(r.Finished), MaxRunning)
	}
	for i, x := range r.Running {
		if x.Job < 1 || x.Attempt < 1 || x.PID < 0 {
			return fmt.Errorf("running[%d]: job %d attempt %d pid %d", i, x.Job, x.Attempt, x.PID)
		}
	}
	for i := range r.Finished {
		f := &r.Finished[i]
		if f.Kind != KindFinished {
			return fmt.Errorf("finished[%d]: kind %q, want %q", i, f.Kind, KindFinished)
		}
		if err := f.check(); err != nil {
			return fmt.Errorf("finished[%d]: %w", i, err)
		}
	}
	return nil
}

// Validate returns why r cannot be a report request, or nil.
func (r *ReportRequest) Validate() error {
	if !validName(r.Name) {
		return fmt.Errorf("name: %q is not a host name", r.Name)
	}
	if r.Session == "" {
		return errors.New("session: missing")
	}
	if len(r.Reports) == 0 || len(r.Reports) > MaxReports {
		return fmt.Errorf("reports: %d, want 1 to %d", len(r.Reports), MaxReports)
	}
	for i := range r.Reports {
		rep := &r.Reports[i]
		if rep.Kind != KindStarted && rep.Kind != KindFinished {
			return fmt.Errorf("reports[%d]: kind: %q, want %q or %q", i, rep.Kind, KindStarted, KindFinished)
		}
		if err := rep.check(); err != nil {
			return fmt.Errorf("reports[%d]: %w", i, err)
		}
	}
	return nil
}

func (r *Report) check() error {
	switch {
	case r.Job < 1 || r.Attempt < 1:
		return fmt.Errorf("job %d attempt %d", r.Job, r.Attempt)
	case r.Kind == KindStarted && (r.PID < 1 || r.ExitCode != 0 || r.Signal != "" || r.Reason != "" || r.Lost):
		return fmt.Errorf("a start has a pid > 0 and nothing else, got pid %d", r.PID)
	case len(r.Signal) > 32 || len(r.Reason) > MaxReason:
		return errors.New("signal or reason too long")
	}
	return nil
}

// TokenBytes is the size of the agent token, before hex encoding.
const TokenBytes = 32

// LoadToken returns the agent token kept in the file at path, creating
// the file (mode 0600) with a new random token when it does not exist. A
// file that others may read or write is refused: whoever has the token can
// run jobs as any user on the agents' hosts.
func LoadToken(path string) (string, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err == nil {
		b := make([]byte, TokenBytes)
		_, _ = rand.Read(b) // crypto/rand.Read never fails
		tok := hex.EncodeToString(b)
		_, werr := f.WriteString(tok + "\n")
		if err := f.Close(); werr == nil {
			werr = err
		}
		if werr != nil {
			_ = os.Remove(path)
			return "", fmt.Errorf("agent token: %w", werr)
		}
		return tok, nil
	}
	if !errors.Is(err, fs.ErrExist) {
		return "", fmt.Errorf("agent token: %w", err)
	}
	return ReadToken(path)
}

// ReadToken reads the agent token from the file at path (as LoadToken
// wrote it), refusing a file others may read or write.
func ReadToken(path string) (string, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return "", fmt.Errorf("agent token: %w", err)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return "", fmt.Errorf("agent token %s: mode %04o lets others read it: chmod 600 it", path, fi.Mode().Perm())
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("agent token: %w", err)
	}
	tok := strings.TrimSpace(string(b))
	if d, err := hex.DecodeString(tok); err != nil || len(d) != TokenBytes {
		return "", fmt.Errorf("agent token %s: want %d hex digits", path, 2*TokenBytes)
	}
	return tok, nil
}

// TokenEqual compares a presented token with the right one in constant
// time (for tokens of the right length).
func TokenEqual(presented, token string) bool {
	return subtle.ConstantTimeCompare([]byte(presented), []byte(token)) == 1
}
