package slurmconf

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/xce-sched/xce/slurm"
)

// Gres is what gres.conf(5) says about GPUs: per node, the GPU entries.
type Gres struct {
	File string // the file's name, for messages
	// Nodes maps a node name to its GPU entries; the entries of lines
	// without NodeName (which every node reads) are under "".
	Nodes map[string][]GresEntry
	// Unused are the keys xce does not use and the entries of other
	// generic resources.
	Unused []Unused
}

// GresEntry is one GPU line of gres.conf for one node.
type GresEntry struct {
	Type  string // Type=, "" for none
	Count int    // Count=, else the number of File= devices, else 1
	Line  int    // the line
}

// gresKeys are the gres.conf keys xce reads or that do not change the
// count of GPUs.
var gresKeys = []string{"nodename", "name", "type", "count", "file", "autodetect", "cores", "links", "flags"}

// ParseGres reads gres.conf(5) from r; file names it in errors.
func ParseGres(r io.Reader, file string) (*Gres, error) {
	lines, err := readLines(r, file)
	if err != nil {
		return nil, err
	}
	g := &Gres{File: file, Nodes: map[string][]GresEntry{}}
	for _, l := range lines {
		name, hasName := l.get("Name")
		for _, p := range l.pairs {
			if !containsFold(gresKeys, p.key) {
				g.Unused = append(g.Unused, Unused{file, l.n, p.key, p.val})
			}
		}
		if !hasName {
			continue // AutoDetect=... and the like
		}
		if name != "gpu" {
			g.Unused = append(g.Unused, Unused{file, l.n, "Name", name})
			continue
		}
		e := GresEntry{Count: 1, Line: l.n}
		e.Type, _ = l.get("Type")
		if f, ok := l.get("File"); ok {
			devs, err := slurm.Hostlist(f)
			if err != nil {
				return nil, slurm.Errorf(file, l.n, "File: %w", err)
			}
			e.Count = len(devs)
		}
		if c, ok := l.get("Count"); ok {
			n, err := slurm.GPUs("gpu:" + c)
			if err == nil && !startsDigit(c) {
				err = fmt.Errorf("not a count")
			}
			if err != nil {
				return nil, slurm.Errorf(file, l.n, "Count=%s: %w", slurm.Quote(c), err)
			}
			e.Count = n
		}
		nodes := []string{""}
		if v, ok := l.get("NodeName"); ok {
			if nodes, err = slurm.Hostlist(v); err != nil {
				return nil, slurm.Errorf(file, l.n, "NodeName: %w", err)
			}
		}
		for _, n := range nodes {
			g.Nodes[n] = append(g.Nodes[n], e)
		}
	}
	return g, nil
}

func containsFold(list []string, s string) bool {
	for _, x := range list {
		if strings.EqualFold(x, s) {
			return true
		}
	}
	return false
}

// apply gives the nodes of c the GPU types of g and checks the counts:
// slurm.conf's Gres count is Slurm's, and a node whose NodeName line has
// no Gres has no GPUs whatever gres.conf says. It returns what it
// reports.
func (g *Gres) apply(c *Config) []string {
	var warn []string
	for i := range c.Nodes {
		n := &c.Nodes[i]
		entries := g.Nodes[n.Name]
		if len(entries) == 0 {
			entries = g.Nodes[""]
		}
		if len(entries) == 0 {
			continue
		}
		total, types := 0, map[string]bool{}
		for _, e := range entries {
			total += e.Count
			if e.Type != "" {
				types[e.Type] = true
			}
		}
		if n.GPUs == 0 && n.Gres == "" {
			warn = append(warn, g.File+":"+strconv.Itoa(entries[0].Line)+": node "+n.Name+" has GPUs here but no Gres on its NodeName line ("+c.File+":"+strconv.Itoa(n.Line)+"): Slurm gives it none, nor does xce")
			continue
		}
		if total != n.GPUs {
			warn = append(warn, g.File+":"+strconv.Itoa(entries[0].Line)+": node "+n.Name+": "+strconv.Itoa(total)+" GPUs here, "+strconv.Itoa(n.GPUs)+" in its Gres ("+c.File+":"+strconv.Itoa(n.Line)+"); xce takes the Gres count (gres.conf's Count defaults to the number of File devices, else 1)")
		}
		if n.GPUType == "" {
			for _, e := range entries {
				if e.Type != "" {
					n.GPUType = e.Type
					break
				}
			}
		}
		if len(types) > 1 {
			warn = append(warn, g.File+":"+strconv.Itoa(entries[0].Line)+": node "+n.Name+" has GPUs of several types; xce's gpu_model is one: "+n.GPUType)
		}
	}
	return warn
}
