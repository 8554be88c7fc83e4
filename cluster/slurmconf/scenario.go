package slurmconf

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/xce-sched/xce/gpureq"
	"github.com/xce-sched/xce/slurm"
)

// Options are the files that complete slurm.conf for Scenario.
type Options struct {
	Gres  *Gres  // gres.conf, nil for none
	Assoc *Assoc // a sacctmgr script, nil for none
}

// reservedTags are the select[] attributes xce defines itself, which a
// feature's tag may not take.
var reservedTags = []string{"slots", "maxslots", "type", "model", "hname", "gpu_model", "mem", "maxmem",
	gpureq.Resource, "max" + gpureq.Resource}

// Scenario writes c as an xce cluster configuration in the scenario
// format (docs/scenario.md, docs/slurm.md): hosts, queues,
// reservation_usage (mem per task: Slurm's memory per CPU) and the slurm
// section. It returns the YAML text and the warnings, one a line
// ("file:line: …"): every key and parameter xce does not use, and what it
// approximates. A node or partition that cannot be written (more than 64
// GPUs, say) is an error naming its line.
func Scenario(c *Config, o Options) ([]byte, []string, error) {
	var warn []string
	report := func(file string, line int, msg string) {
		if line > 0 {
			warn = append(warn, fmt.Sprintf("%s:%d: %s", file, line, msg))
		} else {
			warn = append(warn, file+": "+msg)
		}
	}
	s, err := c.Settings(report)
	if err != nil {
		return nil, nil, err
	}
	if o.Gres != nil {
		warn = append(warn, o.Gres.apply(c)...)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# xce cluster configuration imported from %s by `xce import slurm-conf` (docs/slurm.md).\n", c.File)
	if s.ClusterName != "" {
		fmt.Fprintf(&b, "# ClusterName=%s\n", s.ClusterName)
	}
	hosts, err := c.writeHosts(&b, report)
	if err != nil {
		return nil, nil, err
	}
	c.writeQueues(&b, s, hosts, report)
	b.WriteString("# Slurm counts memory per CPU (DefMemPerCPU, --mem-per-cpu): xce reserves mem per task, a task a CPU.\n")
	b.WriteString("reservation_usage: {mem: per_task}\n")
	c.writeSlurm(&b, s, o.Assoc)
	warn = append(warn, c.unusedWarnings()...)
	if o.Gres != nil {
		for _, u := range o.Gres.Unused {
			warn = append(warn, u.String()+": not used by xce")
		}
	}
	if o.Assoc != nil {
		for _, u := range o.Assoc.Unused {
			warn = append(warn, fmt.Sprintf("%s:%d: %s: not used by xce", u.File, u.Line, u.Key))
		}
	}
	// By file (slurm.conf first), then line; a warning on a whole file
	// after that file's others.
	fileRank := func(w string) int {
		switch {
		case strings.HasPrefix(w, c.File+":"):
			return 0
		case o.Gres != nil && strings.HasPrefix(w, o.Gres.File+":"):
			return 1
		}
		return 2
	}
	slices.SortStableFunc(warn, func(x, y string) int {
		lx, ly := lineOf(x), lineOf(y)
		if lx == 0 {
			lx = math.MaxInt
		}
		if ly == 0 {
			ly = math.MaxInt
		}
		return cmp.Or(cmp.Compare(fileRank(x), fileRank(y)), cmp.Compare(lx, ly))
	})
	return []byte(b.String()), warn, nil
}

// q quotes s as a YAML (JSON) double-quoted string.
func q(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func num(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// writeHosts writes the hosts section, lighter nodes first (Slurm
// allocates nodes of lower Weight first), and returns the names written.
func (c *Config) writeHosts(b *strings.Builder, report func(string, int, string)) (map[string]bool, error) {
	nodes := slices.Clone(c.Nodes)
	slices.SortStableFunc(nodes, func(x, y Node) int { return cmp.Compare(x.Weight, y.Weight) })
	written := map[string]bool{}
	tagOf := map[string]string{} // tag → feature, to report two features on one tag
	b.WriteString("hosts:\n")
	for _, n := range nodes {
		if err := slurm.CheckName("node name", n.Name); err != nil {
			return nil, slurm.Errorf(c.File, n.Line, "%w", err)
		}
		status := ""
		switch strings.SplitN(n.State, "+", 2)[0] {
		case "", "UNKNOWN", "IDLE", "ALLOCATED", "ALLOC", "MIXED", "CLOUD", "RESUME", "UNDRAIN":
		case "FUTURE":
			report(c.File, n.Line, "node "+n.Name+": State=FUTURE: left out (Slurm does not use it until it is defined)")
			continue
		case "DOWN", "FAIL", "FAILING", "NO_RESPOND", "POWER_DOWN", "POWERED_DOWN":
			status = "unavail"
		case "DRAIN", "DRAINED", "DRAINING":
			status = "closed"
		default:
			report(c.File, n.Line, "node "+n.Name+": State="+n.State+" is read as up")
		}
		if n.GPUs > gpureq.MaxDevices {
			return nil, slurm.Errorf(c.File, n.Line, "node %s: %d GPUs: xce handles at most %d a host", n.Name, n.GPUs, gpureq.MaxDevices)
		}
		var tags []string
		for _, f := range n.Features {
			t := slurm.Tag(f)
			if slices.Contains(reservedTags, t) {
				t = "feature_" + t
			}
			if prev, ok := tagOf[t]; ok && prev != f {
				report(c.File, n.Line, fmt.Sprintf("features %s and %s are both the tag %s", prev, f, t))
			}
			tagOf[t] = f
			if !slices.Contains(tags, t) {
				tags = append(tags, q(t))
			}
		}
		fmt.Fprintf(b, "  - {name: %s, slots: %d, resources: {mem: %s}", q(n.Name), n.CPUs, num(n.MemoryMB))
		if len(tags) > 0 {
			fmt.Fprintf(b, ", tags: [%s]", strings.Join(tags, ", "))
		}
		if n.GPUs > 0 {
			fmt.Fprintf(b, ", gpus: %d", n.GPUs)
			if n.GPUType != "" {
				if err := slurm.CheckName("GPU type", n.GPUType); err != nil {
					return nil, slurm.Errorf(c.File, n.Line, "%w", err)
				}
				fmt.Fprintf(b, ", gpu_model: %s", q(n.GPUType))
			}
		}
		if status != "" {
			fmt.Fprintf(b, ", status: %s", status)
		}
		fmt.Fprintf(b, "}  # %s:%d\n", c.File, n.Line)
		written[n.Name] = true
	}
	if len(written) == 0 {
		return nil, slurm.Errorf(c.File, 0, "no node is up or down: every node is FUTURE")
	}
	return written, nil
}

// writeQueues writes the queues section: the default partition first,
// then the others in file order.
func (c *Config) writeQueues(b *strings.Builder, s Settings, hosts map[string]bool, report func(string, int, string)) {
	parts := slices.Clone(c.Partitions)
	slices.SortStableFunc(parts, func(x, y Partition) int {
		switch {
		case x.Default && !y.Default:
			return -1
		case y.Default && !x.Default:
			return 1
		}
		return 0
	})
	if len(parts) == 0 {
		report(c.File, 0, "no PartitionName line: one queue, normal, takes every host")
		parts = []Partition{{Name: "normal", AllNodes: true, State: "UP", MaxTime: slurm.Unlimited, DefaultTime: slurm.Unknown, JobFactor: 1, Tier: 1}}
	}
	b.WriteString("queues:\n")
	for _, p := range parts {
		fmt.Fprintf(b, "  - {name: %s, priority: %d, policy: %s, picker: %s", q(p.Name), p.Tier, s.Policy, s.Picker)
		status := "open"
		if p.State != "UP" {
			status = "closed"
		}
		var names []string
		for _, n := range p.Nodes {
			if hosts[n] {
				names = append(names, q(n))
			}
		}
		switch {
		case p.AllNodes:
		case len(names) == 0:
			report(c.File, p.Line, "partition "+p.Name+" has no node: its queue is closed")
			status = "closed"
		default:
			fmt.Fprintf(b, ", hosts: [%s]", strings.Join(names, ", "))
		}
		if rl := runLimit(p); rl > 0 {
			fmt.Fprintf(b, ", default_runlimit: %d", rl)
		}
		if s.MaxJobTest > 0 {
			fmt.Fprintf(b, ", max_job_test: %d", s.MaxJobTest)
		}
		fmt.Fprintf(b, ", status: %s}", status)
		if p.Line > 0 {
			fmt.Fprintf(b, "  # %s:%d", c.File, p.Line)
		}
		b.WriteByte('\n')
	}
}

// runLimit is the time limit of a job of p that gives none: DefaultTime,
// else MaxTime; 0 for none.
func runLimit(p Partition) int64 {
	switch {
	case p.DefaultTime > 0:
		return p.DefaultTime
	case p.MaxTime > 0:
		return p.MaxTime
	}
	return 0
}

// writeSlurm writes the slurm section.
func (c *Config) writeSlurm(b *strings.Builder, s Settings, a *Assoc) {
	b.WriteString("slurm:\n")
	if s.FirstJobID > 0 {
		fmt.Fprintf(b, "  first_job_id: %d\n", s.FirstJobID)
	}
	if len(c.Partitions) > 0 {
		b.WriteString("  partitions:\n")
		for _, p := range c.Partitions {
			fmt.Fprintf(b, "    %s: {job_factor: %d", q(p.Name), p.JobFactor)
			if p.DefMemPerCPU > 0 {
				fmt.Fprintf(b, ", def_mem_per_cpu: %s", num(p.DefMemPerCPU))
			} else if p.DefMemPerNode > 0 {
				fmt.Fprintf(b, ", def_mem_per_node: %s", num(p.DefMemPerNode))
			}
			fmt.Fprintf(b, ", max_time: %s", timeVal(p.MaxTime))
			if p.DefaultTime > 0 {
				fmt.Fprintf(b, ", default_time: %d", p.DefaultTime)
			}
			b.WriteString("}\n")
		}
	}
	m := s.Priority
	fairshare := "fair_tree"
	if m.Classic {
		fairshare = "classic"
	}
	fmt.Fprintf(b, "  priority:  # priority/multifactor: times in seconds\n")
	fmt.Fprintf(b, "    weight_age: %d\n    weight_fairshare: %d\n    weight_job_size: %d\n    weight_partition: %d\n    weight_qos: %d\n",
		m.WeightAge, m.WeightFairshare, m.WeightJobSize, m.WeightPartition, m.WeightQOS)
	fmt.Fprintf(b, "    max_age: %d\n    decay_half_life: %d\n    calc_period: %d\n    favor_small: %t\n",
		m.MaxAge, m.DecayHalfLife, m.CalcPeriod, m.FavorSmall)
	if m.SmallRelativeToTime {
		b.WriteString("    small_relative_to_time: true\n")
	}
	fmt.Fprintf(b, "    fairshare: %s\n    dampening_factor: %d\n", fairshare, m.DampeningFactor)
	if a == nil {
		return
	}
	if len(a.QOS) > 0 {
		var qs []string
		for _, x := range a.QOS {
			qs = append(qs, fmt.Sprintf("%s: %d", q(x.Name), x.Priority))
		}
		fmt.Fprintf(b, "  qos: {%s}\n", strings.Join(qs, ", "))
	}
	if len(a.Accounts) > 0 {
		fmt.Fprintf(b, "  accounts:  # from %s\n", a.File)
		for _, ac := range a.Accounts {
			fmt.Fprintf(b, "    %s: {fairshare: %d", q(ac.Name), ac.Shares)
			if ac.Parent != "" {
				fmt.Fprintf(b, ", parent: %s", q(ac.Parent))
			}
			if len(ac.Users) > 0 {
				var us []string
				for _, u := range ac.Users {
					us = append(us, fmt.Sprintf("%s: %d", q(u.User), u.Shares))
				}
				fmt.Fprintf(b, ", users: {%s}", strings.Join(us, ", "))
			}
			b.WriteString("}\n")
		}
	}
}

func timeVal(t int64) string {
	if t < 0 {
		return "unlimited"
	}
	return strconv.FormatInt(t, 10)
}

// unusedWarnings lists the keys and parameters xce does not use: first
// those that may change the schedule, one a line, then the daemon
// settings together.
func (c *Config) unusedWarnings() []string {
	var warn, daemon []string
	keys := slices.SortedFunc(func(yield func(Param) bool) {
		for _, p := range c.Params {
			if !yield(p) {
				return
			}
		}
	}, func(x, y Param) int { return cmp.Compare(x.Line, y.Line) })
	for _, p := range keys {
		lk := strings.ToLower(p.Key)
		switch {
		case slices.Contains(usedKeys, lk):
		case slices.Contains(daemonKeys, lk):
			daemon = append(daemon, fmt.Sprintf("%s (line %d)", p.Key, p.Line))
		default:
			warn = append(warn, fmt.Sprintf("%s:%d: %s=%s: not modelled by xce; it may change Slurm's schedule", c.File, p.Line, p.Key, p.Val))
		}
	}
	for _, u := range c.Unused {
		warn = append(warn, u.String()+": not modelled by xce")
	}
	if len(daemon) > 0 {
		warn = append(warn, fmt.Sprintf("%s: %d daemon, logging, accounting and security settings do not change the schedule and are not imported: %s",
			c.File, len(daemon), strings.Join(daemon, ", ")))
	}
	return warn
}

// lineOf returns the line number of a "file:line: …" warning.
func lineOf(w string) int {
	_, rest, _ := strings.Cut(w, ":")
	n, _, _ := strings.Cut(rest, ":")
	v, _ := strconv.Atoi(n)
	return v
}
