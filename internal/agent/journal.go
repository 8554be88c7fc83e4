package agent

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/xce-sched/xce/internal/event"
	"github.com/xce-sched/xce/internal/launch"
)

// journal is a remote agent's record of the attempts it took, kept in its
// directory so that a restarted agent knows them: one file, DIR/jobs/log,
// to which a line (JSON) is appended when an attempt is taken (before it
// is started), when it runs (pid and start time), when it ended (how),
// and when the server has its end (the attempt is then gone); the last
// line of an attempt says where it is. A start order for an attempt the
// journal holds is never carried out again. Lines are appended, not
// synced: they outlive the agent's process, not the machine (whose jobs a
// reboot ends anyway); a line cut short by a crash ends the file and is
// dropped. Once most lines are stale the file is rewritten (a temporary
// file renamed over it) with one line per attempt held. An earlier
// version's files, one per attempt, are read once and folded in.
type journal struct {
	dir   string
	log   *os.File // DIR/jobs/log, opened for appending
	lines int      // lines in log

	mu       sync.Mutex
	entries  map[key]*entry
	stopping bool          // the agent is stopping: start nothing, kill what starts
	grace    time.Duration // the server's kill grace, for the jobs of an agent that stops
	changed  chan struct{} // buffer 1: an entry has something to report
}

// entry is one attempt. The exported fields are the file's content; the
// others live in memory.
type entry struct {
	Job     event.JobID `json:"job"`
	Attempt int         `json:"attempt"`
	PID     int         `json:"pid,omitempty"`
	Start   uint64      `json:"start,omitempty"` // launch.ProcStart of PID
	End     *Report     `json:"end,omitempty"`
	Gone    bool        `json:"gone,omitempty"` // the server has its end: no longer held

	proc      *launch.Process
	sentStart bool          // the server has the start
	kill      bool          // killed before its process started
	grace     time.Duration // of that kill
	stopped   bool          // suspended (preemption), or suspended before it started
}

func openJournal(dir string) (*journal, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("agent journal: %w", err)
	}
	j := &journal{dir: dir, entries: map[key]*entry{}, changed: make(chan struct{}, 1), grace: launch.DefaultGrace}
	names, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("agent journal: %w", err)
	}
	var old []string // an earlier version's files, one per attempt
	for _, n := range names {
		switch name := n.Name(); {
		case name == logName:
		case strings.HasSuffix(name, ".tmp"):
			_ = os.Remove(filepath.Join(dir, name)) // a write cut short
		default:
			e, err := readEntryFile(dir, name)
			if err != nil {
				return nil, err
			}
			j.entries[key{e.Job, e.Attempt}] = e
			old = append(old, name)
		}
	}
	if err := j.replay(); err != nil {
		return nil, err
	}
	if err := j.rewriteLocked(); err != nil {
		return nil, err
	}
	for _, name := range old {
		_ = os.Remove(filepath.Join(dir, name))
	}
	return j, nil
}

// logName is the journal's file in its directory.
const logName = "log"

// readEntryFile reads an earlier version's file of one attempt.
func readEntryFile(dir, name string) (*entry, error) {
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		return nil, fmt.Errorf("agent journal: %w", err)
	}
	e := &entry{}
	if err := json.Unmarshal(b, e); err != nil {
		return nil, fmt.Errorf("agent journal: %s: %w", name, err)
	}
	if e.Job < 1 || e.Attempt < 1 || name != fileName(key{e.Job, e.Attempt}) {
		return nil, fmt.Errorf("agent journal: %s holds job %d attempt %d", name, e.Job, e.Attempt)
	}
	return e, nil
}

// replay folds the lines of the log into the entries: each line is an
// attempt's state, the last one of an attempt wins, and a gone one is
// dropped. A line that does not parse ends the log if it is the last (a
// write cut short by a crash), and is an error anywhere else.
func (j *journal) replay() error {
	b, err := os.ReadFile(filepath.Join(j.dir, logName))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("agent journal: %w", err)
	}
	lines := strings.Split(string(b), "\n")
	for i, line := range lines {
		if line == "" {
			continue
		}
		e := &entry{}
		if err := json.Unmarshal([]byte(line), e); err != nil || e.Job < 1 || e.Attempt < 1 {
			if i == len(lines)-1 {
				break // cut short by a crash: the last line only
			}
			return fmt.Errorf("agent journal: %s line %d: not an attempt (%v)", filepath.Join(j.dir, logName), i+1, err)
		}
		k := key{e.Job, e.Attempt}
		if e.Gone {
			delete(j.entries, k)
		} else {
			j.entries[k] = e
		}
	}
	return nil
}

