package sim

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/xce-sched/xce/cluster"
	"github.com/xce-sched/xce/framework"
	"github.com/xce-sched/xce/internal/event"
	"github.com/xce-sched/xce/internal/live"
	"github.com/xce-sched/xce/internal/state"
)

// VerifyOptions configure a Verifier.
type VerifyOptions struct {
	// Registry supplies the plugins (plugins.NewInTreeRegistry()).
	Registry framework.Registry
	// Policy, when set, replaces every queue's policy in every
	// configuration the log records (or in Config).
	Policy cluster.Policy
	// Config, when set, replaces every configuration the log records.
	Config *cluster.Cluster
}

// Difference is one job whose decision in one cycle was not the one the
// live server recorded: Live and Sim are "start N*HOST ..." (the slots on
// each host, in the placement's order) or "pend REASON" (the main reason's
// code; "pend" alone for a job no cycle has given one yet). Time is the
// cycle's, in Unix seconds. A host's part that holds GPUs is followed by
// its devices: "start 1*g1[0 1]".
type Difference struct {
	Cycle int64  `json:"cycle"`
	Time  int64  `json:"time"`
	Job   int64  `json:"job"`
	Live  string `json:"live"`
	Sim   string `json:"sim"`
}

// VerifyReport is what Verify found: the events read, the recorded cycles
// replayed, the decisions compared (in each cycle, one per job pending
// before it) and every difference, in log order.
type VerifyReport struct {
	Events      uint64       `json:"events"`
	Cycles      int          `json:"cycles"`
	Decisions   int          `json:"decisions"`
	Differences []Difference `json:"differences"`
}

// Verifier replays a live server's event log (the seed's sim_verify,
// docs/parity.md): it folds every event into a state of its own, keeps a
// scheduler (runtime.Scheduler, the same registry and plugins as `xce
// sim`, committing in memory) in step with it as the server does, and at
// each recorded cycle runs that scheduler at the cycle's time and
// compares each job's decision — started, on which hosts with how many
// slots, or left pending, with which main reason — with what the server
// recorded. The recorded decisions are then folded in, whatever the
// scheduler decided; after a cycle with a difference the scheduler is
// rebuilt from the state, so one difference does not cascade (the
// scheduler's own memory, such as conservative backfilling's kept
// reservations, starts afresh there, as after a server's restart).
// Feed it with Add, in index order.
type Verifier struct {
	rc     replayCore
	report VerifyReport
}

// replayCore is a state folded from a log and the scheduler kept in step
// with it, as the server keeps its own, under VerifyOptions.
type replayCore struct {
	opts VerifyOptions
	st   *state.State
	core *live.Core // nil until the log gave a configuration
}

// NewVerifier returns a verifier of a log from its first event.
func NewVerifier(opts VerifyOptions) *Verifier {
	return &Verifier{rc: replayCore{opts: opts, st: state.New()}, report: VerifyReport{Differences: []Difference{}}}
}

// Report returns what the verifier found so far.
func (v *Verifier) Report() *VerifyReport { return &v.report }

// Add replays event e, the next of the log. An event of a type this
// binary does not know that may be skipped (SkipOK) is passed over. The
// error names the event when the log cannot be replayed: an event the
// fold refuses, a cycle before any configuration, or a job or running
// allocation that the configuration in use (Config, Policy) cannot take.
func (v *Verifier) Add(ctx context.Context, e event.Event) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	v.report.Events++
	if e.SkipOK && e.Check() != nil {
		v.rc.st.Index = e.Index
		return nil
	}
	if e.Type != event.CycleDecided {
		return v.rc.apply(e)
	}
	if v.rc.core == nil {
		if v.rc.opts.Config == nil {
			return fmt.Errorf("event %d: cycle %d comes before any configuration in the log (give one with --config)", e.Index, e.Cycle.Number)
		}
		if err := v.rc.rebuild(e.Index); err != nil {
			return err
		}
	}
	return v.cycle(ctx, e)
}

