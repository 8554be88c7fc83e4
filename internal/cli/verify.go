package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/xce-sched/xce/cluster"
	"github.com/xce-sched/xce/framework/plugins"
	"github.com/xce-sched/xce/internal/api"
	"github.com/xce-sched/xce/internal/client"
	"github.com/xce-sched/xce/internal/event"
	"github.com/xce-sched/xce/internal/store"
	"github.com/xce-sched/xce/sim"
)

func newSimVerifyCmd() *cobra.Command {
	var data, policy, config string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "verify --data DIR [--policy fcfs|firstfit|easy|conservative] [--config FILE] [--json]",
		Short: "Replay a live server's event log through the simulator and compare every decision",
		Long: `Parity check (docs/parity.md): rebuild the state before every cycle the
server recorded in DIR's event log, run the simulator's scheduler (the same
plugins) at the same time on the same inputs, and compare each job's
decision (started, on which hosts with how many slots, or left pending, and
its main reason) with what was recorded. Exit 1 when any differs.

The log is read from DIR/events.db when no server runs on it, else through
the server's socket DIR/xce.sock (an administrator's request). --policy and
--config replace the recorded policy or configuration: the differences are
then the decisions the other policy would have changed, cycle by cycle.`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if data == "" {
				return badInput(errors.New("--data: the server's data directory is required"))
			}
			opts := sim.VerifyOptions{Registry: plugins.NewInTreeRegistry(), Policy: cluster.Policy(policy)}
			if err := checkPolicy(opts.Policy); err != nil {
				return badInput(err)
			}
			if config != "" {
				c, err := loadServerConfig(config)
				if err != nil {
					return badInput(err)
				}
				opts.Config = c
			}
			v := sim.NewVerifier(opts)
			if err := readLog(cmd.Context(), data, func(e event.Event) error { return v.Add(cmd.Context(), e) }); err != nil {
				return err
			}
			rep := v.Report()
			if asJSON {
				if err := writeJSON(cmd.OutOrStdout(), rep); err != nil {
					return err
				}
			} else if err := writeVerify(cmd.OutOrStdout(), rep); err != nil {
				return err
			}
			if n := len(rep.Differences); n > 0 {
				return fmt.Errorf("%d %s between the recorded decisions and the simulator's", n, plural(n, "difference", "differences"))
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&data, "data", "", "the server's data directory (its events.db)")
	fl.StringVar(&policy, "policy", "", "replace every queue's policy: fcfs, firstfit, easy or conservative")
	fl.StringVar(&config, "config", "", "replace every recorded configuration with this file's (hosts, queues, limits)")
	fl.BoolVar(&asJSON, "json", false, `print {"events", "cycles", "decisions", "differences": [...]} as JSON`)
	return cmd
}

// checkPolicy refuses a policy name xce does not have ("" keeps the
// configuration's).
func checkPolicy(p cluster.Policy) error {
	switch p {
	case "", cluster.PolicyFCFS, cluster.PolicyFirstFit, cluster.PolicyEASY, cluster.PolicyConservative, cluster.PolicyBackfill:
		return nil
	}
	return fmt.Errorf("--policy %q: want fcfs, firstfit, easy, conservative or backfill", p)
}

// readLog passes every event of the log in data directory dir to fn, in
// index order: from DIR/events.db when no server holds it, else through
// the server's socket.
func readLog(ctx context.Context, dir string, fn func(event.Event) error) error {
	path := filepath.Join(dir, "events.db")
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return badInput(fmt.Errorf("%s: no event log there (is --data a server's data directory?)", path))
	} else if err != nil {
		return err
	}
	s, err := store.Open(path, store.Options{LockTimeout: 200 * time.Millisecond})
	if errors.Is(err, store.ErrLocked) {
		return readLogFromServer(ctx, filepath.Join(dir, "xce.sock"), fn)
	}
	if err != nil {
		return err
	}
	defer s.Close()
	if err := s.Read(1, fn); errors.Is(err, store.ErrCompacted) {
		return fmt.Errorf("%s: the log's first events were compacted into a snapshot; it can be replayed only from its start", path)
	} else if err != nil {
		return err
	}
	return nil
}

// maskedKeys returns what stands, in a log read through a server, for
// the shared secrets of a cluster.keys event, which the API never shows:
// they decide nothing a verification compares, and must only be well
// formed.
func maskedKeys() *event.Keys {
	return &event.Keys{SigningKey: strings.Repeat("0", 64), AgentToken: "masked"}
}

// readLogFromServer pages through the log of the server at socket. A
// cluster.keys event (a replicated control plane's) comes with its keys
// masked, and gets maskedKeys.
func readLogFromServer(ctx context.Context, socket string, fn func(event.Event) error) error {
	c := client.Dial(socket, "")
	for from := uint64(1); ; {
		rep, err := c.Events(ctx, from, api.MaxEventsPage)
		if err != nil {
			return fmt.Errorf("the log is in use by a server, and reading it through %s failed: %w", socket, err)
		}
		for _, e := range rep.Events {
			if e.Index != from {
				return fmt.Errorf("the server sent event %d, want %d", e.Index, from)
			}
			if e.Type == event.ClusterKeys && e.Keys != nil && *e.Keys == (event.Keys{}) {
				e.Keys = maskedKeys()
			}
			if err := fn(e); err != nil {
				return err
			}
			from++
		}
		if len(rep.Events) == 0 || from > rep.Last {
			return nil
		}
	}
}

// writeVerify prints a verification's counts, then each difference.
func writeVerify(w io.Writer, rep *sim.VerifyReport) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "events read\t%d\n", rep.Events)
	fmt.Fprintf(tw, "cycles checked\t%d\n", rep.Cycles)
	fmt.Fprintf(tw, "decisions compared\t%d\n", rep.Decisions)
	fmt.Fprintf(tw, "differences\t%d\n", len(rep.Differences))
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, d := range rep.Differences {
		at := time.Unix(d.Time, 0).UTC().Format(time.RFC3339)
		if _, err := fmt.Fprintf(w, "cycle %d (%s) job %d: recorded %q, simulator %q\n", d.Cycle, at, d.Job, d.Live, d.Sim); err != nil {
			return err
		}
	}
	return nil
}

// loadServerConfig reads a server configuration file (the scenario format
// without jobs, with its server: section), for --config.
func loadServerConfig(path string) (*cluster.Cluster, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	c, _, err := cluster.ParseConfig(path, data)
	return c, err
}
