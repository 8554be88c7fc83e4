// Package live is the live scheduler's core: the folded state of the event
// log (package state) and the runtime.Scheduler kept in step with it, with
// no I/O. The server (a later package) owns one Core in one goroutine:
//
//   - an event from outside (a submit, a kill, an agent's report, a host
//     change) is checked with Check, appended to the log durably, then
//     applied with Apply, which changes the state and the scheduler;
//   - a scheduling cycle is run with Cycle, which returns its decisions as
//     one CycleDecided event; once that is durable, Commit folds it into
//     the state (the scheduler made the decisions already). If the append
//     fails the server stops: the scheduler is then ahead of the log, and
//     a restart rebuilds both from the log (New).
//
// Times: events carry Unix nanoseconds; the scheduler counts whole seconds
// (Unix time), as the simulator does.
package live

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/xce-sched/xce/cluster"
	"github.com/xce-sched/xce/depend"
	"github.com/xce-sched/xce/framework"
	"github.com/xce-sched/xce/framework/runtime"
	"github.com/xce-sched/xce/gpureq"
	"github.com/xce-sched/xce/internal/event"
	"github.com/xce-sched/xce/internal/state"
	"github.com/xce-sched/xce/jobarray"
	"github.com/xce-sched/xce/resreq"
)

// Core is the state and the scheduler of one live cluster.
type Core struct {
	Cluster *cluster.Cluster
	State   *state.State
	Sched   *runtime.Scheduler
	// Server is the server section of the configuration in force
	// (administrators, allow_root_jobs; docs/daemon.md): set by the
	// caller of New (nil: none known, and the callers' own settings
	// hold), and replaced by each ConfigReloaded applied, so that what
	// the log says is in force is what the server does.
	Server *cluster.Server
	jobs   map[event.JobID]*framework.Job // the scheduler's record of each unfinished job
	reg    framework.Registry
	ended  map[event.JobID]*framework.Job // ended jobs a dependency looked up (lookup.go)
	names  map[nameKey][]event.JobID      // jobs by user and name, for dependencies
}

// New builds the core of cluster c (a configuration: hosts, shared
// resources, queues, limits; its jobs are ignored) from st, the fold of
// the log so far: pending jobs are submitted again, running ones restored
// with exactly what their placement holds, and every host takes the
// status the log gives it (unavail until its agent registered). reg
// supplies the plugins. The reservations conservative queues kept are
// restored (Scheduler.RestoreReservation), and checked by the next cycle.
// It fails when the log holds a job the configuration cannot take (a
// queue, host or resource it no longer has).
func New(c *cluster.Cluster, st *state.State, reg framework.Registry) (*Core, error) {
	cfg := *c
	cfg.Jobs = nil
	cfg.Hosts = slices.Clone(c.Hosts) // their statuses are the core's
	k := &Core{Cluster: &cfg, State: st, jobs: map[event.JobID]*framework.Job{}, reg: reg}
	sched, err := runtime.New(&cfg, runtime.Options{Registry: reg, EndSlack: LiveSlack, Lookup: k})
	if err != nil {
		return nil, err
	}
	k.Sched = sched
	k.index(1)
	for h := range cfg.Hosts {
		k.setHost(cfg.Hosts[h].Name)
	}
	for _, j := range st.Jobs {
		switch j.State {
		case state.Pend:
			spec, err := k.spec(&j.Submit, j.SubmitTime)
			if err != nil {
				return nil, err
			}
			if k.jobs[j.Job], err = sched.Submit(spec); err != nil {
				return nil, err
			}
			if r := j.Reserved; r != nil {
				// A kept reservation goes on (checked by the next cycle);
				// one on a host or resource that is gone is planned afresh.
				if alloc, err := k.alloc(j.Job, r.Hosts, r.Shared); err == nil {
					sched.RestoreReservation(k.jobs[j.Job], r.Start, alloc)
				}
			}
			k.Sched.SetRequeuing(k.jobs[j.Job], j.Requeuing)
		case state.Run, state.Susp:
			spec, err := k.spec(&j.Submit, j.SubmitTime)
			if err != nil {
				return nil, err
			}
			alloc, err := k.alloc(j.Job, j.Hosts, j.Shared)
			if err != nil {
				return nil, err
			}
			if j.State == state.Susp {
				held, err := k.alloc(j.Job, j.Held, nil)
				if err != nil {
					return nil, err
				}
				if k.jobs[j.Job], err = sched.RestoreSuspended(spec, alloc, held, seconds(j.StartTime), seconds(j.SuspendTime), seconds(j.Suspended)); err != nil {
					return nil, err
				}
				continue
			}
			if k.jobs[j.Job], err = sched.Restore(spec, alloc, seconds(j.StartTime)); err != nil {
				return nil, err
			}
		}
	}
	return k, nil
}

