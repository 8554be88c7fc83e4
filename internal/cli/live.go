package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/xce-sched/xce/cluster"
	"github.com/xce-sched/xce/internal/api"
	"github.com/xce-sched/xce/internal/client"
	"github.com/xce-sched/xce/internal/daemon"
	"github.com/xce-sched/xce/internal/event"
	"github.com/xce-sched/xce/internal/submit"
	"github.com/xce-sched/xce/jobarray"
)

// serverError turns a client error into the command's error: a request
// the server refused as bad (400, 413) is bad input (exit 2); anything
// else (unreachable, forbidden, not found, stopping) a failure (exit 1).
func serverError(err error) error {
	var e *api.Error
	if errors.As(err, &e) && (e.Status == http.StatusBadRequest || e.Status == http.StatusRequestEntityTooLarge) {
		return badInput(err)
	}
	return err
}

// conn is where a command finds the server: --server and --token-file.
type conn struct{ server, tokenFile string }

// client returns the client of the server (whose calls fail with the
// reason when it cannot be made: a TCP server without a token).
func (c *conn) client() *client.Client {
	return client.Dial(client.Socket(c.server), c.tokenFile)
}

// serverFlag adds --server and --token-file to cmd.
func serverFlag(cmd *cobra.Command, to *conn) {
	cmd.Flags().StringVar(&to.server, "server", "", "the server: a socket path, or http(s)://host:port with a token; a comma-separated list of them for a replicated control plane (docs/ha.md) (default $XCE_SERVER, else the dev server's socket)")
	cmd.Flags().StringVar(&to.tokenFile, "token-file", "", "a file holding the token for a server over TCP (default $XCE_TOKEN)")
}

