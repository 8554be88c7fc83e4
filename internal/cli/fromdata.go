package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/xce-sched/xce/cluster"
	"github.com/xce-sched/xce/framework/plugins"
	"github.com/xce-sched/xce/internal/event"
	"github.com/xce-sched/xce/internal/state"
	"github.com/xce-sched/xce/sim"
)

// foldLog folds the whole log of data directory dir into a state, as a
// server's start does, and returns the instants (Unix ns) of its cycles.
func foldLog(ctx context.Context, dir string) (*state.State, []int64, error) {
	st := state.New()
	var cycles []int64
	err := readLog(ctx, dir, func(e event.Event) error {
		if e.SkipOK && e.Check() != nil {
			st.Index = e.Index // a newer binary's event this one may skip
			return nil
		}
		if e.Type == event.CycleDecided {
			cycles = append(cycles, e.At)
		}
		return st.Apply(e)
	})
	return st, cycles, err
}

// fromDataResult is what `xce sim --from-data --json` prints: the
// recorded and the simulated metrics of the same jobs.
type fromDataResult struct {
	Workload   string      `json:"workload"`
	Policy     string      `json:"policy"`
	Cycles     string      `json:"cycles"` // recorded or events
	Hosts      int         `json:"hosts"`
	TotalSlots int         `json:"total_slots"`
	NeverRan   int         `json:"never_ran"`
	Unfinished int         `json:"unfinished"`
	Recorded   sim.Summary `json:"recorded"`
	Simulated  sim.Summary `json:"simulated"`
}

// runFromData replays a live server's job history (`xce sim --from-data`).
func runFromData(cmd *cobra.Command, f *simFlags) error {
	for _, name := range []string{"workload", "cluster", "hosts", "slots", "jobs", "seed", "skip-bad", "no-clean"} {
		if cmd.Flags().Changed(name) {
			return badInput(fmt.Errorf("--%s does not go with --from-data: the jobs and the cluster are the live server's (--config replaces its configuration)", name))
		}
	}
	if err := checkPolicy(cluster.Policy(f.policy)); err != nil {
		return badInput(err)
	}
	var base *cluster.Cluster
	if f.config != "" {
		c, err := loadServerConfig(f.config)
		if err != nil {
			return badInput(err)
		}
		base = c
	}
	opts := sim.VerifyOptions{Registry: plugins.NewInTreeRegistry(), Policy: cluster.Policy(f.policy), Config: base}
	st, cycles, err := foldLog(cmd.Context(), f.fromData)
	if err != nil {
		return err
	}
	var res fromDataResult
	switch f.cycles {
	case "recorded":
		if cmd.Flags().Changed("tick") || cmd.Flags().Changed("cycle") {
			return badInput(errors.New("--tick and --cycle go with --cycles events (--cycles recorded keeps the server's own clock)"))
		}
		res, err = replayRecorded(cmd.Context(), f, opts, st, cycles)
	case "events":
		res, err = replayEvents(cmd.Context(), f, st, base)
	default:
		return badInput(fmt.Errorf("--cycles %q: want recorded or events", f.cycles))
	}
	if err != nil {
		return err
	}
	if f.asJSON {
		return writeJSON(cmd.OutOrStdout(), res)
	}
	return writeFromData(cmd.OutOrStdout(), res)
}

// replayRecorded replays the history as the server would have run it
// (sim.LiveReplay): the log read again, at the server's instants.
func replayRecorded(ctx context.Context, f *simFlags, opts sim.VerifyOptions, st *state.State, cycles []int64) (fromDataResult, error) {
	c := opts.Config
	interval := time.Duration(0)
	if st.Config != "" {
		rc, srv, err := cluster.ParseConfig("the configuration recorded by the log", []byte(st.Config))
		if err != nil {
			return fromDataResult{}, err
		}
		interval = srv.CycleInterval
		if c == nil {
			c = rc
		}
	}
	if c == nil {
		return fromDataResult{}, badInput(errors.New("the log records no configuration: give one with --config"))
	}
	lr := sim.NewLiveReplay(opts, st, cycles, interval)
	if err := readLog(ctx, f.fromData, func(e event.Event) error { return lr.Add(ctx, e) }); err != nil {
		return fromDataResult{}, err
	}
	if err := lr.Finish(ctx); err != nil {
		return fromDataResult{}, err
	}
	slots := 0
	for _, h := range c.Hosts {
		slots += h.Slots
	}
	replayed := lr.State()
	h, err := sim.FromHistory(st, c, "", time.Second)
	if err != nil {
		return fromDataResult{}, badInput(err)
	}
	res := fromDataResult{Workload: "the job history of " + f.fromData, Policy: policyOf(f.policy, c), Cycles: "recorded",
		Hosts: len(c.Hosts), TotalSlots: slots, NeverRan: h.NeverRan, Unfinished: h.Unfinished,
		Recorded: sim.HistoryMetrics(st, slots, time.Millisecond), Simulated: sim.HistoryMetrics(replayed, slots, time.Millisecond)}
	if f.out != "" {
		sched, err := sim.FromHistory(replayed, c, "", time.Second)
		if err != nil {
			return res, err
		}
		if err := writeHistoryOut(f.out, sched.Workload, sim.HistorySeries(replayed), slots, res); err != nil {
			return res, err
		}
	}
	return res, nil
}