func seconds(ns int64) int64 { return ns / 1_000_000_000 }

// Elements returns how many jobs a submit stands for: 1, or its array's
// elements (counted under jobarray.MaxSize; the configuration's
// max_array_size is checked by Check).
func Elements(sub *event.Submit) (int64, error) {
	if sub.Array == "" {
		return 1, nil
	}
	a, err := jobarray.Parse(sub.Array, jobarray.MaxSize)
	if err != nil {
		return 0, err
	}
	return int64(len(a.Indices)), nil
}

// LiveSlack is what the live scheduler adds to every job's estimate, in
// seconds. Its clock counts whole seconds (a cycle at 12.7 s runs at 12)
// while jobs start and end at any instant: a job placed at 12.7 s that
// runs exactly its estimate E ends after 12 + E, the end the scheduler
// expects, and would count as overrunning it, which makes conservative
// backfilling re-plan the reservations behind it every time. With one
// second more, a job that keeps to its estimate ends by its expected end.
const LiveSlack = 1

// spec turns a submitted request into the scheduler's job; submitAt in
// Unix nanoseconds. A job without -W takes its queue's default_runlimit
// as its estimate; either gets LiveSlack more.
func (k *Core) spec(sub *event.Submit, submitAt int64) (*cluster.Job, error) {
	q, ok := k.Cluster.QueueByName(sub.Queue)
	if !ok {
		return nil, fmt.Errorf("job %d: queue %q does not exist", sub.Job, sub.Queue)
	}
	req, err := resreq.Parse(sub.ResReq)
	if err != nil {
		return nil, fmt.Errorf("job %d: resource requirement: %w", sub.Job, err)
	}
	est := sub.Estimate
	if est == 0 {
		est = k.Cluster.Queues[q].DefaultRunLimit
	}
	if est > 0 {
		est += LiveSlack
	}
	var dep *depend.Expr
	if sub.Depend != "" {
		if dep, err = depend.Parse(sub.Depend); err != nil {
			return nil, fmt.Errorf("job %d: dependency: %w", sub.Job, err)
		}
	}
	var gpu *gpureq.Request
	if sub.GPU != "" {
		g, err := gpureq.Parse(sub.GPU)
		if err != nil {
			return nil, fmt.Errorf("job %d: %w", sub.Job, err)
		}
		if req, err = gpureq.Merge(req, g); err != nil {
			return nil, fmt.Errorf("job %d: gpu: %w", sub.Job, err)
		}
		gpu = &g
	}
	return &cluster.Job{ID: cluster.JobID(sub.Job), User: sub.User, Project: sub.Project, Queue: q, Submit: seconds(submitAt),
		TasksMin: sub.TasksMin, TasksMax: sub.TasksMax, ResReq: sub.ResReq, Req: req, Estimate: est,
		Array: cluster.JobID(sub.ArrayJob), ArrayIndex: sub.ArrayIndex, ArrayLimit: sub.ArrayLimit, Name: sub.Name, Depend: dep,
		Exclusive: sub.Exclusive, GPU: gpu}, nil
}