func newServeCmd() *cobra.Command {
	var config, data, listen, cert, key, ca, raftAddr string
	var peers []string
	var snapThreshold, trailingLogs uint64
	var snapInterval time.Duration
	var dev bool
	cmd := &cobra.Command{
		Use:   "serve (--dev | --config FILE --data DIR) [--listen ADDR] [--tls-cert FILE --tls-key FILE] [--raft ADDR --peers RAFTADDR,...]",
		Short: "Run the live scheduler's server",
		Long: `Run the live scheduler: the event log in the data directory, the API on the
data directory's Unix socket (xce.sock). With --dev, a one-host cluster of
this machine (its cores as slots, its memory) with the agent inside this
process and the invoking user's jobs allowed (root included); its data
goes to a fixed temporary directory, where 'xce submit' and the other
commands find it without any setting, unless --data says otherwise.
With --config, the hosts' agents ('xce agent') connect on --listen
(default ` + api.DefaultListen + `) with the token the server writes to
DIR/agent.token at its first start. The same listener serves users with
a token ('xce token create'), the web dashboard at / and the Prometheus
metrics at /metrics (docs/dashboard.md, docs/metrics-live.md). A dev
server listens for users and browsers on a free loopback port unless
--listen says where ("" for none), and prints a link that logs you in.
SIGINT or SIGTERM stops it cleanly (a dev server's jobs are killed; a
configured cluster's jobs go on under their agents).
With --raft, the server is one member of a replicated control plane of 3
or 5 servers (docs/ha.md): --raft is its raft address, --peers the raft
addresses of the first members (all of them, this one included), from
which a member without raft state bootstraps the cluster. A follower
answers reads and forwards writes to the leader's --listen address, as
their caller; with TLS it checks the leader's certificate against the
system's roots, its own --tls-cert chain and --tls-ca.
docs/daemon.md describes the configuration and what is not built yet.`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			var c *cluster.Cluster
			var s *cluster.Server
			var text string
			var err error
			switch {
			case dev && config != "":
				return badInput(errors.New("--dev runs this machine as the cluster: give --dev or --config, not both"))
			case dev:
				if !cmd.Flags().Changed("listen") {
					listen = "127.0.0.1:0" // a free port: several dev servers may run
				}
				c, s, text, err = daemon.DevCluster()
				if data == "" {
					data = filepath.Dir(client.DevSocket(os.Getuid()))
				}
			case config == "" || data == "":
				return badInput(errors.New("give --dev, or --config FILE and --data DIR"))
			default:
				c, s, text, err = loadConfigFile(config, cmd.ErrOrStderr())
			}
			if err != nil {
				return badInput(err)
			}
			if len(c.Queues) == 0 {
				return badInput(fmt.Errorf("%s: the configuration has no queue", config))
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			errOut := cmd.ErrOrStderr()
			if len(peers) > 0 && raftAddr == "" {
				return badInput(errors.New("--peers needs --raft: this server's raft address"))
			}
			for _, f := range []string{"raft-snapshot-threshold", "raft-trailing-logs", "raft-snapshot-interval"} {
				if cmd.Flags().Changed(f) && raftAddr == "" {
					return badInput(fmt.Errorf("--%s needs --raft: it tunes a member of a replicated control plane", f))
				}
			}
			if snapInterval != 0 && snapInterval < 5*time.Millisecond {
				return badInput(fmt.Errorf("--raft-snapshot-interval %v: at least 5ms", snapInterval))
			}
			if ca == "" {
				ca = os.Getenv("XCE_CA")
			}
			return daemon.Serve(ctx, daemon.Options{Cluster: c, Server: s, ConfigText: text, Version: Version, ConfigPath: config, DataDir: data, Dev: dev, Listen: listen, TLSCert: cert, TLSKey: key, TLSCA: ca,
				Raft: raftAddr, Peers: peers, RaftLog: errOut,
				RaftSnapshotThreshold: snapThreshold, RaftTrailingLogs: trailingLogs, RaftSnapshotInterval: snapInterval,
				Logf: logTo(errOut),
				Ready: func(socket, addr string) {
					switch {
					case addr != "" && dev:
						fmt.Fprintf(errOut, "xce: serving on %s, users and the dashboard on %s\n", socket, addr)
					case addr != "":
						fmt.Fprintf(errOut, "xce: serving on %s, agents on %s\n", socket, addr)
						scheme := "http"
						if cert != "" {
							scheme = "https"
						}
						fmt.Fprintf(errOut, "xce: dashboard at %s://%s/ (log in with a token: xce token create --user NAME)\n", scheme, addr)
					default:
						fmt.Fprintf(errOut, "xce: serving on %s\n", socket)
					}
				},
				Login: func(dash, link string) {
					fmt.Fprintf(errOut, "xce: dashboard at %s; this link logs you in for a day: %s\n", dash, link)
				}})
		},
	}
	fl := cmd.Flags()
	fl.BoolVar(&dev, "dev", false, "a one-host cluster of this machine, with the agent inside the server")
	fl.StringVar(&config, "config", "", "the cluster configuration (docs/daemon.md), or a slurm.conf (docs/slurm.md)")
	fl.StringVar(&config, "cluster", "", "the same as --config")
	fl.StringVar(&data, "data", "", "the data directory: event log, socket, agent token")
	fl.StringVar(&listen, "listen", api.DefaultListen, "the TCP address for agents, users with tokens and the dashboard (--dev: a free loopback port; \"\" for none); not loopback: needs --tls-cert and --tls-key")
	fl.StringVar(&cert, "tls-cert", "", "the TCP listener's TLS certificate chain (PEM)")
	fl.StringVar(&key, "tls-key", "", "the TCP listener's TLS private key (PEM)")
	fl.StringVar(&ca, "tls-ca", "", "--raft with TLS: the certificate authority (PEM) of the other members' certificates, which a follower checks the leader's against when it forwards a write, besides the system's roots and its own --tls-cert chain (default $XCE_CA)")
	fl.StringVar(&raftAddr, "raft", "", "this server's raft address, host:port: a member of a replicated control plane (docs/ha.md)")
	fl.StringSliceVar(&peers, "peers", nil, "the raft addresses of the cluster's first members, this one's included (bootstrap)")
	fl.Uint64Var(&snapThreshold, "raft-snapshot-threshold", 0, "--raft tuning: raft entries since the last snapshot before the member takes another and compacts its raft log (0: raft's default, 8192)")
	fl.Uint64Var(&trailingLogs, "raft-trailing-logs", 0, "--raft tuning: raft entries kept after a snapshot for members a little behind; one further behind is sent the snapshot (0: --raft-snapshot-threshold when given, else raft's default, 10240)")
	fl.DurationVar(&snapInterval, "raft-snapshot-interval", 0, "--raft tuning: how often the member checks whether to take a snapshot, plus a random extra of up to as much (0: raft's default, 2m0s)")
	return cmd
}

