package cli

import (
	"fmt"
	"slices"

	"github.com/spf13/cobra"

	"github.com/xce-sched/xce/cluster"
	"github.com/xce-sched/xce/framework"
	"github.com/xce-sched/xce/framework/plugins"
	"github.com/xce-sched/xce/framework/runtime"
	"github.com/xce-sched/xce/sim"
)

// scenarioRun holds the flags shared by the commands that schedule a
// scenario: one cycle, or cycles up to --until.
type scenarioRun struct {
	until   int64
	cluster string
}

func (sr *scenarioRun) addFlags(cmd *cobra.Command) {
	cmd.Flags().Int64Var(&sr.until, "until", 0, "run cycles at every event up to `T` seconds instead of one cycle")
	cmd.Flags().StringVar(&sr.cluster, "cluster", "", "take the hosts, queues and the rest of the configuration from `FILE` (a scenario or a slurm.conf) instead of the scenario's own: only its jobs are read (docs/slurm.md)")
}

// run loads the scenario and schedules it: one cycle at the latest submit
// time, or, with --until, cycles at every event up to T. It returns the
// scheduler and the jobs to show: the cycle's, in picking order, or with
// --until every job submitted by T, in file order (multi is then true).
func (sr *scenarioRun) run(cmd *cobra.Command, path string) (s *runtime.Scheduler, jobs []*framework.Job, multi bool, err error) {
	load := cluster.Load
	if sr.cluster != "" {
		load = func(path string) (*cluster.Cluster, error) { return scenarioOn(path, sr.cluster, cmd.ErrOrStderr()) }
	}
	c, err := load(path)
	if err != nil {
		return nil, nil, false, badInput(err)
	}
	s, err = runtime.New(c, runtime.Options{Registry: plugins.NewInTreeRegistry()})
	if err != nil {
		return nil, nil, false, badInput(err)
	}
	if !cmd.Flags().Changed("until") {
		jobs, err = s.Cycle(cmd.Context(), cycleTime(c))
		// The running jobs it preempted follow, suspended or requeued.
		return s, append(slices.Clone(jobs), s.Preempted()...), false, err
	}
	if sr.until < 0 {
		return nil, nil, false, badInput(fmt.Errorf("--until must be >= 0, got %d", sr.until))
	}
	_, err = sim.Run(cmd.Context(), s, sim.Options{Until: sr.until})
	for _, j := range s.Jobs {
		if j.State != framework.Pending || j.Spec.Submit <= sr.until {
			jobs = append(jobs, j) // a job submitted after T is not shown
		}
	}
	return s, jobs, true, err
}

func newScheduleCmd() *cobra.Command {
	var asJSON bool
	var sr scenarioRun
	cmd := &cobra.Command{
		Use:   "schedule [--json] [--until T] [--cluster FILE] SCENARIO.yaml",
		Short: "Run one scheduling cycle over a scenario and show each job's decision",
		Long: `Load a scenario (docs/scenario.md), run one scheduling cycle over its pending
jobs, and print for each job, in picking order, where it runs or why it pends.
Queues are taken in priority order; within a queue jobs are picked by the
queue's picker (submit time, then id; fairshare; or Slurm's multifactor);
each queue's policy (fcfs, firstfit, easy or conservative) decides whether a
later job may start when an earlier one cannot: fcfs never, firstfit whenever
it fits, easy and conservative when it does not delay the reservations they
make for waiting jobs (docs/backfill.md); Slurm's backfill when it delays none
of the jobs before it (docs/slurm.md).

With --cluster FILE (a scenario or a slurm.conf), the hosts, queues and the
rest of the configuration come from FILE, and only the jobs from SCENARIO.

With --until T, cycles run on a virtual clock at every submit and end time
up to T seconds: jobs are considered from their submit time, and a job that
started at t ends at t + runtime, freeing what it holds. Every job of the
scenario is then listed in file order, with its start and end times.`,
		Args: usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, jobs, multi, err := sr.run(cmd, args[0])
			if err != nil {
				return err
			}
			report := newReport(s, jobs, multi)
			if asJSON {
				return report.writeJSON(cmd.OutOrStdout())
			}
			return report.writeTable(cmd.OutOrStdout())
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the decisions as JSON (docs/scenario.md)")
	sr.addFlags(cmd)
	return cmd
}

// cycleTime is the time of the one cycle `xce schedule` runs: the latest
// submit time, so every job of the scenario is considered.
func cycleTime(c *cluster.Cluster) int64 {
	var t int64
	for i := range c.Jobs {
		t = max(t, c.Jobs[i].Submit)
	}
	return t
}