// alloc turns a placement into the scheduler's allocation, with the
// devices it names (Restore takes exactly those).
func (k *Core) alloc(id event.JobID, hosts []event.HostAlloc, shared map[string]float64) (*cluster.JobAlloc, error) {
	c := k.Cluster
	a := &cluster.JobAlloc{}
	for _, ha := range hosts {
		h, ok := c.HostByName(ha.Host)
		if !ok {
			return nil, fmt.Errorf("job %d runs on host %q, which the configuration no longer has", id, ha.Host)
		}
		gpus, ok := cluster.DevicesOf(ha.GPUs)
		if !ok {
			return nil, fmt.Errorf("job %d: GPUs %v on host %s are not distinct device indices", id, ha.GPUs, ha.Host)
		}
		x := cluster.HostAlloc{Host: h, Slots: ha.Slots, GPUs: gpus}
		for _, name := range slices.Sorted(maps.Keys(ha.Res)) {
			r, ok := c.ResourceByName(name)
			if !ok {
				return nil, fmt.Errorf("job %d holds %s, which the configuration no longer has", id, name)
			}
			x.Res = append(x.Res, cluster.ResAmount{Res: r, Amount: ha.Res[name]})
		}
		a.Hosts = append(a.Hosts, x)
	}
	for _, name := range slices.Sorted(maps.Keys(shared)) {
		sh, ok := c.SharedByName(name)
		if !ok {
			return nil, fmt.Errorf("job %d holds shared resource %s, which the configuration no longer has", id, name)
		}
		a.Shared = append(a.Shared, cluster.SharedAmount{Shared: sh, Amount: shared[name]})
	}
	return a, nil
}

// placement turns the scheduler's allocation into a placement's hosts and
// shared amounts, with the devices each host's part holds.
func (k *Core) placement(a *cluster.JobAlloc) ([]event.HostAlloc, map[string]float64) {
	c := k.Cluster
	hosts := make([]event.HostAlloc, 0, len(a.Hosts))
	for _, h := range a.Hosts {
		x := event.HostAlloc{Host: c.Hosts[h.Host].Name, Slots: h.Slots, GPUs: h.GPUs.List()}
		for _, r := range h.Res {
			if x.Res == nil {
				x.Res = map[string]float64{}
			}
			x.Res[c.Resources[r.Res]] += r.Amount
		}
		hosts = append(hosts, x)
	}
	var shared map[string]float64
	for _, s := range a.Shared {
		if shared == nil {
			shared = map[string]float64{}
		}
		shared[c.Shared[s.Shared].Name] += s.Amount
	}
	return hosts, shared
}

// setHost gives host name the status the state says: unavail until its
// agent registered, closed while an administrator has it closed.
func (k *Core) setHost(name string) {
	h, ok := k.Cluster.HostByName(name)
	if !ok {
		return // a host the configuration does not name takes no job
	}
	st := cluster.HostUnavail
	if sh := k.State.Host(name); sh != nil && sh.Up {
		st = cluster.HostOK
		if sh.Closed {
			st = cluster.HostClosed
		}
	}
	k.Sched.SetHostStatus(h, st)
}

// Check returns why e cannot be applied, or nil: the state's checks
// (state.Check), and for a submit that its queue exists and its resource
// requirement parses and compiles against the configuration (a request
// LSF's bsub would refuse), with its task count. A submit that names no
// queue is given the configuration's first (e.Submit is changed, so the
// event records it).
func (k *Core) Check(e event.Event) error {
	_, err := k.check(e)
	return err
}

// check is Check, returning a submit's job as the scheduler takes it.
func (k *Core) check(e event.Event) (*cluster.Job, error) {
	if e.Type == event.JobSubmitted && e.Submit != nil {
		k.defaultQueue(e.Submit)
		if err := k.State.Check(e); err != nil {
			return nil, submitError(e.Submit, err)
		}
		spec, err := k.checkSubmit(e.Submit, e.At)
		return spec, submitError(e.Submit, err)
	}
	if err := k.State.Check(e); err != nil {
		return nil, err
	}
	switch e.Type {
	case event.CycleDecided:
		return nil, fmt.Errorf("event %d: a cycle's decisions are made by Cycle and folded by Commit", e.Index)
	case event.ConfigReloaded:
		_, err := k.reconfigured(e.Config.Text)
		return nil, err
	}
	return nil, nil
}