// logTo returns a log function writing "xce: " lines to w, one at a time.
func logTo(w io.Writer) func(format string, args ...any) {
	var mu sync.Mutex
	return func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(w, "xce: "+format+"\n", args...)
	}
}

func newJobsCmd() *cobra.Command {
	var server conn
	var user string
	var all, asJSON, pend, long, forecast bool
	cmd := &cobra.Command{
		Use:   "jobs [-a] [-p] [-l] [-u USER|all] [--forecast] [--json] [ID...]",
		Short: "Show jobs, like LSF's bjobs (default: your unfinished jobs)",
		Long: `Show jobs: by default the caller's pending and running jobs; -a adds the
ended ones, -u USER another user's (all: everybody's), IDs just those jobs.
A pending job shows its main pending reason (docs/pending-reasons.md); -p
shows only pending jobs, each with its reason and why each host could not
take it, counted; -l shows everything about each job. --forecast shows each
pending job's predicted start time and hosts, from a simulation of the
cluster forward from now with the jobs' estimates (docs/forecast.md).`,
		RunE: func(cmd *cobra.Command, args []string) error {
			for _, a := range args {
				if _, err := jobarray.ParseRef(a); err != nil {
					return badInput(err)
				}
			}
			jobs, err := server.client().JobsWith(cmd.Context(), client.JobsQuery{User: user, All: all, Names: args, Forecast: forecast})
			if err != nil {
				return serverError(err)
			}
			if pend || forecast {
				jobs = slices.DeleteFunc(jobs, func(j api.JobInfo) bool { return j.State != "PEND" })
			}
			switch {
			case asJSON:
				return writeJSON(cmd.OutOrStdout(), api.JobsReply{Jobs: jobs})
			case forecast:
				return writeForecast(cmd.OutOrStdout(), jobs)
			case long:
				return writeJobsLong(cmd.OutOrStdout(), jobs)
			case pend:
				return writePending(cmd.OutOrStdout(), jobs)
			}
			return writeJobs(cmd.OutOrStdout(), jobs)
		},
	}
	fl := cmd.Flags()
	fl.BoolVarP(&pend, "pending", "p", false, "pending jobs only, with why each host could not take them")
	fl.BoolVarP(&long, "long", "l", false, "everything about each job")
	fl.BoolVarP(&all, "all", "a", false, "ended jobs too")
	fl.StringVarP(&user, "user", "u", "", "the jobs of USER (all: everybody's)")
	fl.BoolVar(&asJSON, "json", false, "print the jobs as JSON")
	fl.BoolVar(&forecast, "forecast", false, "pending jobs only, with their predicted start time and hosts")
	serverFlag(cmd, &server)
	return cmd
}

