package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"text/tabwriter"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"

	"github.com/xce-sched/xce/cluster"
	"github.com/xce-sched/xce/framework/plugins"
	"github.com/xce-sched/xce/framework/runtime"
	"github.com/xce-sched/xce/sim"
	"github.com/xce-sched/xce/workload/lublin"
	"github.com/xce-sched/xce/workload/swf"
)

// simFlags are the flags of `xce sim`.
type simFlags struct {
	workload, clusterFile, policy, out, cycle string
	fromData, config, cycles                  string
	tick                                      time.Duration
	hosts, slots, jobs                        int
	seed                                      uint64
	asJSON, skipBad, noClean, dependencies    bool
}

// Defaults of the built-in workload (docs/simulator.md).
const (
	defaultModelHosts = 128
	defaultModelJobs  = 10000
)

func newSimCmd() *cobra.Command {
	var f simFlags
	cmd := &cobra.Command{
		Use:   "sim [--workload FILE.swf[.gz]] [--cluster FILE] [--policy fcfs|firstfit|easy|conservative] [--cycle per-time|per-event] [--json] [--out DIR]",
		Short: "Replay a workload (an SWF trace, or the built-in Lublin–Feitelson model) through the scheduler",
		Long: `Simulate the scheduler on a virtual clock: jobs arrive at their submit times,
run for their recorded run times, and are placed by the very same plugins
and runner as 'xce schedule'. Without --workload, 10,000 jobs of the
Lublin–Feitelson model (seeded, deterministic) run on 128 hosts × 1 slot.

The cluster comes from --cluster (a scenario file: hosts, queues, limits),
or from the trace header (MaxNodes hosts × MaxProcs/MaxNodes slots), which
--hosts and --slots override. Metrics are defined in docs/metrics.md.`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error { return runSim(cmd, &f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.workload, "workload", "", "SWF trace to replay (plain or .gz); default: the Lublin–Feitelson model")
	fl.StringVar(&f.clusterFile, "cluster", "", "scenario file giving hosts, shared resources, queues and limits")
	fl.StringVar(&f.policy, "policy", "", "policy of every queue: fcfs, firstfit, easy or conservative (default: the scenario's, else firstfit)")
	fl.StringVar(&f.out, "out", "", "write schedule.swf, metrics.json, utilization.png and queue.png into `DIR`")
	fl.IntVar(&f.hosts, "hosts", 0, "number of hosts (overrides the trace header)")
	fl.IntVar(&f.slots, "slots", 0, "slots per host (overrides the trace header)")
	fl.IntVar(&f.jobs, "jobs", defaultModelJobs, "number of jobs of the built-in model")
	fl.Uint64Var(&f.seed, "seed", 1, "seed of the built-in model")
	fl.BoolVar(&f.asJSON, "json", false, "print the metrics as JSON")
	fl.BoolVar(&f.skipBad, "skip-bad", false, "skip malformed trace lines (and report how many) instead of failing")
	fl.StringVar(&f.cycle, "cycle", "per-time", "when cycles run: per-time (one after all the events of a second) or per-event (one after every submission, then every job end, as pyss)")
	fl.BoolVar(&f.dependencies, "dependencies", false, "make SWF field 17 (preceding job) a dependency: the job starts once it ended, and field 18's think time after that (docs/dependencies.md)")
	fl.BoolVar(&f.noClean, "no-clean", false, "keep jobs with run time <= 0 or processors <= 0, and run times above the requested time")
	fl.StringVar(&f.fromData, "from-data", "", "replay the job history of a live server's data `DIR` (its event log) instead of a workload, beside what really happened")
	fl.StringVar(&f.config, "config", "", "with --from-data: replace the server's configuration with this file's (hosts, queues, limits)")
	fl.StringVar(&f.cycles, "cycles", "recorded", "with --from-data: recorded (cycles at the server's own instants, as its loop would have run them) or events (the simulator's: a cycle at each event time, on --tick)")
	fl.DurationVar(&f.tick, "tick", time.Second, "with --from-data: the replay's clock step (a finer one for a time-compressed run, e.g. 5ms)")
	cmd.AddCommand(newSimVerifyCmd())
	return cmd
}

func runSim(cmd *cobra.Command, f *simFlags) error {
	if f.cycle != "per-time" && f.cycle != "per-event" {
		return badInput(fmt.Errorf("--cycle %q: want per-time or per-event", f.cycle))
	}
	if f.fromData != "" {
		return runFromData(cmd, f)
	}
	if f.config != "" || cmd.Flags().Changed("tick") {
		return badInput(errors.New("--config and --tick go with --from-data (a scenario for a workload is --cluster)"))
	}
	setup := sim.Setup{Hosts: f.hosts, Slots: f.slots, Policy: cluster.Policy(f.policy), Clean: !f.noClean, PerEvent: f.cycle == "per-event",
		Dependencies: f.dependencies}
	if f.cycle != "per-time" && f.cycle != "per-event" {
		return badInput(fmt.Errorf("--cycle %q: want per-time or per-event", f.cycle))
	}
	if err := checkPolicy(setup.Policy); err != nil {
		return badInput(err)
	}
	if err := checkCounts(cmd, f); err != nil {
		return badInput(err)
	}
	if f.clusterFile != "" {
		if cmd.Flags().Changed("hosts") || cmd.Flags().Changed("slots") {
			return badInput(errors.New("--hosts and --slots describe a cluster of identical hosts: give them or --cluster, not both"))
		}
		c, err := cluster.Load(f.clusterFile)
		if err != nil {
			return badInput(err)
		}
		setup.Base = c
	}
	w, read, err := loadWorkload(f, &setup)
	if err != nil {
		return err
	}
	if read.OutOfOrder > 0 {
		fmt.Fprintf(cmd.ErrOrStderr(), "xce: warning: %v (%d %s out of submit order; jobs are replayed in submit order)\n",
			read.FirstOutOfOrder, read.OutOfOrder, plural(read.OutOfOrder, "record", "records"))
	}
	prep, err := sim.Prepare(w, setup)
	if err != nil {
		return badInput(err)
	}
	var progress sim.Observe
	if bar := progressBar(cmd.ErrOrStderr(), len(prep.Cluster.Jobs)); bar != nil {
		progress = func(e *sim.Event) { _ = bar.Add(len(e.Ended)) }
		defer func() { _ = bar.Finish() }()
	}
	s, rec, sum, err := sim.Replay(cmd.Context(), prep, plugins.NewInTreeRegistry(), progress)
	if err != nil {
		if cmd.Context().Err() != nil {
			return err // interrupted: a runtime failure
		}
		return badInput(err) // the scheduler refused the cluster's configuration
	}
	policy := f.policy
	if policy == "" {
		policy = policyName(prep.Cluster)
	}
	res := simResult{Summary: sum, Workload: workloadName(f), Policy: policy,
		Hosts: len(prep.Cluster.Hosts), TotalSlots: prep.TotalSlots, Dropped: prep.Dropped, Capped: prep.Capped,
		SkippedLines: read.Skipped, OutOfOrder: read.OutOfOrder}
	if f.out != "" {
		if err := writeSimOut(f.out, s, w, rec, res, plotCaption(res.Workload, res.Policy, res.Hosts, res.TotalSlots)); err != nil {
			return err
		}
	}
	if f.asJSON {
		return writeJSON(cmd.OutOrStdout(), res)
	}
	return writeSimTable(cmd.OutOrStdout(), res)
}

// maxModelJobs bounds --jobs: the built-in model's jobs are held in
// memory (about 300 bytes each with the scheduler's copy).
const maxModelJobs = 10_000_000

// checkCounts checks --hosts, --slots and --jobs: when given, each is at
// least 1 and at most its bound (sim.MaxHosts, sim.MaxSlots, maxModelJobs),
// so that no product of them overflows and memory stays bounded.
func checkCounts(cmd *cobra.Command, f *simFlags) error {
	for _, c := range []struct {
		name     string
		v, bound int
	}{{"hosts", f.hosts, sim.MaxHosts}, {"slots", f.slots, sim.MaxSlots}, {"jobs", f.jobs, maxModelJobs}} {
		if !cmd.Flags().Changed(c.name) {
			continue
		}
		if c.v < 1 || c.v > c.bound {
			return fmt.Errorf("--%s %d: want 1 to %d (leave --%s out for the default)", c.name, c.v, c.bound, c.name)
		}
	}
	return nil
}

// simResult is what `xce sim --json` prints: the metrics and what was run.
type simResult struct {
	sim.Summary
	Workload     string `json:"workload"`
	Policy       string `json:"policy"`
	Hosts        int    `json:"hosts"`
	TotalSlots   int    `json:"total_slots"`
	Dropped      int    `json:"dropped"`       // removed by cleaning
	Capped       int    `json:"capped"`        // run times capped at the requested time
	SkippedLines int    `json:"skipped_lines"` // malformed lines and repeated job numbers skipped (--skip-bad)
	OutOfOrder   int    `json:"out_of_order"`  // records submitted before an earlier record (replayed in submit order)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func loadWorkload(f *simFlags, setup *sim.Setup) (*sim.Workload, sim.ReadStats, error) {
	if f.workload == "" {
		hosts := defaultModelHosts
		if setup.Base == nil && f.hosts == 0 {
			setup.Hosts = defaultModelHosts
		}
		if setup.Base != nil {
			hosts = len(setup.Base.Hosts)
		} else if f.hosts > 0 {
			hosts = f.hosts
		}
		slots := max(f.slots, 1)
		m := lublin.New(hosts*slots, f.seed)
		return &sim.Workload{Header: swf.Header{MaxNodes: int64(hosts), MaxProcs: int64(hosts * slots), UnixStartTime: -1}, Jobs: m.Generate(f.jobs)}, sim.ReadStats{}, nil
	}
	w, read, err := sim.ReadSWF(f.workload, f.skipBad)
	if err != nil {
		return nil, read, badInput(err)
	}
	return w, read, nil
}

func workloadName(f *simFlags) string {
	if f.workload == "" {
		return fmt.Sprintf("lublin(jobs=%d,seed=%d)", f.jobs, f.seed)
	}
	return f.workload
}

func policyName(c *cluster.Cluster) string {
	if len(c.Queues) == 1 {
		return string(c.Queues[0].Policy)
	}
	return "per-queue"
}

// progressBar returns a progress bar on w when w is a terminal, else nil.
func progressBar(w io.Writer, n int) *progressbar.ProgressBar {
	file, ok := w.(*os.File)
	if !ok {
		return nil
	}
	if st, err := file.Stat(); err != nil || st.Mode()&os.ModeCharDevice == 0 {
		return nil
	}
	return progressbar.NewOptions(n, progressbar.OptionSetWriter(w), progressbar.OptionSetDescription("simulating"),
		progressbar.OptionShowCount(), progressbar.OptionThrottle(100e6), progressbar.OptionClearOnFinish())
}

func writeSimTable(w io.Writer, r simResult) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	row := func(k, v string) { fmt.Fprintf(tw, "%s\t%s\n", k, v) }
	row("workload", r.Workload)
	row("cluster", fmt.Sprintf("%d hosts, %d slots", r.Hosts, r.TotalSlots))
	row("policy", r.Policy)
	row("jobs completed", fmt.Sprint(r.Jobs))
	row("rejected (can never run)", fmt.Sprint(r.Rejected))
	if r.Unfinished > 0 {
		row("unfinished", fmt.Sprint(r.Unfinished))
	}
	if r.Dropped+r.Capped+r.SkippedLines > 0 {
		row("cleaning", fmt.Sprintf("%d dropped, %d run times capped, %d bad lines skipped", r.Dropped, r.Capped, r.SkippedLines))
	}
	if r.OutOfOrder > 0 {
		row("out of submit order", fmt.Sprint(r.OutOfOrder))
	}
	row("makespan", fmt.Sprintf("%d s", r.MakespanS))
	row("utilization", fmt.Sprintf("%.4f", r.Utilization))
	row("wait mean / median / p95", fmt.Sprintf("%.1f / %.1f / %.1f s", r.WaitMeanS, r.WaitMedianS, r.WaitP95S))
	row("response time mean", fmt.Sprintf("%.1f s", r.ResponseMeanS))
	row("bounded slowdown mean (τ=10 s)", fmt.Sprintf("%.2f", r.BSLDMean))
	row("cycles", fmt.Sprint(r.Cycles))
	reasons := make([]string, 0, len(r.PendingByReasonS))
	for k := range r.PendingByReasonS {
		reasons = append(reasons, k)
	}
	sort.Slice(reasons, func(i, j int) bool { return r.PendingByReasonS[reasons[i]] > r.PendingByReasonS[reasons[j]] })
	for _, k := range reasons {
		row("pending time: "+k, fmt.Sprintf("%.0f job-s", r.PendingByReasonS[k]))
	}
	return tw.Flush()
}

// writeSimOut writes the schedule as SWF (wait and run times as
// simulated), metrics.json and the two plots, titled with caption, into
// dir.
func writeSimOut(dir string, s *runtime.Scheduler, w *sim.Workload, rec *sim.Recorder, res any, caption string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := sim.WriteSchedule(filepath.Join(dir, "schedule.swf"), s, w); err != nil {
		return err
	}
	if err := writeMetricsJSON(dir, res); err != nil {
		return err
	}
	slots := 0
	for _, h := range s.Cluster.Hosts {
		slots += h.Slots
	}
	return writePlots(dir, rec.Series, slots, caption)
}

// plotCaption says what a run replayed, for its plots' titles: "KTH.swf,
// easy, 100 hosts (100 slots)".
func plotCaption(workload, policy string, hosts, slots int) string {
	workload = filepath.Base(workload)
	return fmt.Sprintf("%s, %s, %d %s (%d %s)", workload, policy, hosts, plural(hosts, "host", "hosts"), slots, plural(slots, "slot", "slots"))
}

// writeMetricsJSON writes res, indented, to dir/metrics.json.
func writeMetricsJSON(dir string, res any) error {
	data, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "metrics.json"), append(data, '\n'), 0o644)
}