// reconfigured returns the core the configuration text would give: the
// state as it is, over a scheduler of the new configuration. It fails when
// the text is not a configuration, or when the state's jobs do not fit it
// (a running job's host or resource is gone, a job's queue is gone, a
// request no longer compiles): close a host rather than remove it while
// jobs run there.
func (k *Core) reconfigured(text string) (*Core, error) {
	c, srv, err := cluster.ParseConfig("configuration", []byte(text))
	if err != nil {
		return nil, err
	}
	if len(c.Queues) == 0 {
		return nil, fmt.Errorf("configuration: it has no queue")
	}
	nk, err := New(c, k.State, k.reg)
	if err != nil {
		return nil, err
	}
	nk.Server = srv
	return nk, nil
}

// Precheck validates the events of one request that must be taken all or
// none, before any is applied. A pack of submits: each must be a submit,
// their job IDs must follow on from the next one (an array's elements
// taking one each), and each must pass the checks of a submit that do not
// depend on the others (task count, queue, resource requirement). A pack
// of kills (an array's elements): each must pass its own check, each on a
// different job. A request of one event needs none: Apply checks it.
func (k *Core) Precheck(events []event.Event) error {
	if len(events) < 2 {
		return nil
	}
	if events[0].Type == event.JobKilled {
		seen := map[event.JobID]bool{}
		for i, e := range events {
			if e.Type != event.JobKilled || e.Killed == nil || seen[e.Killed.Job] {
				return fmt.Errorf("request event %d: a pack of kills takes kills of distinct jobs only, not %s", i+1, e.Type)
			}
			seen[e.Killed.Job] = true
			probe := e // each kill is checked as the next event: they are independent
			probe.Index = k.State.Index + 1
			if err := k.Check(probe); err != nil {
				return err
			}
		}
		return nil
	}
	next := k.State.NextJob()
	for i, e := range events {
		if e.Type != event.JobSubmitted || e.Submit == nil {
			return fmt.Errorf("request event %d: only submits are taken together, not %s", i+1, e.Type)
		}
		sub := e.Submit
		if sub.Job != next {
			return fmt.Errorf("request event %d: job %d, the next job is %d", i+1, sub.Job, next)
		}
		n, err := Elements(sub)
		if err != nil {
			return submitError(sub, fmt.Errorf("job %d: %w", sub.Job, err))
		}
		next += n
		if sub.TasksMin < 1 || sub.TasksMax < sub.TasksMin {
			return submitError(sub, fmt.Errorf("job %d: bad task count %d,%d", sub.Job, sub.TasksMin, sub.TasksMax))
		}
		if _, err := k.checkSubmit(sub, e.At); err != nil {
			return submitError(sub, err)
		}
	}
	return nil
}

// defaultQueue puts the configuration's first queue in a submit that
// names none (the event then records it).
func (k *Core) defaultQueue(sub *event.Submit) {
	if sub.Queue == "" && len(k.Cluster.Queues) > 0 {
		sub.Queue = k.Cluster.Queues[0].Name
	}
}

// checkSubmit checks what a submit needs of the configuration: its queue
// exists, and its resource requirement parses and compiles against the
// cluster with its task count (compiled once per requirement, by the
// scheduler). It returns the job as the scheduler takes it.
func (k *Core) checkSubmit(sub *event.Submit, at int64) (*cluster.Job, error) {
	k.defaultQueue(sub)
	el := *sub
	if sub.Array != "" {
		a, err := jobarray.Parse(sub.Array, k.Cluster.MaxArraySize)
		if err != nil {
			return nil, fmt.Errorf("job %d: %w", sub.Job, err)
		}
		// The first element, as the state will make it.
		el.ArrayJob, el.ArrayIndex, el.ArrayLimit = sub.Job, a.Indices[0], a.Limit
	}
	spec, err := k.spec(&el, at)
	if err != nil {
		return nil, err
	}
	if spec.Exclusive && !k.Cluster.Queues[spec.Queue].Exclusive {
		return nil, fmt.Errorf("job %d: queue %s does not take exclusive jobs (-x): its configuration needs exclusive: true", sub.Job, sub.Queue)
	}
	if spec.Depend != nil {
		if err := k.checkRefs(spec.Depend, sub.Job); err != nil {
			return nil, err
		}
	}
	if _, err := k.Sched.Compile(spec); err != nil {
		return nil, fmt.Errorf("job %d: resource requirement: %w", spec.ID, err)
	}
	return spec, nil
}

