package sim

import (
	"container/heap"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/xce-sched/xce/internal/event"
	"github.com/xce-sched/xce/internal/state"
)

// LiveReplay replays a live server's history as the server itself would
// have run it under VerifyOptions' policy or configuration: the log's
// inputs at their recorded instants (submits, kills, host and
// configuration changes, server starts), scheduling cycles at the
// instants the server ran them, and each job running for the time its
// last attempt really ran (from its placement to its end), ending where
// the replay's own decisions started it. Between the recorded cycles, a
// cycle also runs where the server's loop would have run one that the log
// does not show: after a job's end (at most one per cycle_interval), at a
// conservative reservation's start, and every second while jobs wait,
// unless a recorded cycle comes within cycle_interval. The scheduler counts whole seconds, as the
// server's does; the instants are the log's, in nanoseconds.
//
// Under the recorded policy and configuration the replay makes the
// server's decisions (the parity of Verifier) at the server's instants, so
// it reproduces the live run; under another, it shows that policy with
// the live loop's timing. What it does not replay: a job's earlier
// attempts (a requeue after a lost host), and a job that never ran in the
// live run runs for no time if the replay starts it.
type LiveReplay struct {
	rc       replayCore
	interval int64           // the server's cycle_interval, ns
	runtime  map[int64]int64 // job -> its last attempt's run time, ns
	cycles   []int64         // the recorded cycles' instants, ns, ascending
	queue    synthQueue      // ends and cycles to come
	ends     int             // ends in queue
	queued   map[int64]bool  // cycles in queue, by instant
	last     int64           // the last cycle's instant, ns
	logDone  bool            // Finish was called: no recorded event is left
}

// NewLiveReplay prepares a replay of the log whose fold is recorded (the
// whole log, folded): the run times and cycle instants come from it;
// interval is the server's cycle_interval (0: 20ms). cycles are the
// instants (At) of the log's recorded cycles, in log order.
func NewLiveReplay(opts VerifyOptions, recorded *state.State, cycles []int64, interval time.Duration) *LiveReplay {
	if interval <= 0 {
		interval = 20 * time.Millisecond
	}
	r := &LiveReplay{rc: replayCore{opts: opts, st: state.New()}, interval: interval.Nanoseconds(),
		runtime: map[int64]int64{}, cycles: slices.Clone(cycles), queued: map[int64]bool{}, last: -1 << 62}
	slices.Sort(r.cycles)
	for _, j := range recorded.Jobs {
		if j.StartTime > 0 && j.EndTime >= j.StartTime {
			r.runtime[j.Job] = j.EndTime - j.StartTime
		}
	}
	return r
}

// State returns the replay's state: each job's submit, start and end
// instants as the replay made them.
func (r *LiveReplay) State() *state.State { return r.rc.st }

// Add replays recorded event e, the next of the log: first what the
// replay itself makes happen before e's instant, then e. The agents'
// reports (job.started, job.finished) are not replayed: the replay's own
// ends stand for them.
func (r *LiveReplay) Add(ctx context.Context, e event.Event) error {
	if err := r.until(ctx, e.At, true); err != nil {
		return err
	}
	switch {
	case e.SkipOK && e.Check() != nil:
		return nil
	case e.Type == event.JobStarted || e.Type == event.JobFinished:
		return nil
	case e.Type == event.CycleDecided:
		return r.cycle(ctx, e.At)
	}
	e.Index = r.rc.st.Index + 1
	if e.Type == event.JobKilled {
		if j := r.rc.st.Job(e.Killed.Job); j == nil || j.State == state.Done || j.State == state.Exit {
			return nil // it ended sooner in the replay
		}
	}
	if err := r.rc.apply(e); err != nil {
		return err
	}
	if e.Type != event.ConfigReloaded && e.Type != event.ServerStarted && e.Type != event.ClusterKeys && r.rc.core != nil {
		r.wantCycle(e.At) // the loop cycles after any change
	}
	return nil
}

// Finish runs what is left after the log's last event: the replay's own
// ends, with a cycle after each, until nothing is left to happen.
func (r *LiveReplay) Finish(ctx context.Context) error {
	r.logDone = true
	return r.until(ctx, 1<<62, false)
}