// apply folds e, an event other than a cycle, into the state and the
// scheduler; a configuration or a server's start rebuilds the scheduler
// from the state, as the server does there.
func (rc *replayCore) apply(e event.Event) error {
	switch {
	case e.Type == event.ConfigReloaded || e.Type == event.ServerStarted:
		if err := rc.st.Apply(e); err != nil {
			return err
		}
		return rc.rebuild(e.Index)
	case rc.core == nil:
		return rc.st.Apply(e)
	}
	if err := rc.core.Apply(e); err != nil {
		return fmt.Errorf("event %d (%s): %w", e.Index, e.Type, err)
	}
	return nil
}

// rebuild makes a new scheduler over the state, with the configuration in
// force (or Config) and Policy.
func (rc *replayCore) rebuild(index uint64) error {
	var c *cluster.Cluster
	if rc.opts.Config != nil {
		cp := *rc.opts.Config
		c = &cp
	} else {
		if rc.st.Config == "" {
			return nil // a start before any configuration: nothing to rebuild
		}
		var err error
		if c, _, err = cluster.ParseConfig("the configuration recorded by the log", []byte(rc.st.Config)); err != nil {
			return fmt.Errorf("event %d: %w", index, err)
		}
	}
	if rc.opts.Policy != "" {
		c.Queues = append([]cluster.Queue(nil), c.Queues...)
		for i := range c.Queues {
			c.Queues[i].Policy = rc.opts.Policy
		}
	}
	core, err := live.New(c, rc.st, rc.opts.Registry)
	if err != nil {
		return fmt.Errorf("event %d: %w", index, err)
	}
	rc.core = core
	return nil
}

// cycle replays recorded cycle e and compares its decisions.
func (v *Verifier) cycle(ctx context.Context, e event.Event) error {
	// The decisions of each job pending before the cycle, as the state
	// says they stand; both sides list only what changes.
	type before struct {
		job    *state.Job
		reason string
	}
	var pending []before
	for _, j := range v.rc.st.Jobs {
		if j.State == state.Pend {
			pending = append(pending, before{j, j.Reason})
		}
	}
	sim, _, err := v.rc.core.Cycle(ctx, e.At)
	if err != nil {
		return fmt.Errorf("event %d: cycle %d: %w", e.Index, e.Cycle.Number, err)
	}
	if err := v.rc.core.Commit(e); err != nil {
		return err
	}
	v.report.Cycles++
	v.report.Decisions += len(pending)
	live, simd := decisions(e.Cycle), decisions(sim.Cycle)
	differ := false
	for _, p := range pending {
		id := p.job.Job
		l, ok := live[id]
		if !ok {
			l = pend(p.reason)
		}
		s, ok := simd[id]
		if !ok {
			s = pend(p.reason)
		}
		if l != s {
			differ = true
			v.report.Differences = append(v.report.Differences, Difference{Cycle: e.Cycle.Number, Time: e.Cycle.Now, Job: id, Live: l, Sim: s})
		}
	}
	if differ {
		return v.rc.rebuild(e.Index)
	}
	return nil
}

// decisions returns what a cycle decided for each job it names.
func decisions(c *event.Cycle) map[event.JobID]string {
	out := make(map[event.JobID]string, len(c.Started)+len(c.Pending))
	for _, p := range c.Started {
		var b strings.Builder
		b.WriteString("start")
		for _, h := range p.Hosts {
			b.WriteString(" " + strconv.Itoa(h.Slots) + "*" + h.Host)
			if len(h.GPUs) > 0 {
				b.WriteString(fmt.Sprintf("%v", h.GPUs)) // the devices, "[0 1]"
			}
		}
		out[p.Job] = b.String()
	}
	for _, p := range c.Pending {
		out[p.Job] = pend(p.Reason)
	}
	return out
}

func pend(reason string) string {
	if reason == "" {
		return "pend"
	}
	return "pend " + reason
}