// Apply folds e (an event from outside the scheduler, appended durably)
// into the state and the scheduler: a submit adds a pending job; a kill of
// a pending job cancels it (a running one is killed by its agent, which
// reports the finish); a finish releases what the job held, or puts a
// requeued job back to pending; a host event changes the host's status.
// On error nothing changed.
func (k *Core) Apply(e event.Event) error {
	spec, err := k.check(e)
	if err != nil {
		return err
	}
	if err := k.State.Apply(e); err != nil {
		return err
	}
	now := seconds(e.At)
	switch e.Type {
	case event.JobSubmitted:
		k.index(e.Submit.Job)
		// One job, or each element of an array (the state made them).
		for id := e.Submit.Job; id < k.State.NextJob(); id++ {
			if id != e.Submit.Job {
				st := k.State.Job(id)
				if spec, err = k.spec(&st.Submit, st.SubmitTime); err != nil {
					return fmt.Errorf("the state took job %d, the scheduler did not: %w", id, err)
				}
			}
			j, err := k.Sched.Submit(spec)
			if err != nil {
				return fmt.Errorf("the state took job %d, the scheduler did not: %w", spec.ID, err)
			}
			k.jobs[event.JobID(spec.ID)] = j
		}
	case event.JobKilled:
		if j := k.jobs[e.Killed.Job]; j != nil && j.State == framework.Pending {
			if err := k.Sched.Cancel(j, now); err != nil {
				return err
			}
			delete(k.jobs, e.Killed.Job)
		}
	case event.JobFinished:
		j := k.jobs[e.Finished.Job]
		if j == nil {
			return fmt.Errorf("job %d: the state runs it, the scheduler does not know it", e.Finished.Job)
		}
		if j.Requeuing {
			// The run preemption requeued is gone: the job may start.
			k.Sched.SetRequeuing(j, false)
			break
		}
		if e.Finished.Requeued {
			k.Sched.Requeue(j, now)
			break
		}
		f := e.Finished
		k.Sched.FinishWith(j, now, f.ExitCode, f.ExitCode != 0 || f.Signal != "" || f.Reason != "")
		delete(k.jobs, e.Finished.Job)
	case event.HostRegistered, event.HostLost, event.HostClosed, event.HostOpened:
		k.setHost(e.Host.Name)
	case event.ConfigReloaded:
		// Nothing is lost or restarted: pending jobs are submitted again
		// and running ones restored with what they hold, over the new
		// configuration (kept reservations restored, then checked).
		nk, err := k.reconfigured(e.Config.Text)
		if err != nil {
			return fmt.Errorf("the state took the configuration, the scheduler did not: %w", err)
		}
		k.Cluster, k.Sched, k.jobs, k.ended, k.names, k.Server = nk.Cluster, nk.Sched, nk.jobs, nk.ended, nk.names, nk.Server
	}
	return nil
}

