package cli

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/xce-sched/xce/cluster"
	"github.com/xce-sched/xce/cluster/slurmconf"
	"github.com/xce-sched/xce/framework"
	"github.com/xce-sched/xce/framework/runtime"
	"github.com/xce-sched/xce/sim"
	"github.com/xce-sched/xce/slurm"
	"github.com/xce-sched/xce/workload/sacct"
	"github.com/xce-sched/xce/workload/slurmsim"
	"github.com/xce-sched/xce/workload/tracefile"
)

// This file holds what `xce` does with Slurm's files (docs/slurm.md):
// `xce import slurm-conf`, a slurm.conf given as --cluster, Slurm
// workloads (sacct -P output, the Slurm simulator's events), sacct.csv
// and --versus-sacct.

func newImportCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "import",
		Short: "Import another scheduler's configuration",
		Args:  usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return badInput(errors.New("give what to import: slurm-conf"))
		},
	}
	var files slurmconf.Files
	conf := &cobra.Command{
		Use:   "slurm-conf SLURM.CONF [--gres GRES.CONF] [--sacctmgr SCRIPT] > cluster.yaml",
		Short: "Print a Slurm cluster's slurm.conf as an xce cluster configuration",
		Long: `Read slurm.conf (and gres.conf and a sacctmgr script, by default those beside it)
and print the xce cluster configuration that stands for it (docs/slurm.md):
nodes as hosts, partitions as queues, the backfill policy and the multifactor
picker with its weights, the accounts and QOS. Every key xce does not use is
listed on stderr; nothing is dropped silently. 'xce sim', 'xce schedule' and
'xce serve' also take slurm.conf itself as their cluster.`,
		Args: usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			files.Conf = args[0]
			yaml, warnings, read, err := slurmconf.Import(files)
			if err != nil {
				return badInput(err)
			}
			for _, f := range []string{read.Gres, read.Sacctmgr} {
				if f != "" && f != files.Gres && f != files.Sacctmgr {
					fmt.Fprintf(cmd.ErrOrStderr(), "xce: note: read %s beside %s\n", f, files.Conf)
				}
			}
			printWarnings(cmd.ErrOrStderr(), warnings)
			_, err = cmd.OutOrStdout().Write(yaml)
			return err
		},
	}
	conf.Flags().StringVar(&files.Gres, "gres", "", "gres.conf (default: the one beside slurm.conf, if any)")
	conf.Flags().StringVar(&files.Sacctmgr, "sacctmgr", "", "a script of sacctmgr commands adding the accounts, users and QOS (default: sacctmgr.script beside slurm.conf, if any)")
	cmd.AddCommand(conf)
	return cmd
}

// printWarnings prints warnings on w, one a line: "xce: warning: …", or
// "xce: note: …" for those that say "note: …".
func printWarnings(w io.Writer, warnings []string) {
	for _, s := range warnings {
		if note, ok := strings.CutPrefix(s, "note: "); ok {
			fmt.Fprintln(w, "xce: note:", note)
			continue
		}
		fmt.Fprintln(w, "xce: warning:", s)
	}
}

// loadClusterFile loads a --cluster file: a scenario (docs/scenario.md)
// or, recognized by its content and name (slurmconf.LooksNamed), a
// slurm.conf (imported as `xce import slurm-conf` would, its warnings to
// errOut).
func loadClusterFile(path string, errOut io.Writer) (*cluster.Cluster, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if !slurmconf.LooksNamed(path, data) {
		return cluster.Parse(path, data)
	}
	yaml, warnings, err := slurmconf.ConfigText(path, data)
	if err != nil {
		return nil, err
	}
	printWarnings(errOut, warnings)
	return cluster.Parse(path+" (imported)", yaml)
}

// loadConfigFile reads a live cluster's configuration (xce serve
// --config): xce's or, recognized by its content, a slurm.conf. It
// returns the configuration and its text (the imported one for
// slurm.conf).
func loadConfigFile(path string, errOut io.Writer) (*cluster.Cluster, *cluster.Server, string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, "", err
	}
	text, warnings, err := slurmconf.ConfigText(path, data)
	if err != nil {
		return nil, nil, "", err
	}
	printWarnings(errOut, warnings)
	c, s, err := cluster.ParseConfig(path, text)
	return c, s, string(text), err
}

