package slurmconf

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/xce-sched/xce/slurm"
)

// Config is what slurm.conf says that xce uses: nodes, partitions and
// the scheduling and priority parameters, with the keys it does not use.
type Config struct {
	File       string      // the file's name, for messages
	Nodes      []Node      // in file order, host ranges expanded
	Partitions []Partition // in file order
	// Params are the other keys, by lower-case name: the last value
	// given, and its line.
	Params map[string]Param
	// Unused are the keys and the node and partition parameters xce does
	// not use, in file order.
	Unused []Unused
}

// Param is the value of a key and the line it is on.
type Param struct {
	Key, Val string // the key as written, and its value
	Line     int    // where it is
}

// Node is one node of a NodeName line (DEFAULT values applied).
type Node struct {
	Name     string   // the node's name, its host list expanded
	CPUs     int      // CPUs, else Procs, else Boards × Sockets × CoresPerSocket × ThreadsPerCore; 1 by default
	MemoryMB float64  // RealMemory, MB (Slurm's default 1)
	Features []string // Feature (or Features), split at commas
	GPUs     int      // from Gres=gpu:N (gres.conf may add the type)
	GPUType  string   // from Gres=gpu:TYPE:N or gres.conf's Type
	Gres     string   // the Gres value as written
	State    string   // State, upper case ("" for none)
	Weight   int64    // Weight (Slurm's default 1): lighter nodes are allocated first
	Line     int      // the NodeName line
}

// Partition is one PartitionName line (DEFAULT values applied).
type Partition struct {
	Name          string   // PartitionName
	Nodes         []string // expanded; nil for ALL
	AllNodes      bool     // Nodes=ALL
	Default       bool     // Default=YES
	State         string   // UP, DOWN, DRAIN or INACTIVE
	MaxTime       int64    // seconds, slurm.Unlimited for none
	DefaultTime   int64    // seconds, slurm.Unknown when not given
	DefMemPerCPU  float64  // MB, 0 for none
	DefMemPerNode float64  // MB, 0 for none
	JobFactor     int64    // PriorityJobFactor (default 1)
	Tier          int64    // PriorityTier (default 1)
	Line          int      // the PartitionName line
}

// maxNodes bounds the nodes of a configuration (the largest Slurm
// clusters have some tens of thousands).
const maxNodes = 100_000

// Parse reads slurm.conf(5) from r; file names it in errors.
func Parse(r io.Reader, file string) (*Config, error) {
	lines, err := readLines(r, file)
	if err != nil {
		return nil, err
	}
	c := &Config{File: file, Params: map[string]Param{}}
	nodeDef := line{}
	partDef := line{}
	seenNode := map[string]int{}
	seenPart := map[string]int{}
	for _, l := range lines {
		first := l.pairs[0]
		switch strings.ToLower(first.key) {
		case "nodename":
			if strings.EqualFold(first.val, "DEFAULT") {
				nodeDef = merge(nodeDef, l)
				continue
			}
			if err := c.nodes(merge(nodeDef, l), l, seenNode); err != nil {
				return nil, err
			}
		case "partitionname":
			if strings.EqualFold(first.val, "DEFAULT") {
				partDef = merge(partDef, l)
				continue
			}
			if err := c.partition(merge(partDef, l), l, seenPart); err != nil {
				return nil, err
			}
		case "frontendname", "nodeset", "downnodes", "switchname":
			c.unused(l, first.key, first.val)
		default:
			for _, p := range l.pairs {
				c.Params[strings.ToLower(p.key)] = Param{p.key, p.val, l.n}
			}
		}
	}
	return c, c.check()
}

// merge returns the pairs of def followed by those of l (later ones win).
func merge(def, l line) line {
	return line{pairs: append(slices.Clone(def.pairs), l.pairs...), n: l.n}
}

func (c *Config) unused(l line, key, val string) {
	c.Unused = append(c.Unused, Unused{c.File, l.n, key, val})
}

// nodeKeys are the node parameters xce reads or that only describe the
// CPUs it counts.
var nodeKeys = []string{"nodename", "cpus", "procs", "boards", "sockets", "socketsperboard", "corespersocket",
	"threadspercore", "realmemory", "feature", "features", "gres", "state", "weight", "nodehostname", "nodeaddr"}

