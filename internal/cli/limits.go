package cli

import (
	"bytes"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/xce-sched/xce/internal/limitview"
)

func newLimitsCmd() *cobra.Command {
	var asJSON bool
	var sr scenarioRun
	var server conn
	cmd := &cobra.Command{
		Use:   "limits [--json] [--until T] [SCENARIO.yaml]",
		Short: "Show each limit's usage and maximum, like LSF's blimits",
		Long: `Show every limit instance in use: its consumers (the user, queue, host or
project of a per-consumer instance, else the configured list or "all") and
USED/MAX for each limited resource. Limits no job falls under are shown
once with nothing used.

Without a scenario, the live scheduler's limits now (the server is
--server, $XCE_SERVER, else the dev server's). With one, the scenario is
scheduled as 'xce schedule' does (one cycle, or cycles up to --until T)
first.`,
		Args: usageArgs(cobra.MaximumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			var rows []limitview.Row
			if len(args) == 0 {
				var err error
				if rows, err = server.client().Limits(cmd.Context()); err != nil {
					return serverError(err)
				}
			} else {
				s, _, _, err := sr.run(cmd, args[0])
				if err != nil {
					return err
				}
				rows = limitview.Rows(s)
			}
			if asJSON {
				return writeLimitsJSON(cmd.OutOrStdout(), rows)
			}
			return writeLimitsTable(cmd.OutOrStdout(), rows)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the limits as JSON")
	sr.addFlags(cmd)
	serverFlag(cmd, &server)
	return cmd
}

func num(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

func writeLimitsTable(w io.Writer, rows []limitview.Row) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tUSERS\tQUEUES\tHOSTS\tPROJECTS\tUSED/MAX")
	for _, r := range rows {
		parts := make([]string, len(r.Resources))
		for k, name := range r.Resources {
			parts[k] = fmt.Sprintf("%s=%s/%s", safe(name), num(r.Used[k]), num(r.Max[k]))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", safe(r.Name), safe(r.Users), safe(r.Queues), safe(r.Hosts), safe(r.Projects), strings.Join(parts, " "))
	}
	return tw.Flush()
}

func writeLimitsJSON(w io.Writer, rows []limitview.Row) error {
	var b bytes.Buffer
	b.WriteString("{\"limits\": [")
	for i, r := range rows {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, "\n  {\"name\": %s, \"users\": %s, \"queues\": %s, \"hosts\": %s, \"projects\": %s, \"usage\": {",
			quoteJSON(r.Name), quoteJSON(r.Users), quoteJSON(r.Queues), quoteJSON(r.Hosts), quoteJSON(r.Projects))
		for k, name := range r.Resources {
			if k > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "%s: {\"used\": %s, \"max\": %s}", quoteJSON(name), num(r.Used[k]), num(r.Max[k]))
		}
		b.WriteString("}}")
	}
	b.WriteString("\n]}\n")
	_, err := w.Write(b.Bytes())
	return err
}