// Cycle runs one scheduling cycle at now (Unix nanoseconds) and returns
// its decisions as a CycleDecided event (Index 0: the store assigns it):
// the jobs started, each with its attempt and exactly what it holds, and
// every pending job whose main reason, detail or reservation is not what
// the state already says (with its reservation, if any). ok is false when
// the cycle decided nothing new and took in no change since the last
// (Scheduler.Replanned): there is then nothing to record. The
// state takes the event by Commit once it is durable.
func (k *Core) Cycle(ctx context.Context, now int64) (e event.Event, ok bool, err error) {
	considered, err := k.Sched.Cycle(ctx, seconds(now))
	if err != nil {
		return event.Event{}, false, err
	}
	c := &event.Cycle{Number: k.State.Cycles + 1, Now: seconds(now)}
	for _, j := range k.Sched.Resumed() {
		c.Resumed = append(c.Resumed, event.JobID(j.Spec.ID))
	}
	for _, j := range k.Sched.Preempted() {
		id := event.JobID(j.Spec.ID)
		p := event.Preemption{Job: id, Attempt: k.State.Job(id).Attempt, Action: event.PreemptRequeue}
		if j.State == framework.Suspended {
			p.Action = event.PreemptSuspend
			p.Held, _ = k.placement(j.Held)
		} else {
			// Its run is killed; it may start again once that run's
			// finish is in the log.
			k.Sched.SetRequeuing(j, true)
		}
		c.Preempted = append(c.Preempted, p)
	}
	for _, j := range considered {
		id := event.JobID(j.Spec.ID)
		sj := k.State.Job(id)
		switch j.State {
		case framework.Running:
			hosts, shared := k.placement(j.Alloc)
			c.Started = append(c.Started, event.Placement{Job: id, Attempt: sj.Attempt + 1, Hosts: hosts, Shared: shared})
		case framework.Pending:
			if j.Unchanged {
				continue // its decision, reasons and reservation stand
			}
			reason := j.Reasons.Main.String()
			detail := k.Sched.MainDetail(&j.Reasons)
			if reason == sj.Reason && detail == sj.Detail && k.sameReservation(sj.Reserved, j.Reserved) {
				continue
			}
			c.Pending = append(c.Pending, event.Pending{Job: id, Reason: reason, Detail: detail})
			if r := j.Reserved; r != nil {
				hosts, shared := k.placement(r.Alloc)
				c.Reserved = append(c.Reserved, event.Reservation{Job: id, Start: r.Start, Hosts: hosts, Shared: shared})
			}
		}
	}
	// A cycle that took in a change is recorded even when it decided
	// nothing new: the next cycle depends on it (Scheduler.Replanned).
	ok = len(c.Started)+len(c.Pending)+len(c.Resumed)+len(c.Preempted) > 0 || k.Sched.Replanned()
	return event.Event{At: now, Type: event.CycleDecided, Cycle: c}, ok, nil
}

// sameReservation reports whether the state's record of a reservation
// says what the scheduler's does: the same start and slots on the same
// hosts (both none counts as the same).
func (k *Core) sameReservation(rec *event.Reservation, r *framework.Reservation) bool {
	if rec == nil || r == nil {
		return rec == nil && r == nil
	}
	if rec.Start != r.Start || len(rec.Hosts) != len(r.Alloc.Hosts) {
		return false
	}
	for i, h := range r.Alloc.Hosts {
		if rec.Hosts[i].Host != k.Cluster.Hosts[h.Host].Name || rec.Hosts[i].Slots != h.Slots {
			return false
		}
	}
	return true
}

// Commit folds a cycle's decisions, made by Cycle and now durable, into
// the state.
func (k *Core) Commit(e event.Event) error {
	if e.Type != event.CycleDecided {
		return fmt.Errorf("event %d: Commit takes a cycle's decisions, not %s", e.Index, e.Type)
	}
	return k.State.Apply(e)
}

// HostReasons returns, for a pending job, why each host could not take it
// in the last cycle that looked at hosts for it: each reason's text (with
// what it names, "not enough mem") and how many hosts gave it, most first.
// None for a job that is not pending or that no cycle has tried on hosts.
func (k *Core) HostReasons(id event.JobID) []HostReason {
	j := k.jobs[id]
	if j == nil || j.State != framework.Pending {
		return nil
	}
	out := make([]HostReason, 0, len(j.Reasons.Hosts))
	for _, h := range j.Reasons.Hosts {
		out = append(out, HostReason{Text: h.Reason.Text(k.Sched.ReasonDetail(h.Reason, h.Detail)), Hosts: h.Hosts})
	}
	return out
}

// HostReason is one host reason of a pending job and how many hosts gave
// it.
type HostReason struct {
	Text  string `json:"reason"`
	Hosts int    `json:"hosts"`
}
