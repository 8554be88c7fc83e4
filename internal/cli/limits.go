package cli

import (
	"bytes"
	"cmp"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/xce-sched/xce/cluster"
	"github.com/xce-sched/xce/framework/runtime"
)

func newLimitsCmd() *cobra.Command {
	var asJSON bool
	var sr scenarioRun
	cmd := &cobra.Command{
		Use:   "limits [--json] [--until T] SCENARIO.yaml",
		Short: "Show each limit's usage and maximum after scheduling, like LSF's blimits",
		Long: `Schedule the scenario as 'xce schedule' does (one cycle, or cycles up to
--until T), then show every limit instance in use: its consumers (the user,
queue, host or project of a per-consumer instance, else the configured list
or "all") and USED/MAX for each limited resource. Limits no job falls under
are shown once with nothing used.`,
		Args: usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, _, _, err := sr.run(cmd, args[0])
			if err != nil {
				return err
			}
			rows := limitRows(s)
			if asJSON {
				return writeLimitsJSON(cmd.OutOrStdout(), rows)
			}
			return writeLimitsTable(cmd.OutOrStdout(), rows)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the limits as JSON")
	sr.addFlags(cmd)
	return cmd
}

type limitRow struct {
	name                           string
	users, queues, hosts, projects string
	resources                      []string
	used, max                      []float64
}

// consumers renders a consumer dimension of a shared instance.
func consumers(c cluster.Consumers) string {
	switch {
	case c.All:
		return "all"
	case len(c.Names) > 0:
		return strings.Join(c.Names, ",")
	}
	return "-"
}

func limitRows(s *runtime.Scheduler) []limitRow {
	c := s.Cluster
	if s.Limits == nil {
		return nil
	}
	seen := make([]bool, len(c.Limits))
	var rows []limitRow
	row := func(l int) limitRow {
		lim := &c.Limits[l]
		return limitRow{name: lim.Name, users: consumers(lim.Users), queues: consumers(lim.Queues),
			hosts: consumers(lim.Hosts), projects: consumers(lim.Projects), resources: s.Limits.Resources(l)}
	}
	for _, in := range s.Limits.Instances() {
		seen[in.Limit] = true
		r := row(in.Limit)
		r.users = cmp.Or(in.User, r.users)
		r.queues = cmp.Or(in.Queue, r.queues)
		r.hosts = cmp.Or(in.Host, r.hosts)
		r.projects = cmp.Or(in.Project, r.projects)
		for k := range r.resources {
			cnt := s.State.Counter(in.First + cluster.CounterID(k))
			r.used, r.max = append(r.used, cnt.Used), append(r.max, cnt.Max)
		}
		rows = append(rows, r)
	}
	for l := range c.Limits {
		if !seen[l] {
			r := row(l)
			for _, lr := range limitMaxes(&c.Limits[l]) {
				r.used, r.max = append(r.used, 0), append(r.max, lr)
			}
			rows = append(rows, r)
		}
	}
	return rows
}

// limitMaxes lists limit l's maxima in the order of Plugin.Resources.
func limitMaxes(l *cluster.Limit) []float64 {
	var m []float64
	if l.Slots >= 0 {
		m = append(m, float64(l.Slots))
	}
	if l.Jobs >= 0 {
		m = append(m, float64(l.Jobs))
	}
	for _, r := range l.Resources {
		m = append(m, r.Max)
	}
	return m
}

func num(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

func writeLimitsTable(w io.Writer, rows []limitRow) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tUSERS\tQUEUES\tHOSTS\tPROJECTS\tUSED/MAX")
	for _, r := range rows {
		parts := make([]string, len(r.resources))
		for k, name := range r.resources {
			parts[k] = fmt.Sprintf("%s=%s/%s", name, num(r.used[k]), num(r.max[k]))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", r.name, r.users, r.queues, r.hosts, r.projects, strings.Join(parts, " "))
	}
	return tw.Flush()
}

func writeLimitsJSON(w io.Writer, rows []limitRow) error {
	var b bytes.Buffer
	b.WriteString("{\"limits\": [")
	for i, r := range rows {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, "\n  {\"name\": %s, \"users\": %s, \"queues\": %s, \"hosts\": %s, \"projects\": %s, \"usage\": {",
			quoteJSON(r.name), quoteJSON(r.users), quoteJSON(r.queues), quoteJSON(r.hosts), quoteJSON(r.projects))
		for k, name := range r.resources {
			if k > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "%s: {\"used\": %s, \"max\": %s}", quoteJSON(name), num(r.used[k]), num(r.max[k]))
		}
		b.WriteString("}}")
	}
	b.WriteString("\n]}\n")
	_, err := w.Write(b.Bytes())
	return err
}