// firstLine returns the first line that is not blank of the file at path
// (gzip decompressed), at most 1 MiB of it.
func firstLine(path string) ([]byte, error) {
	r, c, err := tracefile.Open(path, 0)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if len(bytes.TrimSpace(sc.Bytes())) > 0 {
			return bytes.Clone(sc.Bytes()), nil
		}
	}
	return nil, nil // an over-long first line is no Slurm file: the SWF reader reports it
}

// loadSlurmWorkload reads the workload at path when it is Slurm's,
// recognized by its first line: sacct -P output or the Slurm simulator's
// events; ok is false for any other file (SWF). base is the cluster the
// jobs are made for (it may be nil without --cluster). Notes go to
// errOut.
func loadSlurmWorkload(path string, base *cluster.Cluster, errOut io.Writer) (w *sim.Workload, ok bool, err error) {
	first, err := firstLine(path)
	if err != nil {
		return nil, false, err
	}
	isSacct, isEvents := sacct.Looks(first), slurmsim.Looks(first)
	if !isSacct && !isEvents {
		return nil, false, nil
	}
	r, c, err := tracefile.Open(path, 0)
	if err != nil {
		return nil, true, err
	}
	defer c.Close()
	var jobs []slurm.Job
	if isSacct {
		var st sacct.Stats
		if jobs, st, err = sacct.Read(r, path); err != nil {
			return nil, true, err
		}
		if st.Steps+st.NotRun+st.Running > 0 {
			fmt.Fprintf(errOut, "xce: note: %s: left out %d job steps, %d jobs that never started and %d still running\n", path, st.Steps, st.NotRun, st.Running)
		}
	} else {
		first := int64(1)
		if base != nil && base.Slurm != nil && base.Slurm.FirstJobID > 0 {
			first = base.Slurm.FirstJobID
		}
		if jobs, err = slurmsim.Read(r, path, first); err != nil {
			return nil, true, err
		}
	}
	if base == nil {
		return nil, true, fmt.Errorf("%s: a Slurm workload needs its cluster: give --cluster slurm.conf (or a scenario)", path)
	}
	w, err = sim.SlurmWorkload(jobs, base, path, isSacct)
	return w, true, err
}

// nodeList is where a job ran: its hosts as a Slurm host list, and how
// many (a host class counts the members the job holds; its entry's name,
// "n0001..n0100", stands for them: docs/host-classes.md).
type nodeList struct {
	list  string
	count int
}

// recordNodes returns an Observe that records, for each job started, its
// hosts (a replay keeps no hosts of finished jobs).
func recordNodes(c *cluster.Cluster, nodes map[cluster.JobID]nodeList) sim.Observe {
	return func(e *sim.Event) {
		for _, j := range e.Considered {
			if j.State == framework.Running && j.Start == e.Now && j.Alloc != nil {
				names := make([]string, len(j.Alloc.Hosts))
				n := 0
				for i, h := range j.Alloc.Hosts {
					names[i] = c.Hosts[h.Host].Name
					if c.IsClass(h.Host) {
						n += h.Slots // a member a slot
					} else {
						n++
					}
				}
				nodes[j.Spec.ID] = nodeList{slurm.CompressHostlist(names), n}
			}
		}
	}
}

