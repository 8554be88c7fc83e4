package cli

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/xce-sched/xce/internal/api"
	"github.com/xce-sched/xce/jobarray"
)

func newWhyCmd() *cobra.Command {
	var server conn
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "why ID [--json]",
		Short: "Explain why a job is pending, when it will start, and what would start it sooner",
		Long: `Everything about why a job pends: its main pending reason, why each host
could not take it (counted), its forecast start (docs/forecast.md), and the
smallest changes to its request that would let it start now or sooner than
its forecast: fewer tasks, less memory (or another resource) per task,
another open queue, a select[] term dropped, a wider span. Each change was
checked by simulating the cluster with it; only those that help are shown.`,
		Args: usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			ref, err := jobarray.ParseRef(args[0])
			if err != nil {
				return badInput(err)
			}
			rep, err := server.client().Why(cmd.Context(), ref.String())
			if err != nil {
				return serverError(err)
			}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), rep)
			}
			return writeWhy(cmd.OutOrStdout(), rep, time.Local)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, `print {"job", "now", "suggestions": [...]} as JSON`)
	serverFlag(cmd, &server)
	return cmd
}

// writeWhy prints xce why's answer; times in loc.
func writeWhy(w io.Writer, rep api.WhyReply, loc *time.Location) error {
	j := safeJob(rep.Job)
	hosts := func(m map[string]int) string {
		var hs []string
		for _, h := range slices.Sorted(maps.Keys(m)) {
			hs = append(hs, fmt.Sprintf("%d*%s", m[h], h))
		}
		return strings.Join(hs, " ")
	}
	when := func(t int64) string {
		if t <= rep.Now {
			return "now"
		}
		return fmt.Sprintf("in %v (%s)", time.Duration(t-rep.Now)*time.Second, time.Unix(t, 0).In(loc).Format(time.Stamp))
	}
	switch j.State {
	case "PEND":
	case "RUN":
		_, err := fmt.Fprintf(w, "Job %s is not pending: it runs on %s.\n", jobName(j.ID, j.ArrayIndex), hosts(j.Hosts))
		return err
	default:
		_, err := fmt.Fprintf(w, "Job %s is not pending: it ended (%s).\n", jobName(j.ID, j.ArrayIndex), j.State)
		return err
	}
	fmt.Fprintf(w, "Job %s is pending: %s.\n", jobName(j.ID, j.ArrayIndex), reasonText(j))
	if len(j.HostReasons) > 0 {
		fmt.Fprintln(w, "Hosts that could not take it in the last cycle:")
		for _, h := range j.HostReasons {
			fmt.Fprintf(w, "  %d %s: %s\n", h.Hosts, plural(h.Hosts, "host", "hosts"), h.Text)
		}
	}
	if f := j.ForecastStart.Start; f != nil {
		fmt.Fprintf(w, "Forecast: starts %s on %s.\n", when(*f), hosts(j.ForecastHosts))
	} else {
		fmt.Fprintln(w, "Forecast: it never starts as things stand (its request cannot be met, or it waits behind a job of unknown length).")
	}
	if len(rep.Suggestions) == 0 {
		fmt.Fprintln(w, "No change of its tasks, memory, queue, select[] or span[] would start it sooner.")
	} else {
		fmt.Fprintln(w, "It would start sooner with any one of these changes (each checked by simulating the cluster with it):")
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		for _, s := range rep.Suggestions {
			fmt.Fprintf(tw, "  %s\t%s: starts %s\n", safe(s.Change), safe(s.What), when(s.Start))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	if rep.Partial {
		fmt.Fprintln(w, "(The search ran out of time: there may be other changes.)")
	}
	return nil
}