// replayEvents replays the history through the simulator's own clock
// (sim.FromHistory, sim.Replay): a cycle at each event time.
func replayEvents(ctx context.Context, f *simFlags, st *state.State, base *cluster.Cluster) (fromDataResult, error) {
	h, err := sim.FromHistory(st, base, cluster.Policy(f.policy), f.tick)
	if err != nil {
		return fromDataResult{}, badInput(err)
	}
	h.Prepared.PerEvent = f.cycle == "per-event"
	s, rec, sum, err := sim.Replay(ctx, h.Prepared, plugins.NewInTreeRegistry(), nil)
	if err != nil {
		return fromDataResult{}, err
	}
	res := fromDataResult{Workload: "the job history of " + f.fromData, Policy: policyOf(f.policy, h.Prepared.Cluster), Cycles: "events",
		Hosts: h.Prepared.Cluster.NumHosts(), TotalSlots: h.Prepared.TotalSlots, NeverRan: h.NeverRan, Unfinished: h.Unfinished,
		Recorded: h.Recorded, Simulated: sum}
	if f.out != "" {
		if err := writeSimOut(f.out, s, h.Workload, rec, res, plotCaption(res.Workload, res.Policy, res.Hosts, res.TotalSlots)); err != nil {
			return res, err
		}
	}
	return res, nil
}

// policyOf names the policy a replay ran: the one given, else the
// configuration's.
func policyOf(given string, c *cluster.Cluster) string {
	if given != "" {
		return given
	}
	return policyName(c)
}

// writeHistoryOut writes a replayed history's schedule.swf, metrics.json
// and plots into dir.
func writeHistoryOut(dir string, w *sim.Workload, series []sim.Point, slots int, res fromDataResult) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := sim.WriteWorkload(filepath.Join(dir, "schedule.swf"), w); err != nil {
		return err
	}
	if err := writeMetricsJSON(dir, res); err != nil {
		return err
	}
	return writePlots(dir, series, slots, plotCaption(res.Workload, res.Policy, res.Hosts, res.TotalSlots))
}

// writeFromData prints the recorded and simulated metrics side by side.
func writeFromData(w io.Writer, r fromDataResult) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "workload\t%s\n", r.Workload)
	fmt.Fprintf(tw, "cluster\t%d hosts, %d slots\n", r.Hosts, r.TotalSlots)
	fmt.Fprintf(tw, "left out\t%d never ran (killed while pending), %d unfinished\n", r.NeverRan, r.Unfinished)
	fmt.Fprintf(tw, "\trecorded\tsimulated (%s, cycles %s)\n", r.Policy, r.Cycles)
	a, b := r.Recorded, r.Simulated
	fmt.Fprintf(tw, "jobs completed\t%d\t%d\n", a.Jobs, b.Jobs)
	if b.Rejected+b.Unfinished > 0 {
		fmt.Fprintf(tw, "rejected / unfinished\t%d / %d\t%d / %d\n", a.Rejected, a.Unfinished, b.Rejected, b.Unfinished)
	}
	fmt.Fprintf(tw, "makespan\t%d s\t%d s\n", a.MakespanS, b.MakespanS)
	fmt.Fprintf(tw, "utilization\t%.4f\t%.4f\n", a.Utilization, b.Utilization)
	fmt.Fprintf(tw, "wait mean / median / p95\t%.1f / %.1f / %.1f s\t%.1f / %.1f / %.1f s\n", a.WaitMeanS, a.WaitMedianS, a.WaitP95S, b.WaitMeanS, b.WaitMedianS, b.WaitP95S)
	fmt.Fprintf(tw, "response time mean\t%.1f s\t%.1f s\n", a.ResponseMeanS, b.ResponseMeanS)
	fmt.Fprintf(tw, "bounded slowdown mean (τ=10 s)\t%.2f\t%.2f\n", a.BSLDMean, b.BSLDMean)
	fmt.Fprintf(tw, "cycles\t%d\t%d\n", a.Cycles, b.Cycles)
	return tw.Flush()
}