// writeForecast prints pending jobs with their forecasts: the predicted
// start (local time) and hosts, or "never" for a job that never starts
// in the forecast.
func writeForecast(w io.Writer, jobs []api.JobInfo) error {
	jobs = safeJobs(jobs)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "JOBID	USER	QUEUE	FORECAST_START	FORECAST_HOSTS	PENDING REASON")
	for _, j := range jobs {
		start, where := "never", "-"
		if f := j.ForecastStart.Start; f != nil {
			start = time.Unix(*f, 0).Format(time.Stamp)
			var hs []string
			for _, h := range slices.Sorted(maps.Keys(j.ForecastHosts)) {
				hs = append(hs, fmt.Sprintf("%d*%s", j.ForecastHosts[h], h))
			}
			where = strings.Join(hs, " ")
		}
		reason := j.Reason
		if j.Detail != "" {
			reason += ": " + j.Detail
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", jobName(j.ID, j.ArrayIndex), j.User, j.Queue, start, where, reason)
	}
	return tw.Flush()
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// writeJobs prints jobs as bjobs does: one line each, the hosts as
// "n*host", a pending job's reason instead.
func writeJobs(w io.Writer, jobs []api.JobInfo) error {
	jobs = safeJobs(jobs)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "JOBID\tUSER\tSTAT\tQUEUE\tEXEC_HOST / PENDING REASON\tJOB_NAME\tSUBMIT_TIME")
	for _, j := range jobs {
		where := ""
		switch j.State {
		case "PEND":
			where = j.Reason
			if j.Detail != "" {
				where += ": " + j.Detail
			}
		default:
			var hs []string
			for _, h := range slices.Sorted(maps.Keys(j.Hosts)) {
				hs = append(hs, fmt.Sprintf("%d*%s", j.Hosts[h], h))
			}
			where = strings.Join(hs, " ")
			if j.State == "SUSP" && j.Reason != "" {
				where += " (" + j.Reason + ")"
			}
			if j.State == "EXIT" {
				where += fmt.Sprintf(" (exit %d%s)", j.ExitCode, suffix(j.Signal, j.EndReason))
			}
		}
		name := j.Name
		if name == "" {
			name = strings.Join(j.Command, " ")
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", jobName(j.ID, j.ArrayIndex), j.User, j.State, j.Queue, where, clip(name, 30),
			time.Unix(j.SubmitTime, 0).Format("Jan _2 15:04:05"))
	}
	return tw.Flush()
}

// writePending prints pending jobs as bjobs -p does: each with its main
// reason, then its host reasons, counted.
func writePending(w io.Writer, jobs []api.JobInfo) error {
	jobs = safeJobs(jobs)
	for _, j := range jobs {
		fmt.Fprintf(w, "Job <%s>, user <%s>, queue <%s>: PENDING REASON: %s\n", jobName(j.ID, j.ArrayIndex), j.User, j.Queue, reasonText(j))
		for _, h := range j.HostReasons {
			fmt.Fprintf(w, "    %s: %d %s\n", h.Text, h.Hosts, plural(h.Hosts, "host", "hosts"))
		}
	}
	return nil
}

func reasonText(j api.JobInfo) string {
	if j.Detail != "" {
		return j.Reason + ": " + j.Detail
	}
	if j.Reason == "" {
		return "not yet considered"
	}
	return j.Reason
}

// writeJobsLong prints each job whole, as bjobs -l does.
func writeJobsLong(w io.Writer, jobs []api.JobInfo) error {
	jobs = safeJobs(jobs)
	t := func(sec int64) string {
		if sec == 0 {
			return "-"
		}
		return time.Unix(sec, 0).Format("Mon Jan _2 15:04:05 2006")
	}
	for i, j := range jobs {
		if i > 0 {
			fmt.Fprintln(w, strings.Repeat("-", 78))
		}
		fmt.Fprintf(w, "Job <%s>, Job Name <%s>, User <%s>, Queue <%s>, Status <%s>\n", jobName(j.ID, j.ArrayIndex), j.Name, j.User, j.Queue, j.State)
		fmt.Fprintf(w, "  Command <%s>\n", strings.Join(j.Command, " "))
		fmt.Fprintf(w, "  Tasks %d", j.TasksMin)
		if j.TasksMax != j.TasksMin {
			fmt.Fprintf(w, " to %d", j.TasksMax)
		}
		fmt.Fprintf(w, ", Requirement <%s>, Output <%s>\n", j.ResReq, j.Stdout)
		if j.GPU != "" {
			fmt.Fprintf(w, "  GPU requirement <%s>\n", j.GPU)
		}
		fmt.Fprintf(w, "  Submitted %s, started %s, ended %s\n", t(j.SubmitTime), t(j.StartTime), t(j.EndTime))
		if len(j.Hosts) > 0 {
			var hs []string
			for _, h := range slices.Sorted(maps.Keys(j.Hosts)) {
				hs = append(hs, fmt.Sprintf("%d*%s", j.Hosts[h], h))
			}
			fmt.Fprintf(w, "  Hosts <%s>, pid %d\n", strings.Join(hs, " "), j.PID)
		}
		if len(j.GPUs) > 0 {
			var gs []string
			for _, h := range slices.Sorted(maps.Keys(j.GPUs)) {
				gs = append(gs, h+":"+joinInts(j.GPUs[h]))
			}
			fmt.Fprintf(w, "  GPUs <%s>\n", strings.Join(gs, " "))
		}
		switch j.State {
		case "PEND":
			fmt.Fprintf(w, "  PENDING REASON: %s\n", reasonText(j))
			for _, h := range j.HostReasons {
				fmt.Fprintf(w, "    %s: %d %s\n", h.Text, h.Hosts, plural(h.Hosts, "host", "hosts"))
			}
		case "DONE", "EXIT":
			fmt.Fprintf(w, "  Exit code %d%s\n", j.ExitCode, suffix(j.Signal, j.EndReason))
		}
	}
	return nil
}

