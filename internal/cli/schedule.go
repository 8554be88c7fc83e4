package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/xce-sched/xce/cluster"
	"github.com/xce-sched/xce/framework/plugins"
	"github.com/xce-sched/xce/framework/runtime"
	"github.com/xce-sched/xce/sim"
)

func newScheduleCmd() *cobra.Command {
	var asJSON bool
	var until int64
	cmd := &cobra.Command{
		Use:   "schedule [--json] SCENARIO.yaml",
		Short: "Run one scheduling cycle over a scenario and show each job's decision",
		Long: `Load a scenario (docs/scenario.md), run one scheduling cycle over its pending
jobs, and print for each job, in picking order, where it runs or why it pends.
Queues are taken in priority order; within a queue jobs are picked by submit
time, then id; each queue's policy (fcfs or firstfit) decides whether a later
job may start when an earlier one cannot.

With --until T, cycles run on a virtual clock at every submit and end time
up to T seconds: jobs are considered from their submit time, and a job that
started at t ends at t + runtime, freeing what it holds. Every job of the
scenario is then listed in file order, with its start and end times.`,
		Args: usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := cluster.Load(args[0])
			if err != nil {
				return badInput(err)
			}
			s, err := runtime.New(c, runtime.Options{Registry: plugins.NewInTreeRegistry()})
			if err != nil {
				return badInput(err)
			}
			var report *report
			if cmd.Flags().Changed("until") {
				if until < 0 {
					return badInput(fmt.Errorf("--until must be >= 0, got %d", until))
				}
				if _, err := sim.Run(cmd.Context(), s, until, nil); err != nil {
					return err
				}
				report = newReport(s, s.Jobs, true)
			} else {
				jobs, err := s.Cycle(cmd.Context(), cycleTime(c))
				if err != nil {
					return err
				}
				report = newReport(s, jobs, false)
			}
			if asJSON {
				return report.writeJSON(cmd.OutOrStdout())
			}
			return report.writeTable(cmd.OutOrStdout())
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the decisions as JSON (docs/scenario.md)")
	cmd.Flags().Int64Var(&until, "until", 0, "run cycles at every event up to `T` seconds instead of one cycle")
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
