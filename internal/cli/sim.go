package cli

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
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
	fromData, config, cycles, compare         string
	versus                                    string
	tick                                      time.Duration
	hosts, slots, jobs                        int
	seed                                      uint64
	asJSON, skipBad, noClean, dependencies    bool
	perHost                                   bool
}

// Defaults of the built-in workload (docs/simulator.md).
const (
	defaultModelHosts = 128
	defaultModelJobs  = 10000
)

func newSimCmd() *cobra.Command {
	var f simFlags
	cmd := &cobra.Command{
		Use:   "sim [--workload FILE.swf[.gz]] [--cluster FILE] [--policy fcfs|firstfit|easy|conservative | --compare P1,P2,...] [--cycle per-time|per-event] [--json] [--out DIR]",
		Short: "Replay a workload (an SWF trace, or the built-in Lublin–Feitelson model) through the scheduler",
		Long: `Simulate the scheduler on a virtual clock: jobs arrive at their submit times,
run for their recorded run times, and are placed by the very same plugins
and runner as 'xce schedule'. Without --workload, 10,000 jobs of the
Lublin–Feitelson model (seeded, deterministic) run on 128 hosts × 1 slot.

The cluster comes from --cluster (a scenario file: hosts, queues, limits),
or from the trace header (MaxNodes hosts × MaxProcs/MaxNodes slots), which
--hosts and --slots override. Metrics are defined in docs/metrics.md.

--compare fcfs,easy,conservative replays the same workload once per
policy listed (each run as --policy P would be) and prints their metrics
side by side; with --out DIR, each run's outputs go to DIR/<policy>/ and
DIR/compare-utilization.png and DIR/compare-queue.png draw every run in
one figure, a line per policy.`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error { return runSim(cmd, &f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.workload, "workload", "", "trace to replay: SWF (plain or .gz), sacct -P output or Slurm simulator events, recognized by content; default: the Lublin–Feitelson model")
	fl.StringVar(&f.clusterFile, "cluster", "", "scenario file giving hosts, shared resources, queues and limits, or a slurm.conf (docs/slurm.md)")
	fl.StringVar(&f.versus, "versus-sacct", "", "compare the replay with what Slurm did, from sacct -P output `FILE` (docs/slurm.md)")
	fl.StringVar(&f.policy, "policy", "", "policy of every queue: fcfs, firstfit, easy or conservative (default: the scenario's, else firstfit)")
	fl.StringVar(&f.out, "out", "", "write schedule.swf, metrics.json, utilization.png and queue.png into `DIR` (with --compare: DIR/<policy>/ for each policy, and compare-utilization.png and compare-queue.png)")
	fl.StringVar(&f.compare, "compare", "", "replay the workload once per policy of the comma-separated `LIST` (e.g. fcfs,easy,conservative) and compare them: a table, and with --out one figure of each kind")
	fl.IntVar(&f.hosts, "hosts", 0, "number of hosts (overrides the trace header)")
	fl.IntVar(&f.slots, "slots", 0, "slots per host (overrides the trace header)")
	fl.IntVar(&f.jobs, "jobs", defaultModelJobs, "number of jobs of the built-in model")
	fl.Uint64Var(&f.seed, "seed", 1, "seed of the built-in model")
	fl.BoolVar(&f.asJSON, "json", false, "print the metrics as JSON")
	fl.BoolVar(&f.skipBad, "skip-bad", false, "skip malformed trace lines (and report how many) instead of failing")
	fl.StringVar(&f.cycle, "cycle", "per-time", "when cycles run: per-time (one after all the events of a second) or per-event (one after every submission, then every job end, as pyss)")
	fl.BoolVar(&f.dependencies, "dependencies", false, "make SWF field 17 (preceding job) a dependency: the job starts once it ended, and field 18's think time after that (docs/dependencies.md)")
	fl.BoolVar(&f.perHost, "per-host", false, "keep every host its own entry: no host classes (identical single-slot hosts are otherwise one class, which decides the same and is faster; docs/host-classes.md)")
	fl.BoolVar(&f.noClean, "no-clean", false, "keep jobs with run time <= 0 or processors <= 0, and run times above the requested time")
	fl.StringVar(&f.fromData, "from-data", "", "replay the job history of a live server's data `DIR` (its event log) instead of a workload, beside what really happened")
	fl.StringVar(&f.config, "config", "", "with --from-data: replace the server's configuration with this file's (hosts, queues, limits)")
	fl.StringVar(&f.cycles, "cycles", "recorded", "with --from-data: recorded (cycles at the server's own instants, as its loop would have run them) or events (the simulator's: a cycle at each event time, on --tick)")
	fl.DurationVar(&f.tick, "tick", time.Second, "with --from-data: the replay's clock step (a finer one for a time-compressed run, e.g. 5ms)")
	cmd.AddCommand(newSimVerifyCmd())
	return cmd
}

// simGCPercent is the garbage collector's target (GOGC) while xce sim
// replays a workload of at least simLargeWorkload jobs, unless GOGC is
// set: a replay's memory is its jobs, all live to the end, so the
// collector's headroom above them is most of what more there is; at 50
// the peak is about 1.5 times the live heap instead of twice, at no
// measurable cost in time on a million jobs (BENCHMARKS.md, "Host
// classes"). A smaller replay keeps Go's default, which costs it less
// time (about 9% on the KTH log).
const (
	simGCPercent     = 50
	simLargeWorkload = 200_000
)

func runSim(cmd *cobra.Command, f *simFlags) error {
	if f.cycle != "per-time" && f.cycle != "per-event" {
		return badInput(fmt.Errorf("--cycle %q: want per-time or per-event", f.cycle))
	}
	compare := cmd.Flags().Changed("compare")
	if f.fromData != "" {
		if compare {
			return badInput(errors.New("--compare replays a workload under several policies; it does not go with --from-data"))
		}
		return runFromData(cmd, f)
	}
	if f.config != "" || cmd.Flags().Changed("tick") || cmd.Flags().Changed("cycles") {
		return badInput(errors.New("--config, --cycles and --tick go with --from-data (a scenario for a workload is --cluster; when cycles run is --cycle)"))
	}
	policies := []string{f.policy}
	if compare {
		if cmd.Flags().Changed("policy") {
			return badInput(errors.New("--compare lists the policies to run: give it or --policy, not both"))
		}
		var err error
		if policies, err = parseCompare(f.compare); err != nil {
			return badInput(err)
		}
	} else if err := checkPolicy(cluster.Policy(f.policy)); err != nil {
		return badInput(err)
	}
	if err := checkCounts(cmd, f); err != nil {
		return badInput(err)
	}
	if f.clusterFile != "" && (cmd.Flags().Changed("hosts") || cmd.Flags().Changed("slots")) {
		return badInput(errors.New("--hosts and --slots describe a cluster of identical hosts: give them or --cluster, not both"))
	}
	setup, err := simSetup(f, policies[0], cmd.ErrOrStderr())
	if err != nil {
		return err
	}
	w, read, err := loadWorkload(f, setup.Base, cmd.ErrOrStderr())
	if err != nil {
		return err
	}
	if len(w.Jobs) >= simLargeWorkload && os.Getenv("GOGC") == "" {
		defer debug.SetGCPercent(debug.SetGCPercent(simGCPercent))
	}
	// The output directories exist before any replay: one that cannot be
	// made is known at once, not after a long run.
	if f.out != "" {
		dirs := []string{f.out}
		if compare {
			dirs = dirs[:0]
			for _, p := range policies {
				dirs = append(dirs, filepath.Join(f.out, p))
			}
		}
		for _, d := range dirs {
			if err := os.MkdirAll(d, 0o755); err != nil {
				return badInput(fmt.Errorf("--out: %w", err))
			}
		}
	}
	if read.OutOfOrder > 0 {
		fmt.Fprintf(cmd.ErrOrStderr(), "xce: warning: %v (%d %s out of submit order; jobs are replayed in submit order)\n",
			read.FirstOutOfOrder, read.OutOfOrder, plural(read.OutOfOrder, "record", "records"))
	}
	if compare {
		return runCompare(cmd, f, policies, setup, w, read)
	}
	// Without --out nothing writes the records out after the replay: the
	// scheduler's copy is all it needs, and the records' memory goes back.
	run, err := simulate(cmd, f, setup, w, read, "simulating", f.out == "")
	if err != nil {
		return err
	}
	if f.out != "" {
		if err := run.writeOut(f.out, w); err != nil {
			return err
		}
	}
	if f.asJSON {
		return writeJSON(cmd.OutOrStdout(), run.res)
	}
	if err := writeSimTable(cmd.OutOrStdout(), run.res); err != nil {
		return err
	}
	if run.res.Versus != nil {
		return writeVersus(cmd.OutOrStdout(), f.versus, run.res.Versus)
	}
	return nil
}

// simSetup is the setup of a run of policy ("" for the scenario's, else
// firstfit) as the flags describe it. It loads the --cluster file afresh,
// so that runs of several policies share no cluster; the warnings of
// importing a slurm.conf go to errOut.
func simSetup(f *simFlags, policy string, errOut io.Writer) (sim.Setup, error) {
	setup := sim.Setup{Hosts: f.hosts, Slots: f.slots, Policy: cluster.Policy(policy), Clean: !f.noClean, PerEvent: f.cycle == "per-event",
		Dependencies: f.dependencies, PerHost: f.perHost}
	switch {
	case f.clusterFile != "":
		c, err := loadClusterFile(f.clusterFile, errOut)
		if err != nil {
			return setup, badInput(err)
		}
		setup.Base = c
	case f.workload == "" && f.hosts == 0:
		setup.Hosts = defaultModelHosts
	}
	return setup, nil
}

// simRun is one replay of a workload: what `xce sim` prints, and what
// --out writes from.
type simRun struct {
	res simResult
	s   *runtime.Scheduler
	rec *sim.Recorder
	// nodes are the jobs' hosts as Slurm host lists, for sacct.csv, and
	// errOut where its notes go.
	nodes  map[cluster.JobID]nodeList
	errOut io.Writer
}

// simulate replays w on setup (a fresh sim.Prepare and sim.Replay), with
// a progress bar described by label on a terminal.
// When release is set, w's records are dropped once prepared (w.Jobs,
// w.Requests and w.Slurm are nil afterwards).
func simulate(cmd *cobra.Command, f *simFlags, setup sim.Setup, w *sim.Workload, read sim.ReadStats, label string, release bool) (simRun, error) {
	prep, err := sim.Prepare(w, setup)
	if err != nil {
		return simRun{}, badInput(err)
	}
	if release {
		w.Jobs, w.Requests, w.Slurm = nil, nil, nil
	}
	// The jobs' hosts, for sacct.csv: only with --out (a replay keeps no
	// hosts of finished jobs, and a large one should not).
	var nodes map[cluster.JobID]nodeList
	var progress sim.Observe
	if f.out != "" {
		nodes = map[cluster.JobID]nodeList{}
		progress = recordNodes(prep.Cluster, nodes)
	}
	if bar := progressBar(cmd.ErrOrStderr(), len(prep.Cluster.Jobs), label); bar != nil {
		record := progress
		progress = func(e *sim.Event) {
			if record != nil {
				record(e)
			}
			_ = bar.Add(len(e.Ended))
		}
		defer func() { _ = bar.Finish() }()
	}
	s, rec, sum, err := sim.Replay(cmd.Context(), prep, plugins.NewInTreeRegistry(), progress)
	if err != nil {
		if cmd.Context().Err() != nil {
			return simRun{}, err // interrupted: a runtime failure
		}
		return simRun{}, badInput(err) // the scheduler refused the cluster's configuration
	}
	policy := string(setup.Policy)
	if policy == "" {
		policy = policyName(prep.Cluster)
	}
	res := simResult{Summary: sum, Workload: workloadName(f), Policy: policy,
		Hosts: prep.Cluster.NumHosts(), TotalSlots: prep.TotalSlots, Dropped: prep.Dropped, Capped: prep.Capped,
		SkippedLines: read.Skipped, OutOfOrder: read.OutOfOrder}
	if f.versus != "" {
		if res.Versus, err = versusSacct(f.versus, s, prep.TotalSlots); err != nil {
			return simRun{}, badInput(fmt.Errorf("--versus-sacct: %w", err))
		}
	}
	return simRun{res: res, s: s, rec: rec, nodes: nodes, errOut: cmd.ErrOrStderr()}, nil
}

// writeOut writes the run's outputs (writeSimOut) into dir, and the
// replay as sacct -P output, sacct.csv (docs/slurm.md).
func (r simRun) writeOut(dir string, w *sim.Workload) error {
	if err := writeSimOut(dir, r.s, w, r.rec, r.res, plotCaption(r.res.Workload, r.res.Policy, r.res.Hosts, r.res.TotalSlots)); err != nil {
		return err
	}
	return writeSacct(filepath.Join(dir, "sacct.csv"), r.s, w, r.nodes, r.errOut)
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
	// Versus is the comparison with --versus-sacct's records (docs/slurm.md).
	Versus *sim.Versus `json:"versus_sacct,omitempty"`
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// loadWorkload reads --workload (SWF, or Slurm's: loadSlurmWorkload,
// its notes to errOut), or generates the built-in model's jobs for the
// cluster: base's hosts when given, else --hosts (default 128) × --slots.
func loadWorkload(f *simFlags, base *cluster.Cluster, errOut io.Writer) (*sim.Workload, sim.ReadStats, error) {
	if f.workload == "" {
		hosts := defaultModelHosts
		if base != nil {
			hosts = len(base.Hosts)
		} else if f.hosts > 0 {
			hosts = f.hosts
		}
		slots := max(f.slots, 1)
		m := lublin.New(hosts*slots, f.seed)
		return &sim.Workload{Header: swf.Header{MaxNodes: int64(hosts), MaxProcs: int64(hosts * slots), UnixStartTime: -1}, Jobs: m.Generate(f.jobs)}, sim.ReadStats{}, nil
	}
	if w, ok, err := loadSlurmWorkload(f.workload, base, errOut); ok || err != nil {
		if err != nil {
			return nil, sim.ReadStats{}, badInput(err)
		}
		return w, sim.ReadStats{}, nil
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

// progressBar returns a progress bar described by label on w when w is a
// terminal, else nil.
func progressBar(w io.Writer, n int, label string) *progressbar.ProgressBar {
	file, ok := w.(*os.File)
	if !ok {
		return nil
	}
	if st, err := file.Stat(); err != nil || st.Mode()&os.ModeCharDevice == 0 {
		return nil
	}
	return progressbar.NewOptions(n, progressbar.OptionSetWriter(w), progressbar.OptionSetDescription(label),
		progressbar.OptionShowCount(), progressbar.OptionThrottle(100e6), progressbar.OptionClearOnFinish())
}

// writeSimTable prints the metrics of one run or, side by side, of runs
// of one workload on one cluster (one column per run, headed by its
// policy). What is the same for every run (the workload, the cluster,
// cleaning) is printed once.
func writeSimTable(w io.Writer, runs ...simResult) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	r := runs[0]
	once := func(k, v string) { fmt.Fprintf(tw, "%s\t%s\n", k, v) }
	row := func(k string, v func(r simResult) string) {
		fmt.Fprint(tw, k)
		for _, r := range runs {
			fmt.Fprintf(tw, "\t%s", v(r))
		}
		fmt.Fprintln(tw)
	}
	some := func(has func(r simResult) bool) bool { return slices.ContainsFunc(runs, has) }
	// The rows printed once come first: a row of one cell between rows of
	// one cell per run would break the runs' columns.
	once("workload", r.Workload)
	once("cluster", fmt.Sprintf("%d hosts, %d slots", r.Hosts, r.TotalSlots))
	if r.Dropped+r.Capped+r.SkippedLines > 0 {
		once("cleaning", fmt.Sprintf("%d dropped, %d %s capped, %d bad %s skipped", r.Dropped,
			r.Capped, plural(r.Capped, "run time", "run times"), r.SkippedLines, plural(r.SkippedLines, "line", "lines")))
	}
	if r.OutOfOrder > 0 {
		once("out of submit order", fmt.Sprint(r.OutOfOrder))
	}
	row("policy", func(r simResult) string { return r.Policy })
	row("jobs completed", func(r simResult) string { return fmt.Sprint(r.Jobs) })
	row("rejected (can never run)", func(r simResult) string { return fmt.Sprint(r.Rejected) })
	if some(func(r simResult) bool { return r.Unfinished > 0 }) {
		row("unfinished", func(r simResult) string { return fmt.Sprint(r.Unfinished) })
	}
	row("makespan", func(r simResult) string { return fmt.Sprintf("%d s", r.MakespanS) })
	row("utilization", func(r simResult) string { return fmt.Sprintf("%.4f", r.Utilization) })
	row("wait mean / median / p95", func(r simResult) string {
		return fmt.Sprintf("%.1f / %.1f / %.1f s", r.WaitMeanS, r.WaitMedianS, r.WaitP95S)
	})
	row("response time mean", func(r simResult) string { return fmt.Sprintf("%.1f s", r.ResponseMeanS) })
	row("bounded slowdown mean (τ=10 s)", func(r simResult) string { return fmt.Sprintf("%.2f", r.BSLDMean) })
	row("cycles", func(r simResult) string { return fmt.Sprint(r.Cycles) })
	// Reasons by the job-seconds of all the runs, most first (ties by name).
	total := map[string]float64{}
	for _, r := range runs {
		for k, v := range r.PendingByReasonS {
			total[k] += v
		}
	}
	reasons := slices.Collect(maps.Keys(total))
	slices.SortFunc(reasons, func(a, b string) int {
		if c := cmp.Compare(total[b], total[a]); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	for _, k := range reasons {
		row("pending time: "+k, func(r simResult) string { return fmt.Sprintf("%.0f job-s", r.PendingByReasonS[k]) })
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
	return fmt.Sprintf("%s, %s, %s", filepath.Base(workload), policy, clusterCaption(hosts, slots))
}

// clusterCaption describes a cluster for a plot's title: "100 hosts (100
// slots)".
func clusterCaption(hosts, slots int) string {
	return fmt.Sprintf("%d %s (%d %s)", hosts, plural(hosts, "host", "hosts"), slots, plural(slots, "slot", "slots"))
}

// writeMetricsJSON writes res, indented, to dir/metrics.json.
func writeMetricsJSON(dir string, res any) error {
	data, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "metrics.json"), append(data, '\n'), 0o644)
}