func suffix(parts ...string) string {
	var out string
	for _, p := range parts {
		if p != "" {
			out += ", " + p
		}
	}
	return out
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n-3] + "..."
}

func newKillCmd() *cobra.Command {
	var server conn
	cmd := &cobra.Command{
		Use:   "kill ID|ID[INDEX]...",
		Short: "Kill jobs, like LSF's bkill",
		Long: `Kill jobs: a pending job ends at once (EXIT); a running one is sent SIGINT
and SIGTERM, then SIGKILL after the server's kill_grace. Only a job's owner
or an administrator may. The ID of a job array kills each of its unfinished
elements; ID[INDEX] one element (docs/arrays.md).`,
		Args: usageArgs(cobra.MinimumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			c := server.client()
			var failed error
			for _, a := range args {
				ref, err := jobarray.ParseRef(a)
				if err != nil {
					return badInput(err)
				}
				if err := c.KillName(cmd.Context(), ref.String()); err != nil {
					fmt.Fprintf(cmd.ErrOrStderr(), "xce: job <%s>: %s\n", safe(ref.String()), safe(err.Error()))
					failed = serverError(fmt.Errorf("not every job was killed"))
					continue
				}
				fmt.Fprintf(cmd.OutOrStdout(), "Job <%s> is being terminated\n", safe(ref.String()))
			}
			return failed
		},
	}
	serverFlag(cmd, &server)
	return cmd
}

func newHostsCmd() *cobra.Command {
	var server conn
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "hosts [--json]",
		Short: "Show the hosts, like LSF's bhosts",
		Args:  usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			hosts, err := server.client().Hosts(cmd.Context())
			if err != nil {
				return serverError(err)
			}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), api.HostsReply{Hosts: hosts})
			}
			return writeHosts(cmd.OutOrStdout(), hosts)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the hosts as JSON")
	serverFlag(cmd, &server)
	return cmd
}

func newSubmitCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "submit [-n min[,max]] [-R resreq] [-q queue] [-W [hours:]minutes] [-J name] [-o file] [-e file] [-P project] [-r] [--json] (-- COMMAND [ARGS] | SCRIPT | -pack FILE)",
		Short: "Submit a job, like LSF's bsub",
		Long: `Submit a job: a command after --, a job script (its #BSUB lines give the
same options; the command line wins), a script on standard input, or
-pack FILE for one job per line, all or none (docs/submit.md). Prints
LSF's "Job <ID> is submitted to queue <QUEUE>." line, or with --json
{"id": ID, "queue": "QUEUE"} ({"ids": [...]} for a pack). The server is
$XCE_SERVER, else the dev server.`,
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			if slices.Contains(args, "-h") || slices.Contains(args, "--help") {
				return cmd.Help()
			}
			in := submit.Input{Stdin: cmd.InOrStdin(), Open: func(name string) (io.ReadCloser, error) { return os.Open(name) },
				CallerFlags: []string{"--json"}}
			s, err := submit.Parse(args, in)
			if err != nil {
				return badInput(err)
			}
			for _, r := range s.Jobs {
				for _, w := range r.Warnings {
					fmt.Fprintln(cmd.ErrOrStderr(), "xce: warning:", safe(w))
				}
			}
			cwd, err := os.Getwd()
			if err != nil {
				return err
			}
			env := os.Environ()
			subs := make([]event.Submit, len(s.Jobs))
			for i, r := range s.Jobs {
				subs[i] = r.Submit()
				subs[i].Cwd, subs[i].Env = cwd, env
			}
			// The server checks the same (docs/api.md); the working
			// directory and the environment are checked here first.
			if _, err := submit.CheckJobs(subs); err != nil {
				return badInput(submitError(err, len(subs)))
			}
			reqs := make([]api.JobRequest, len(s.Jobs))
			for i := range subs {
				e := &subs[i]
				reqs[i] = api.JobRequest{Name: e.Name, Array: e.Array, Depend: e.Depend, Exclusive: e.Exclusive, GPU: e.GPU, Queue: e.Queue, Project: e.Project, TasksMin: e.TasksMin, TasksMax: e.TasksMax,
					ResReq: e.ResReq, Estimate: e.Estimate, Command: e.Command, Script: e.Script, Cwd: cwd, Env: env,
					Stdout: e.Stdout, Stderr: e.Stderr, Rerunnable: e.Rerunnable}
			}
			rep, err := client.Dial(client.Socket(""), "").Submit(cmd.Context(), reqs)
			if err != nil {
				return serverError(submitRefusal(err, len(reqs)))
			}
			if slices.Contains(s.Flags, "--json") {
				if s.Pack != "" {
					return writeJSON(cmd.OutOrStdout(), map[string][]int64{"ids": rep.IDs})
				}
				return writeJSON(cmd.OutOrStdout(), map[string]any{"id": rep.IDs[0], "queue": rep.Queues[0]})
			}
			for i, id := range rep.IDs {
				fmt.Fprintf(cmd.OutOrStdout(), "Job <%d> is submitted to queue <%s>.\n", id, safe(rep.Queues[i]))
			}
			return nil
		},
	}
}

// submitError names the job a submission's error is about when there are
// several (a pack file's), as "job N: ..." (1-based, in file order).
func submitError(err error, jobs int) error {
	var fe *submit.FieldError
	if jobs > 1 && errors.As(err, &fe) && fe.Job >= 0 {
		return fmt.Errorf("job %d: %w", fe.Job+1, err)
	}
	return err
}

// submitRefusal words the server's refusal of job i of a submission
// (field "jobs[i]" or "jobs[i].name") as the CLI's own errors are: the
// message alone, after the field within the job, and "job N: " (1-based,
// in file order) when there were several jobs. Another error is returned
// as it is.
func submitRefusal(err error, jobs int) error {
	var ae *api.Error
	if !errors.As(err, &ae) {
		return err
	}
	var i int
	var rest string
	if n, _ := fmt.Sscanf(ae.Field, "jobs[%d]", &i); n != 1 {
		return err
	}
	if k := strings.IndexByte(ae.Field, ']'); k >= 0 {
		rest = strings.TrimPrefix(ae.Field[k+1:], ".")
	}
	out := *ae
	out.Field = rest
	if jobs > 1 {
		out.Msg = fmt.Sprintf("job %d: %s", i+1, out.Error())
		out.Field = ""
	}
	return &out
}

// writeHosts prints hosts as bhosts does.
func writeHosts(w io.Writer, hosts []api.HostInfo) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "HOST_NAME\tSTATUS\tMAX\tRUN")
	for _, h := range hosts {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\n", safe(h.Name), safe(h.Status), h.Slots, h.Used)
	}
	return tw.Flush()
}