// nodes adds the nodes of NodeName line l (with the DEFAULT values in
// all, which holds l's pairs last).
func (c *Config) nodes(all, l line, seen map[string]int) error {
	get := all.last
	names, err := slurm.Hostlist(l.pairs[0].val)
	if err != nil {
		return slurm.Errorf(c.File, l.n, "NodeName: %w", err)
	}
	if len(c.Nodes)+len(names) > maxNodes {
		return slurm.Errorf(c.File, l.n, "more than %d nodes", maxNodes)
	}
	n := Node{CPUs: 1, MemoryMB: 1, Weight: 1, Line: l.n}
	intOf := func(k string, lo, hi int64) (int64, bool, error) {
		v, ok := get(k)
		if !ok {
			return 0, false, nil
		}
		x, err := strconv.ParseInt(v, 10, 64)
		if err != nil || x < lo || x > hi {
			return 0, true, slurm.Errorf(c.File, l.n, "%s=%s: want an integer from %d to %d", k, slurm.Quote(v), lo, hi)
		}
		return x, true, nil
	}
	cpus, hasCPUs, err := intOf("CPUs", 1, 1<<30)
	if err != nil {
		return err
	}
	if !hasCPUs {
		if cpus, hasCPUs, err = intOf("Procs", 1, 1<<30); err != nil {
			return err
		}
	}
	if hasCPUs {
		n.CPUs = int(cpus)
	} else {
		prod, any := int64(1), false
		for _, k := range []string{"Boards", "Sockets", "CoresPerSocket", "ThreadsPerCore"} {
			v, ok, err := intOf(k, 1, 1<<20)
			if err != nil {
				return err
			}
			if ok {
				prod, any = prod*v, true
				if prod > 1<<30 {
					return slurm.Errorf(c.File, l.n, "more than 2^30 CPUs a node")
				}
			}
		}
		if any {
			n.CPUs = int(prod)
		}
	}
	if v, ok := get("RealMemory"); ok {
		m, err := slurm.ParseMemory(v, slurm.PerNode)
		if err != nil {
			return slurm.Errorf(c.File, l.n, "RealMemory: %w", err)
		}
		n.MemoryMB = m.MB
	}
	if w, ok, err := intOf("Weight", 0, 1<<32-1); err != nil {
		return err
	} else if ok {
		n.Weight = w
	}
	for _, k := range []string{"Feature", "Features"} {
		if v, ok := get(k); ok {
			n.Features = nil
			for _, f := range strings.Split(v, ",") {
				if f = strings.TrimSpace(f); f != "" {
					n.Features = append(n.Features, f)
				}
			}
		}
	}
	if v, ok := get("Gres"); ok {
		n.Gres = v
		if n.GPUs, err = slurm.GPUs(v); err != nil {
			return slurm.Errorf(c.File, l.n, "Gres: %w", err)
		}
		n.GPUType = gpuType(v)
		if other := slurm.OtherGRES(v); len(other) > 0 {
			c.unused(l, "Gres", strings.Join(other, ","))
		}
	}
	if v, ok := get("State"); ok {
		n.State = strings.ToUpper(v)
	}
	for _, p := range l.pairs {
		if !slices.Contains(nodeKeys, strings.ToLower(p.key)) {
			c.unused(l, "NodeName="+l.pairs[0].val+" "+p.key, p.val)
		}
	}
	for _, name := range names {
		if first, dup := seen[name]; dup {
			return slurm.Errorf(c.File, l.n, "node %s defined again (first on line %d)", slurm.Quote(name), first)
		}
		seen[name] = l.n
		n.Name = name
		c.Nodes = append(c.Nodes, n)
	}
	return nil
}

// gpuType returns the type of the first typed GPU item of a Gres list
// ("gpu:tesla:2" gives tesla), "" for none.
func gpuType(gres string) string {
	for _, it := range strings.Split(gres, ",") {
		parts := strings.Split(strings.TrimSpace(it), ":")
		if parts[0] != "gpu" || len(parts) < 2 {
			continue
		}
		if len(parts) == 3 || !startsDigit(parts[1]) {
			return parts[1]
		}
	}
	return ""
}

func startsDigit(s string) bool { return s != "" && s[0] >= '0' && s[0] <= '9' }

// partKeys are the partition parameters xce reads.
var partKeys = []string{"partitionname", "nodes", "default", "state", "maxtime", "defaulttime", "defmempercpu",
	"defmempernode", "priorityjobfactor", "prioritytier", "priority"}

