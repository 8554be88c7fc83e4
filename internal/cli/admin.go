package cli

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/xce-sched/xce/internal/api"
	"github.com/xce-sched/xce/jobarray"
)

func newHistoryCmd() *cobra.Command {
	var server conn
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "history [--json] ID",
		Short: "Show a job's events with their times, like LSF's bhist -l",
		Args:  usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			ref, err := jobarray.ParseRef(args[0])
			if err != nil {
				return badInput(err)
			}
			rep, err := server.client().History(cmd.Context(), ref.String())
			if err != nil {
				return serverError(err)
			}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), rep)
			}
			return writeHistory(cmd.OutOrStdout(), rep, time.Local)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the events as JSON")
	serverFlag(cmd, &server)
	return cmd
}

func newQueuesCmd() *cobra.Command {
	var server conn
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "queues [--json]",
		Short: "Show the queues, like LSF's bqueues",
		Args:  usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			qs, err := server.client().Queues(cmd.Context())
			if err != nil {
				return serverError(err)
			}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), api.QueuesReply{Queues: qs})
			}
			return writeQueues(cmd.OutOrStdout(), qs)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the queues as JSON")
	serverFlag(cmd, &server)
	return cmd
}

func newHostCmd() *cobra.Command {
	var server conn
	cmd := &cobra.Command{
		Use:   "host (close|open) NAME",
		Short: "Close or open a host, like LSF's badmin hclose / hopen (administrators)",
		Long: `Close a host: it takes no new job, its running jobs go on. Open it again.
Only root and the configuration's administrators may.`,
		Args: usageArgs(cobra.ExactArgs(2)),
		RunE: func(cmd *cobra.Command, args []string) error {
			var open bool
			switch args[0] {
			case "close":
			case "open":
				open = true
			default:
				return badInput(fmt.Errorf("host %q: want close or open", args[0]))
			}
			if err := server.client().SetHost(cmd.Context(), args[1], open); err != nil {
				return serverError(err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Host <%s> is %sed\n", safe(args[1]), map[bool]string{true: "open", false: "clos"}[open])
			return nil
		},
	}
	serverFlag(cmd, &server)
	return cmd
}

func newReconfigCmd() *cobra.Command {
	var server conn
	cmd := &cobra.Command{
		Use:   "reconfig",
		Short: "Reload the server's configuration file, like LSF's badmin reconfig (administrators)",
		Long: `Reload the configuration file the server was started with: queues, limits,
new hosts. Nothing is lost or restarted: pending jobs stay pending, running
ones keep what they hold. A file with an error, or one that drops a host
where jobs run or a queue where jobs wait, is refused (close a host rather
than remove it) and nothing changes.`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := server.client().Reconfig(cmd.Context()); err != nil {
				return serverError(err)
			}
			fmt.Fprintln(cmd.OutOrStdout(), "Configuration reloaded")
			return nil
		},
	}
	serverFlag(cmd, &server)
	return cmd
}

func newTokenCmd() *cobra.Command {
	var server conn
	var user string
	var ttl time.Duration
	create := &cobra.Command{
		Use:   "create --user USER [--ttl DURATION]",
		Short: "Create a token for a user, for clients over TCP (administrators)",
		Long: `Print a token that identifies USER (a user of the server's machine) to the
server over TCP, valid for --ttl (default 24h, at most 366 days; as Go
writes durations: 90m, 720h). Give it to the user's client in $XCE_TOKEN or
a --token-file.`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if user == "" {
				return badInput(fmt.Errorf("--user is required"))
			}
			rep, err := server.client().Token(cmd.Context(), user, ttl)
			if err != nil {
				return serverError(err)
			}
			fmt.Fprintln(cmd.OutOrStdout(), rep.Token)
			return nil
		},
	}
	create.Flags().StringVar(&user, "user", "", "the user the token is for")
	create.Flags().DurationVar(&ttl, "ttl", 24*time.Hour, "how long the token is valid")
	serverFlag(create, &server)
	cmd := &cobra.Command{Use: "token", Short: "Manage tokens for clients over TCP"}
	cmd.AddCommand(create)
	return cmd
}

// writeHistory prints a job's events as bhist -l does, times in loc.
func writeHistory(w io.Writer, rep api.HistoryReply, loc *time.Location) error {
	fmt.Fprintf(w, "Job <%s>:\n", jobName(rep.ID, rep.ArrayIndex))
	for _, e := range rep.Events {
		if _, err := fmt.Fprintf(w, "%s: %s\n", time.Unix(0, e.Time).In(loc).Format("Mon Jan _2 15:04:05.000"), safe(e.What)); err != nil {
			return err
		}
	}
	return nil
}

// writeQueues prints queues as bqueues does.
func writeQueues(w io.Writer, qs []api.QueueInfo) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "QUEUE_NAME\tPRIO\tSTATUS\tPOLICY\tPEND\tRUN\tSLOTS")
	for _, q := range qs {
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%d\t%d\t%d\n", safe(q.Name), q.Priority, safe(q.Status), safe(q.Policy), q.Pend, q.Run, q.Slots)
	}
	return tw.Flush()
}