// writeSacct writes the replay of w by s as sacct -P output (sacct.Write)
// to path: each job with its simulated start, end, nodes and CPUs. Times
// are the workload's (its UnixStartTime, else 1970-01-01, plus the
// simulated seconds). A job that never started is PENDING; one that ran
// past its time limit TIMEOUT; the others COMPLETED. Notes go to errOut.
func writeSacct(path string, s *runtime.Scheduler, w *sim.Workload, nodes map[cluster.JobID]nodeList, errOut io.Writer) error {
	t0 := max(w.Header.UnixStartTime, 0)
	byID := make(map[cluster.JobID]*framework.Job, len(s.Jobs))
	for _, j := range s.Jobs {
		byID[j.Spec.ID] = j
	}
	out := make([]slurm.Job, 0, len(w.Jobs))
	for i, rec := range w.Jobs {
		j := byID[cluster.JobID(rec.ID)]
		if j == nil {
			continue // dropped by cleaning
		}
		var sj slurm.Job
		if w.Slurm != nil {
			sj = w.Slurm[i]
		} else {
			sj = slurm.Job{ID: rec.ID, User: j.Spec.User, Account: j.Spec.Project, CPUs: j.Spec.TasksMin, TimeLimit: slurm.Unknown}
			if rec.ReqTime > 0 {
				sj.TimeLimit = rec.ReqTime
			}
		}
		sj.Partition = s.Cluster.Queues[j.Spec.Queue].Name
		sj.Submit = t0 + j.Spec.Submit
		sj.Start, sj.End, sj.Run, sj.State, sj.NodeList, sj.Nodes = slurm.Unknown, slurm.Unknown, 0, "PENDING", "", 0
		switch j.State {
		case framework.Done:
			sj.Start, sj.End, sj.Run = t0+j.Start, t0+j.End, j.End-j.Start
			sj.State = "COMPLETED"
			if sj.TimeLimit > 0 && sj.Run > sj.TimeLimit {
				sj.State = "TIMEOUT"
			}
		case framework.Running, framework.Suspended:
			sj.Start, sj.State = t0+j.Start, "RUNNING"
		}
		if sj.Start >= 0 && j.Alloc != nil {
			sj.CPUs = j.Alloc.Slots()
			nl := nodes[j.Spec.ID]
			sj.NodeList, sj.Nodes = nl.list, nl.count
		}
		out = append(out, sj)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	dropped, err := sacct.Write(f, out)
	if err != nil {
		f.Close()
		return err
	}
	if dropped > 0 {
		fmt.Fprintf(errOut, "xce: note: %s: %d constraints holding '|' (OR) written empty: sacct -P cannot hold them\n", path, dropped)
	}
	return f.Close()
}

// versusSacct compares the replay by s with the sacct -P records at path:
// each side's times counted from its own earliest submit time.
func versusSacct(path string, s *runtime.Scheduler, totalSlots int) (*sim.Versus, error) {
	r, c, err := tracefile.Open(path, 0)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	jobs, _, err := sacct.Read(r, path)
	if err != nil {
		return nil, err
	}
	if len(jobs) == 0 {
		return nil, fmt.Errorf("%s: no job that ran", path)
	}
	t0 := jobs[0].Submit
	for _, j := range jobs {
		t0 = min(t0, j.Submit)
	}
	ran := make([]sim.Ran, 0, len(jobs))
	for _, j := range jobs {
		end := j.End
		if end < 0 {
			end = j.Start + j.Run
		}
		ran = append(ran, sim.Ran{ID: cluster.JobID(j.ID), Submit: j.Submit - t0, Start: j.Start - t0, End: end - t0, Slots: j.CPUs})
	}
	v := sim.Compare(s.Jobs, ran, totalSlots)
	return &v, nil
}

// writeVersus prints a --versus-sacct comparison, xce beside Slurm.
func writeVersus(w io.Writer, path string, v *sim.Versus) error {
	fmt.Fprintf(w, "\ncompared with %s (%d jobs", filepath.Base(path), v.Jobs)
	if v.Missing > 0 {
		fmt.Fprintf(w, "; %d not completed in the replay", v.Missing)
	}
	fmt.Fprintln(w, ")")
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "\txce\tSlurm\tdifference")
	pct := func(x float64) string { return fmt.Sprintf("%+.1f%%", 100*x) }
	rel := func(a, b float64) string {
		if b == 0 {
			return "-"
		}
		return pct((a - b) / b)
	}
	fmt.Fprintf(tw, "mean wait\t%.0f s\t%.0f s\t%s\n", v.Sim.WaitMeanS, v.Real.WaitMeanS, pct(v.WaitMeanDiff))
	fmt.Fprintf(tw, "median wait\t%.0f s\t%.0f s\t%s\n", v.Sim.WaitMedianS, v.Real.WaitMedianS, rel(v.Sim.WaitMedianS, v.Real.WaitMedianS))
	fmt.Fprintf(tw, "mean bounded slowdown (τ=10 s)\t%.2f\t%.2f\t%s\n", v.Sim.BSLDMean, v.Real.BSLDMean, pct(v.BSLDMeanDiff))
	fmt.Fprintf(tw, "makespan\t%d s\t%d s\t%s\n", v.Sim.MakespanS, v.Real.MakespanS, rel(float64(v.Sim.MakespanS), float64(v.Real.MakespanS)))
	fmt.Fprintf(tw, "utilization\t%.4f\t%.4f\t%s\n", v.Sim.Utilization, v.Real.Utilization, rel(v.Sim.Utilization, v.Real.Utilization))
	fmt.Fprintf(tw, "start order, Kendall τ_b\t%.3f\t\t\n", v.KendallTau)
	return tw.Flush()
}

