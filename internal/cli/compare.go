package cli

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/xce-sched/xce/cluster"
	"github.com/xce-sched/xce/sim"
)

// compareResult is what `xce sim --compare --json` prints: the runs in
// the order listed, each as `xce sim --policy P --json` prints it.
type compareResult struct {
	Workload   string      `json:"workload"`
	Hosts      int         `json:"hosts"`
	TotalSlots int         `json:"total_slots"`
	Policies   []string    `json:"policies"`
	Runs       []simResult `json:"runs"`
}

// parseCompare parses the --compare list: policies separated by commas,
// each known and listed once.
func parseCompare(list string) ([]string, error) {
	if strings.TrimSpace(list) == "" {
		return nil, fmt.Errorf("--compare %q: the list is empty; want policies separated by commas, e.g. fcfs,easy,conservative", list)
	}
	items := strings.Split(list, ",")
	seen := make(map[string]bool, len(items))
	for i, p := range items {
		p = strings.TrimSpace(p)
		switch {
		case p == "":
			return nil, fmt.Errorf("--compare %q: item %d is empty", list, i+1)
		case seen[p]:
			return nil, fmt.Errorf("--compare %q: %q is listed twice", list, p)
		}
		if err := checkPolicy(cluster.Policy(p)); err != nil {
			return nil, fmt.Errorf("--compare %q: policy %q is unknown: want fcfs, firstfit, easy, conservative or backfill", list, p)
		}
		seen[p], items[i] = true, p
	}
	return items, nil
}

// runCompare replays w once per policy, each run as `xce sim --policy P`
// would (a fresh sim.Prepare and sim.Replay; setup is the first policy's),
// and prints the runs side by side. With --out, each run's outputs go to
// DIR/<policy>/ and the runs' plots, one figure of each kind, to DIR.
func runCompare(cmd *cobra.Command, f *simFlags, policies []string, setup sim.Setup, w *sim.Workload, read sim.ReadStats) error {
	res := compareResult{Workload: workloadName(f), Policies: policies}
	series := make([][]sim.Point, len(policies))
	for i, p := range policies {
		if i > 0 {
			var err error
			if setup, err = simSetup(f, p, io.Discard); err != nil {
				return err
			}
		}
		run, err := simulate(cmd, f, setup, w, read, fmt.Sprintf("simulating %s (%d/%d)", p, i+1, len(policies)), false)
		if err != nil {
			return fmt.Errorf("policy %s: %w", p, err)
		}
		if f.out != "" {
			if err := run.writeOut(filepath.Join(f.out, p), w); err != nil {
				return fmt.Errorf("policy %s: %w", p, err)
			}
		}
		res.Runs = append(res.Runs, run.res)
		res.Hosts, res.TotalSlots = run.res.Hosts, run.res.TotalSlots
		series[i] = run.rec.Series // the scheduler is let go: only the series is kept
	}
	if f.out != "" {
		caption := compareCaption(res.Workload, res.Hosts, res.TotalSlots, policies)
		if err := drawRuns(f.out, "compare-", policies, series, res.TotalSlots, caption); err != nil {
			return err
		}
	}
	if f.asJSON {
		return writeJSON(cmd.OutOrStdout(), res)
	}
	return writeSimTable(cmd.OutOrStdout(), res.Runs...)
}

// compareCaption says what a comparison replayed and compares, for its
// plots' titles: "KTH.swf, 100 hosts (100 slots): fcfs vs easy".
func compareCaption(workload string, hosts, slots int, policies []string) string {
	return fmt.Sprintf("%s, %s: %s", filepath.Base(workload), clusterCaption(hosts, slots), strings.Join(policies, " vs "))
}