// until runs the ends and cycles the replay made, up to instant t
// (before it, with before; up to and including it else).
func (r *LiveReplay) until(ctx context.Context, t int64, before bool) error {
	for r.queue.Len() > 0 {
		next := r.queue.q[0]
		if next.at > t || before && next.at == t {
			return nil
		}
		heap.Pop(&r.queue)
		if next.job == 0 {
			delete(r.queued, next.at)
			switch {
			case r.recordedCycleWithin(next.at, r.interval):
			case next.at < r.last+r.interval:
				r.wantCycle(r.last + r.interval) // the loop coalesces
			default:
				if err := r.cycle(ctx, next.at); err != nil {
					return err
				}
			}
			continue
		}
		r.ends--
		j := r.rc.st.Job(next.job)
		if j == nil || j.State != state.Run || j.Attempt != next.attempt {
			continue
		}
		e := event.Event{Index: r.rc.st.Index + 1, At: next.at, Type: event.JobFinished,
			Finished: &event.Finished{Job: next.job, Attempt: next.attempt}}
		if j.KilledBy != "" {
			e.Finished.Signal, e.Finished.ExitCode, e.Finished.Reason = "SIGKILL", 137, "killed"
		}
		if err := r.rc.apply(e); err != nil {
			return err
		}
		r.wantCycle(next.at)
	}
	return nil
}

// recordedCycleWithin reports whether the log has a cycle in [t, t+d].
func (r *LiveReplay) recordedCycleWithin(t, d int64) bool {
	i, _ := slices.BinarySearch(r.cycles, t)
	return i < len(r.cycles) && r.cycles[i] <= t+d
}

// wantCycle asks for a cycle at t, the instant of a change, once, as the
// server's loop runs one after any change: it is dropped when a recorded
// cycle comes within cycle_interval of t (that was the loop's), and put
// off to cycle_interval after the last cycle when that was sooner (the
// loop coalesces).
func (r *LiveReplay) wantCycle(t int64) {
	if !r.queued[t] {
		r.queued[t] = true
		heap.Push(&r.queue, synth{at: t})
	}
}

// cycle runs one cycle at instant at and folds its decisions: each job it
// starts ends after its run time.
func (r *LiveReplay) cycle(ctx context.Context, at int64) error {
	k := r.rc.core
	if k == nil {
		return nil
	}
	r.last = at
	e, ok, err := k.Cycle(ctx, at)
	if err != nil {
		return fmt.Errorf("cycle at %d: %w", at, err)
	}
	if ok {
		e.Index = r.rc.st.Index + 1
		if err := k.Commit(e); err != nil {
			return err
		}
		for _, p := range e.Cycle.Started {
			heap.Push(&r.queue, synth{at: at + r.runtime[p.Job], job: p.Job, attempt: p.Attempt})
			r.ends++
		}
	}
	// Once the log is over, only an end can change anything: a job that
	// waits with none to come waits for good.
	if k.Sched.Waiting() > 0 && (!r.logDone || r.ends > 0) {
		// The loop's idle cycle, and a kept reservation's start.
		r.wantCycle(at + int64(time.Second))
		if w := k.Sched.NextWake(); w > at/int64(time.Second) && w < 1<<40 {
			r.wantCycle(w * int64(time.Second))
		}
	}
	return nil
}

// synth is an end (job > 0) or a cycle (job 0) the replay makes happen.
type synth struct {
	at      int64
	job     int64
	attempt int
}

// synthQueue is a min-heap by instant; at one instant, ends before
// cycles, then by job.
type synthQueue struct{ q []synth }

func (q *synthQueue) Len() int { return len(q.q) }
func (q *synthQueue) Less(i, j int) bool {
	a, b := q.q[i], q.q[j]
	if a.at != b.at {
		return a.at < b.at
	}
	if (a.job == 0) != (b.job == 0) {
		return a.job != 0
	}
	return a.job < b.job
}
func (q *synthQueue) Swap(i, j int) { q.q[i], q.q[j] = q.q[j], q.q[i] }
func (q *synthQueue) Push(x any)    { q.q = append(q.q, x.(synth)) }
func (q *synthQueue) Pop() any {
	e := q.q[len(q.q)-1]
	q.q = q.q[:len(q.q)-1]
	return e
}