// rewriteLocked replaces the log with one line per attempt held (a
// temporary file renamed over it) and opens it for appending. j.mu is
// held, or the journal is not yet shared.
func (j *journal) rewriteLocked() error {
	var b []byte
	for _, e := range j.sorted() {
		line, err := json.Marshal(e)
		if err != nil {
			return err
		}
		b = append(append(b, line...), '\n')
	}
	path := filepath.Join(j.dir, logName)
	if err := os.WriteFile(path+".tmp", b, 0o600); err != nil {
		return fmt.Errorf("agent journal: %w", err)
	}
	if err := os.Rename(path+".tmp", path); err != nil {
		return fmt.Errorf("agent journal: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("agent journal: %w", err)
	}
	if j.log != nil {
		_ = j.log.Close()
	}
	j.log, j.lines = f, len(j.entries)
	return nil
}

func fileName(k key) string {
	return strconv.FormatInt(k.job, 10) + "." + strconv.Itoa(k.attempt)
}

// writeLocked appends e's state to the log, and rewrites the log once
// most of its lines are stale. j.mu is held.
func (j *journal) writeLocked(e *entry) error {
	b, err := json.Marshal(e)
	if err != nil {
		return err
	}
	if j.log == nil {
		return errors.New("agent journal: closed")
	}
	if _, err := j.log.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("agent journal: %w", err)
	}
	j.lines++
	if j.lines > 1024 && j.lines > 4*len(j.entries) {
		return j.rewriteLocked()
	}
	return nil
}

// close closes the log (the journal is not used afterwards).
func (j *journal) close() {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.log != nil {
		_ = j.log.Close()
		j.log = nil
	}
}

func (j *journal) notify() {
	select {
	case j.changed <- struct{}{}:
	default:
	}
}

// take records attempt k as taken; false when the journal holds it
// already, or the agent is stopping. An error writing it makes the entry
// end at once, not started, so that the server hears of it.
func (j *journal) take(k key) bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.entries[k] != nil || j.stopping {
		return false
	}
	e := &entry{Job: k.job, Attempt: k.attempt}
	j.entries[k] = e
	if err := j.writeLocked(e); err != nil {
		e.End = &Report{Kind: KindFinished, Job: k.job, Attempt: k.attempt, ExitCode: -1, Reason: clipReason("not started: " + err.Error())}
		j.notify()
		return false
	}
	return true
}

// setGrace sets the kill grace of the jobs of an agent that stops.
func (j *journal) setGrace(d time.Duration) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.grace = d
}

// started records that k runs as proc, and kills it at once when it was
// killed before it started or the agent is stopping.
func (j *journal) started(k key, proc *launch.Process) error {
	// A job that ended already has no start time (0: KillLeftover then
	// never signals its pid).
	start, _ := launch.ProcStart(proc.PID())
	j.mu.Lock()
	defer j.mu.Unlock()
	e := j.entries[k]
	e.proc, e.PID, e.Start = proc, proc.PID(), start
	switch {
	case j.stopping:
		_ = proc.Kill(j.grace)
	case e.kill:
		_ = proc.Kill(e.grace)
	case e.stopped:
		_ = proc.Suspend()
	}
	j.notify()
	return j.writeLocked(e)
}

// end records how k ended. A reason longer than a report takes is cut.
func (j *journal) end(k key, r Report) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	e := j.entries[k]
	r.Kind, r.Job, r.Attempt = KindFinished, k.job, k.attempt
	r.Reason = clipReason(r.Reason)
	e.End, e.proc = &r, nil
	j.notify()
	return j.writeLocked(e)
}

// kill carries out a kill order for k: the process gets SIGINT and
// SIGTERM, then SIGKILL after grace; an attempt being started is killed
// once it runs; one the journal does not hold is recorded as ended,
// killed before it started (exit code -1).
func (j *journal) kill(k key, grace time.Duration) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	e := j.entries[k]
	switch {
	case e == nil:
		e = &entry{Job: k.job, Attempt: k.attempt, End: &Report{Kind: KindFinished, Job: k.job, Attempt: k.attempt, ExitCode: -1, Reason: ReasonKilled}}
		j.entries[k] = e
		j.notify()
		return j.writeLocked(e)
	case e.End != nil:
	case e.proc != nil:
		return e.proc.Kill(grace)
	default:
		e.kill, e.grace = true, grace
	}
	return nil
}

// signal carries out a suspend (stop) or resume order for k: its process
// group gets SIGSTOP or SIGCONT; an attempt being started is stopped once
// it runs; one that ended or is unknown is left alone.
func (j *journal) signal(k key, stop bool) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	e := j.entries[k]
	if e == nil || e.End != nil {
		return nil
	}
	e.stopped = stop
	switch {
	case e.proc == nil:
		return nil
	case stop:
		return e.proc.Suspend()
	default:
		return e.proc.Resume()
	}
}