// partition adds PartitionName line l (DEFAULT values in all).
func (c *Config) partition(all, l line, seen map[string]int) error {
	get := all.last
	p := Partition{Name: l.pairs[0].val, State: "UP", MaxTime: slurm.Unlimited, DefaultTime: slurm.Unknown, JobFactor: 1, Tier: 1, Line: l.n}
	if err := slurm.CheckName("PartitionName", p.Name); err != nil {
		return slurm.Errorf(c.File, l.n, "%w", err)
	}
	if first, dup := seen[p.Name]; dup {
		return slurm.Errorf(c.File, l.n, "partition %s defined again (first on line %d)", slurm.Quote(p.Name), first)
	}
	seen[p.Name] = l.n
	if v, ok := get("Nodes"); ok {
		if strings.EqualFold(v, "ALL") {
			p.AllNodes = true
		} else {
			names, err := slurm.Hostlist(v)
			if err != nil {
				return slurm.Errorf(c.File, l.n, "Nodes: %w", err)
			}
			p.Nodes = names
		}
	}
	if v, ok := get("Default"); ok {
		b, err := yesNo(v)
		if err != nil {
			return slurm.Errorf(c.File, l.n, "Default: %w", err)
		}
		p.Default = b
	}
	if v, ok := get("State"); ok {
		p.State = strings.ToUpper(v)
		if !slices.Contains([]string{"UP", "DOWN", "DRAIN", "INACTIVE"}, p.State) {
			return slurm.Errorf(c.File, l.n, "State=%s: want UP, DOWN, DRAIN or INACTIVE", slurm.Quote(v))
		}
	}
	for _, t := range []struct {
		key string
		to  *int64
	}{{"MaxTime", &p.MaxTime}, {"DefaultTime", &p.DefaultTime}} {
		if v, ok := get(t.key); ok {
			d, err := slurm.Duration(v)
			if err != nil {
				return slurm.Errorf(c.File, l.n, "%s: %w", t.key, err)
			}
			if d == 0 {
				return slurm.Errorf(c.File, l.n, "%s=%s: want a time above 0, or UNLIMITED", t.key, slurm.Quote(v))
			}
			*t.to = d
		}
	}
	for _, m := range []struct {
		key string
		to  *float64
	}{{"DefMemPerCPU", &p.DefMemPerCPU}, {"DefMemPerNode", &p.DefMemPerNode}} {
		if v, ok := get(m.key); ok && !strings.EqualFold(v, "UNLIMITED") {
			mem, err := slurm.ParseMemory(v, slurm.PerNode)
			if err != nil {
				return slurm.Errorf(c.File, l.n, "%s: %w", m.key, err)
			}
			*m.to = mem.MB
		}
	}
	for _, f := range []struct {
		key string
		to  []*int64
	}{{"Priority", []*int64{&p.JobFactor, &p.Tier}}, {"PriorityJobFactor", []*int64{&p.JobFactor}}, {"PriorityTier", []*int64{&p.Tier}}} {
		if v, ok := get(f.key); ok {
			x, err := strconv.ParseInt(v, 10, 64)
			if err != nil || x < 0 || x > 65533 {
				return slurm.Errorf(c.File, l.n, "%s=%s: want an integer from 0 to 65533", f.key, slurm.Quote(v))
			}
			for _, to := range f.to {
				*to = x
			}
		}
	}
	for _, q := range l.pairs {
		if !slices.Contains(partKeys, strings.ToLower(q.key)) {
			c.unused(l, "PartitionName="+p.Name+" "+q.key, q.val)
		}
	}
	c.Partitions = append(c.Partitions, p)
	return nil
}

// yesNo reads YES or NO (any case).
func yesNo(v string) (bool, error) {
	switch strings.ToUpper(v) {
	case "YES":
		return true, nil
	case "NO":
		return false, nil
	}
	return false, fmt.Errorf("%s: want YES or NO", slurm.Quote(v))
}

// check checks what spans lines: a partition's nodes exist, at most one
// partition is the default.
func (c *Config) check() error {
	names := make(map[string]bool, len(c.Nodes))
	for _, n := range c.Nodes {
		names[n.Name] = true
	}
	def := 0
	for _, p := range c.Partitions {
		for _, n := range p.Nodes {
			if !names[n] {
				return slurm.Errorf(c.File, p.Line, "partition %s: node %s is not defined by a NodeName line", slurm.Quote(p.Name), slurm.Quote(n))
			}
		}
		if p.Default {
			if def > 0 {
				return slurm.Errorf(c.File, p.Line, "partition %s: a second Default=YES partition (the first on line %d)", slurm.Quote(p.Name), def)
			}
			def = p.Line
		}
	}
	if len(c.Nodes) == 0 {
		return slurm.Errorf(c.File, 0, "no NodeName line: a cluster needs nodes")
	}
	return nil
}
