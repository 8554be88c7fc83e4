package cli

import (
	"github.com/spf13/cobra"

	"github.com/xce-sched/xce/cluster"
	"github.com/xce-sched/xce/framework/plugins"
	"github.com/xce-sched/xce/framework/runtime"
)

func newScheduleCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "schedule [--json] SCENARIO.yaml",
		Short: "Run one scheduling cycle over a scenario and show each job's decision",
		Long: `Load a scenario (docs/scenario.md), run one scheduling cycle over its pending
jobs, and print for each job, in picking order, where it runs or why it pends.
Queues are taken in priority order; within a queue jobs are picked by submit
time, then id; each queue's policy (fcfs or firstfit) decides whether a later
job may start when an earlier one cannot.`,
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
			jobs, err := s.Cycle(cmd.Context(), cycleTime(c))
			if err != nil {
				return err
			}
			report := newReport(s, jobs)
			if asJSON {
				return report.writeJSON(cmd.OutOrStdout())
			}
			return report.writeTable(cmd.OutOrStdout())
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the decisions as JSON (docs/scenario.md)")
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