// scenarioOn loads the scenario at path with its configuration replaced
// by the cluster file's (a scenario or a slurm.conf; its warnings to
// errOut): the scenario's top-level sections other than jobs are left
// out, line for line, so that an error in a job names its line, and the
// cluster file's configuration (its jobs left out) is read after them.
// The scenario must be a block mapping at its top (key: lines).
func scenarioOn(path, clusterPath string, errOut io.Writer) (*cluster.Cluster, error) {
	cdata, err := os.ReadFile(clusterPath)
	if err != nil {
		return nil, err
	}
	cfg, warnings, err := slurmconf.ConfigText(clusterPath, cdata)
	if err != nil {
		return nil, err
	}
	printWarnings(errOut, warnings)
	if cfg, err = keepSections(cfg, clusterPath, func(k string) bool { return k != "jobs" }); err != nil {
		return nil, err
	}
	if _, _, err := cluster.ParseConfig(clusterPath, cfg); err != nil {
		return nil, err
	}
	if cfg, err = keepSections(cfg, clusterPath, func(k string) bool { return k != "server" }); err != nil {
		return nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, cluster.MaxLargeScenarioSize+1))
	if err != nil {
		return nil, err
	}
	jobs, err := keepSections(data, path, func(k string) bool { return k == "jobs" })
	if err != nil {
		return nil, err
	}
	return cluster.Parse(path, append(append(jobs, '\n'), cfg...))
}

// keepSections returns data with the top-level sections whose key keep
// refuses blanked (and the lines before the first key); the lines keep
// their numbers. A document that is not a block mapping at the top is an
// error.
func keepSections(data []byte, name string, keepKey func(string) bool) ([]byte, error) {
	lines := bytes.SplitAfter(data, []byte("\n"))
	keep := false
	sawKey := false
	for i, l := range lines {
		t := bytes.TrimRight(l, "\r\n")
		switch {
		case len(t) == 0 || t[0] == ' ' || t[0] == '\t' || t[0] == '#':
			// inside the current section, or a comment
		case bytes.HasPrefix(t, []byte("---")) || bytes.HasPrefix(t, []byte("%")):
			continue // document markers and directives stay
		default:
			k := 0
			for k < len(t) && (t[k] == '_' || t[k] >= 'a' && t[k] <= 'z' || t[k] >= 'A' && t[k] <= 'Z' || t[k] >= '0' && t[k] <= '9') {
				k++
			}
			if k == 0 || k >= len(t) || t[k] != ':' {
				return nil, fmt.Errorf("%s:%d: with --cluster, a file must be a block mapping of key: lines at its top", name, i+1)
			}
			sawKey = true
			keep = keepKey(string(t[:k]))
		}
		if !keep || !sawKey {
			lines[i] = []byte("\n")
		}
	}
	return bytes.Join(lines, nil), nil
}