// stop marks the journal stopping and kills the processes still running
// (SIGKILL after the grace); it returns how long that grace is.
func (j *journal) stop() time.Duration {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.stopping = true
	for _, e := range j.entries {
		if e.proc != nil {
			_ = e.proc.Kill(j.grace)
		}
	}
	return j.grace
}

// clipReason makes s a reason a report takes: valid UTF-8 (JSON would
// replace each bad byte with 3 bytes), at most MaxReason bytes, cut at a
// rune boundary.
func clipReason(s string) string {
	s = strings.ToValidUTF8(s, "?")
	if len(s) <= MaxReason {
		return s
	}
	i := MaxReason - 3
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "..."
}

func (j *journal) isStopping() bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.stopping
}

// registration returns what a registration lists: the attempts running
// (or being started), and the ends not yet reported.
func (j *journal) registration() (running []Running, finished []Report) {
	j.mu.Lock()
	defer j.mu.Unlock()
	for _, e := range j.sorted() {
		if e.End != nil {
			finished = append(finished, *e.End)
		} else {
			running = append(running, Running{Job: e.Job, Attempt: e.Attempt, PID: e.PID})
		}
	}
	return running, finished
}

// registered records that the server took a registration listing running
// and finished: it has those starts and those ends.
func (j *journal) registered(running []Running, finished []Report) {
	j.mu.Lock()
	defer j.mu.Unlock()
	for _, r := range running {
		if e := j.entries[key{r.Job, r.Attempt}]; e != nil && r.PID > 0 {
			e.sentStart = true
		}
	}
	for _, f := range finished {
		j.removeLocked(key{f.Job, f.Attempt})
	}
}

// pending returns the reports the server does not have yet: starts, and
// ends.
func (j *journal) pending() []Report {
	j.mu.Lock()
	defer j.mu.Unlock()
	var out []Report
	for _, e := range j.sorted() {
		if e.PID > 0 && !e.sentStart {
			// The start first, even when the attempt has ended already
			// (a short job): the log records every start with its pid.
			out = append(out, Report{Kind: KindStarted, Job: e.Job, Attempt: e.Attempt, PID: e.PID})
		}
		if e.End != nil {
			out = append(out, *e.End)
		}
	}
	return out
}

// reported records that the server took r.
func (j *journal) reported(r Report) {
	j.mu.Lock()
	defer j.mu.Unlock()
	k := key{r.Job, r.Attempt}
	if r.Kind == KindFinished {
		j.removeLocked(k)
	} else if e := j.entries[k]; e != nil {
		e.sentStart = true
	}
}

func (j *journal) removeLocked(k key) {
	if e := j.entries[k]; e != nil && e.End != nil {
		delete(j.entries, k)
		_ = j.writeLocked(&entry{Job: k.job, Attempt: k.attempt, Gone: true})
	}
}

// sorted returns the entries in job and attempt order. j.mu is held.
func (j *journal) sorted() []*entry {
	out := make([]*entry, 0, len(j.entries))
	for _, e := range j.entries {
		out = append(out, e)
	}
	slices.SortFunc(out, func(a, b *entry) int { return cmp.Or(cmp.Compare(a.Job, b.Job), cmp.Compare(a.Attempt, b.Attempt)) })
	return out
}

// recover ends the attempts an earlier run of the agent left without an
// end: what is left of their processes is killed (launch.KillLeftover),
// their work directories under workBase are removed, and each is recorded
// as lost, ReasonAgentRestarted (the server requeues a rerunnable one).
// It returns how many it ended.
func (j *journal) recover(workBase string, logf func(string, ...any)) (int, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	n := 0
	for _, e := range j.sorted() {
		if e.End != nil {
			continue
		}
		if e.PID > 0 {
			if sent, err := launch.KillLeftover(e.PID, e.Start, 10*time.Second); err != nil {
				return n, fmt.Errorf("job %d attempt %d: %w", e.Job, e.Attempt, err)
			} else if sent {
				logf("job %d attempt %d: killed what was left of process group %d", e.Job, e.Attempt, e.PID)
			}
		}
		if err := os.RemoveAll(filepath.Join(workBase, fileName(key{e.Job, e.Attempt}))); err != nil && !errors.Is(err, fs.ErrNotExist) {
			logf("job %d attempt %d: %v", e.Job, e.Attempt, err)
		}
		e.End = &Report{Kind: KindFinished, Job: e.Job, Attempt: e.Attempt, ExitCode: -1, Lost: true, Reason: ReasonAgentRestarted}
		if err := j.writeLocked(e); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}
