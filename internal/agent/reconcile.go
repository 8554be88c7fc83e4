package agent

import (
	"cmp"
	"slices"

	"github.com/xce-sched/xce/internal/event"
	"github.com/xce-sched/xce/internal/state"
)

// End reasons the server gives jobs whose agent or host failed them.
const (
	// ReasonHostLost: the host's agent missed its heartbeats.
	ReasonHostLost = "host lost"
	// ReasonLostByAgent: the agent registered without the attempt the
	// state says it started.
	ReasonLostByAgent = "lost by its agent"
	// ReasonKilled: killed (by a user, or before its agent started it).
	ReasonKilled = "killed"
	// ReasonAgentStopped: the agent was stopped while the job ran, and
	// killed it.
	ReasonAgentStopped = "its agent stopped"
	// ReasonAgentStopping: why a host whose agent is stopping takes no
	// new job (the host.lost event of a draining leave).
	ReasonAgentStopping = "its agent is stopping"
	// ReasonAgentRestarted: an agent that had been killed found the job
	// in its journal when it started again, and killed what was left of
	// it.
	ReasonAgentRestarted = "its agent restarted"
)

// Plan is what a registration changes: events for the log, each to be
// applied by its own request and checked again against the state then,
// and orders for the agent (without their sequence numbers).
type Plan struct {
	Events []event.Event
	Orders []Order
}

// Reconcile returns what must happen when the agent of host registers
// with req, given the state st. For each attempt the agent lists:
//
//   - finished, and current in st (the job runs, this is its attempt, on
//     this first host): the job finishes as the agent says (a lost one is
//     requeued when rerunnable and not killed); not current: nothing;
//   - running, and current: it keeps running; its start is recorded if st
//     has none yet; it is killed if a user asked for that (st's KilledBy);
//   - running, and not current (unknown, ended, another attempt or host):
//     the agent kills it.
//
// An attempt is current when its job runs it, keeps it suspended (the
// agent is told again to stop it), or is being requeued by preemption
// (the agent kills it if it still runs; one it does not list is gone, and
// its finish lets the job run again).
//
// For each attempt current in st on host that the agent does not list:
// one whose start was recorded ends EXIT, ReasonLostByAgent (or is
// requeued when rerunnable and not killed); one never started is started
// (the agent never took its order), unless it was killed: it then ends
// EXIT, ReasonKilled. Events come in job order, finishes first, then
// starts; orders are kills, then starts, each in job order. grace goes in
// kill orders; allowRoot in start orders.
func Reconcile(st *state.State, host string, req *RegisterRequest, grace int64, allowRoot bool) Plan {
	type key struct {
		job     event.JobID
		attempt int
	}
	// live: the attempt runs, is suspended, or is being killed after
	// preemption requeued its job.
	live := func(j *state.Job) bool { return j.State == state.Run || j.State == state.Susp || j.Requeuing }
	current := func(job event.JobID, attempt int) *state.Job {
		j := st.Job(job)
		if j == nil || !live(j) || j.Attempt != attempt || len(j.Hosts) == 0 || j.Hosts[0].Host != host {
			return nil
		}
		return j
	}
	requeue := func(j *state.Job) bool { return j.Rerunnable && j.KilledBy == "" }
	var p Plan
	var started []event.Event
	listed := map[key]bool{}
	finished := slices.Clone(req.Finished)
	slices.SortFunc(finished, func(a, b Report) int { return cmp.Compare(a.Job, b.Job) })
	for _, f := range finished {
		listed[key{f.Job, f.Attempt}] = true
		j := current(f.Job, f.Attempt)
		if j == nil {
			continue
		}
		fin := &event.Finished{Job: f.Job, Attempt: f.Attempt, ExitCode: f.ExitCode, Signal: f.Signal, Reason: f.Reason}
		if f.Lost {
			fin.Requeued = requeue(j)
			if fin.Reason == "" {
				fin.Reason = ReasonLostByAgent
			}
		}
		p.Events = append(p.Events, event.Event{Type: event.JobFinished, Finished: fin})
	}
	running := slices.Clone(req.Running)
	slices.SortFunc(running, func(a, b Running) int { return cmp.Or(cmp.Compare(a.Job, b.Job), cmp.Compare(a.Attempt, b.Attempt)) })
	var kills, signals []Order
	for _, r := range running {
		k := key{r.Job, r.Attempt}
		if listed[k] {
			continue
		}
		listed[k] = true
		j := current(r.Job, r.Attempt)
		if j == nil || j.Requeuing {
			kills = append(kills, Order{Kind: KindKill, Job: r.Job, Attempt: r.Attempt, GraceMS: grace})
			continue
		}
		if j.State == state.Susp {
			signals = append(signals, Order{Kind: KindSuspend, Job: r.Job, Attempt: r.Attempt})
		}
		if j.PID == 0 && r.PID > 0 {
			started = append(started, event.Event{Type: event.JobStarted, Started: &event.Started{Job: r.Job, Attempt: r.Attempt, Host: host, PID: r.PID}})
		}
		if j.KilledBy != "" {
			kills = append(kills, Order{Kind: KindKill, Job: r.Job, Attempt: r.Attempt, GraceMS: grace})
		}
	}
	var starts []Order
	for _, j := range st.Jobs {
		if !live(j) || len(j.Hosts) == 0 || j.Hosts[0].Host != host || listed[key{j.Job, j.Attempt}] {
			continue
		}
		switch {
		case j.Requeuing:
			// Gone already: its job may run again.
			p.Events = append(p.Events, event.Event{Type: event.JobFinished, Finished: &event.Finished{Job: j.Job, Attempt: j.Attempt,
				ExitCode: -1, Reason: ReasonKilled}})
		case j.PID != 0:
			p.Events = append(p.Events, event.Event{Type: event.JobFinished, Finished: &event.Finished{Job: j.Job, Attempt: j.Attempt,
				ExitCode: -1, Reason: ReasonLostByAgent, Requeued: requeue(j)}})
		case j.KilledBy != "":
			p.Events = append(p.Events, event.Event{Type: event.JobFinished, Finished: &event.Finished{Job: j.Job, Attempt: j.Attempt,
				ExitCode: -1, Reason: ReasonKilled}})
		default:
			starts = append(starts, StartOrder(j.Job, j.Attempt, &j.Submit, j.Hosts, allowRoot))
			if j.State == state.Susp {
				// Preempted before its agent took the start: it starts
				// stopped.
				starts = append(starts, Order{Kind: KindSuspend, Job: j.Job, Attempt: j.Attempt})
			}
		}
	}
	slices.SortStableFunc(p.Events, func(a, b event.Event) int { return cmp.Compare(a.Finished.Job, b.Finished.Job) })
	p.Events = append(p.Events, started...)
	p.Orders = append(append(kills, starts...), signals...)
	return p
}

// StartOrder returns the order to start attempt attempt of job sub.Job,
// which holds hosts.
func StartOrder(job event.JobID, attempt int, sub *event.Submit, hosts []event.HostAlloc, allowRoot bool) Order {
	return Order{Kind: KindStart, Job: job, Attempt: attempt, Submit: sub, Hosts: hosts, AllowRoot: allowRoot}
}
