package cluster

import (
	"fmt"
	"math"

	"github.com/xce-sched/xce/gpureq"
	"github.com/xce-sched/xce/resreq"
)

// Schema is the cluster's attribute schema: it maps the names a select or
// order expression may use to columns of a host's flat value vector
// (State.HostVals). It implements resreq.Schema.
//
// The columns are, in this order (docs/scenario.md):
//
//	slots, maxslots       free and total job slots
//	R, maxR               for each consumable resource R: free and total (mem in MB)
//	type, model, hname,   string attributes
//	gpu_model
//	T                     for each boolean resource (tag) T of any host
type Schema struct {
	cols    map[string]schemaCol
	strs    map[string]float64
	hosts   map[string]HostID
	nres    int
	ntags   int
	colType int
}

type schemaCol struct {
	col  int
	kind resreq.Kind
}

// Column indices fixed by the layout.
const (
	// ColSlots is the column of a host's free job slots.
	ColSlots = 0
	// ColMaxSlots is the column of a host's total job slots.
	ColMaxSlots = 1
	colFirstRes = 2
)

var _ resreq.Schema = (*Schema)(nil)

// ResCol returns the column of resource r's free amount; its total is in
// ResCol(r)+1.
func ResCol(r ResID) int { return colFirstRes + 2*int(r) }

// NumCols is the length of one host's value vector.
func (s *Schema) NumCols() int { return s.colType + numStrCols + s.ntags }

// numStrCols is the number of string attribute columns: type, model, hname
// and gpu_model.
const numStrCols = 4

// TypeCol, ModelCol and HostNameCol are the columns of the string attributes.
func (s *Schema) TypeCol() int { return s.colType }

// ModelCol is the column of the host model.
func (s *Schema) ModelCol() int { return s.colType + 1 }

// HostNameCol is the column of the host name (`hname`, LSF's name for it).
func (s *Schema) HostNameCol() int { return s.colType + 2 }

// GPUModelCol is the column of the host's GPU model (`gpu_model`).
func (s *Schema) GPUModelCol() int { return s.colType + 3 }

// Lookup implements resreq.Schema.
func (s *Schema) Lookup(name string) (int, resreq.Kind, bool) {
	c, ok := s.cols[name]
	return c.col, c.kind, ok
}

// StringValue implements resreq.Schema: strings are numbered in order of
// first appearance among host types, models, names and GPU models; a
// string no host holds is -1.
func (s *Schema) StringValue(v string) float64 {
	if id, ok := s.strs[v]; ok {
		return id
	}
	return -1
}

// ColumnName returns the attribute name of column col (for messages).
func (s *Schema) ColumnName(col int) string {
	for name, c := range s.cols {
		if c.col == col {
			return name
		}
	}
	return "?"
}

func (s *Schema) hostByName(name string) (HostID, bool) {
	h, ok := s.hosts[name]
	return h, ok
}

func (s *Schema) internString(v string) float64 {
	if id, ok := s.strs[v]; ok {
		return id
	}
	id := float64(len(s.strs))
	s.strs[v] = id
	return id
}

// Init builds the schema and lookup tables for a Cluster assembled in
// code (the scenario loader calls it for you), and expands the user and
// host groups into flat member lists. It checks only what it must: it
// returns an error when two attributes would get the same name (a
// resource named like a built-in attribute, or both R and maxR defined),
// when a host's ngpus_physical capacity is not a whole number of devices
// from 0 to gpureq.MaxDevices, and when the groups cannot be expanded (a
// cycle, an unknown host, a host group named like a host, more than
// MaxGroupMembers members in all).
func (c *Cluster) Init() error {
	s := &Schema{
		cols:  map[string]schemaCol{},
		strs:  map[string]float64{},
		hosts: make(map[string]HostID, len(c.Hosts)),
		nres:  len(c.Resources),
	}
	add := func(name string, col int, kind resreq.Kind) error {
		if _, dup := s.cols[name]; dup {
			return &NameClashError{Name: name}
		}
		s.cols[name] = schemaCol{col, kind}
		return nil
	}
	if err := add("slots", ColSlots, resreq.KindNumeric); err != nil {
		return err
	}
	if err := add("maxslots", ColMaxSlots, resreq.KindNumeric); err != nil {
		return err
	}
	for r, name := range c.Resources {
		if err := add(name, ResCol(ResID(r)), resreq.KindNumeric); err != nil {
			return err
		}
		if err := add("max"+name, ResCol(ResID(r))+1, resreq.KindNumeric); err != nil {
			return err
		}
	}
	s.colType = colFirstRes + 2*len(c.Resources)
	for i, name := range []string{"type", "model", "hname", "gpu_model"} {
		if err := add(name, s.colType+i, resreq.KindString); err != nil {
			return err
		}
	}
	var tags []string
	seen := map[string]bool{}
	for i := range c.Hosts {
		h := &c.Hosts[i]
		s.hosts[h.Name] = HostID(i)
		s.internString(h.Type)
		s.internString(h.Model)
		s.internString(h.Name)
		s.internString(h.GPUModel)
		for _, t := range h.Tags {
			if !seen[t] {
				seen[t] = true
				tags = append(tags, t)
			}
		}
	}
	for i, t := range tags {
		if err := add(t, s.colType+numStrCols+i, resreq.KindBool); err != nil {
			return err
		}
	}
	s.ntags = len(tags)
	if err := c.initGPUs(); err != nil {
		return err
	}
	if err := c.initClasses(); err != nil {
		return err
	}
	c.schema = s
	groups, gerr := flattenGroups(c, c.HostByName)
	if gerr != nil {
		return gerr
	}
	c.groups = groups
	c.queueHosts = make([][]bool, len(c.Queues))
	for q := range c.Queues {
		if hs := c.Queues[q].Hosts; hs != nil {
			m := make([]bool, len(c.Hosts))
			for _, h := range hs {
				m[h] = true
			}
			c.queueHosts[q] = m
		}
	}
	return nil
}

// initGPUs finds ngpus_physical among the resources and checks that every
// host's capacity of it is a whole number of devices a bitmask can hold
// (or NaN: the host has no GPUs).
func (c *Cluster) initGPUs() error {
	c.gpuRes = -1
	r, ok := c.ResourceByName(gpureq.Resource)
	if !ok {
		return nil
	}
	c.gpuRes = r
	for i := range c.Hosts {
		v := c.Hosts[i].Capacity[r]
		if v != v {
			continue
		}
		if v < 0 || v > gpureq.MaxDevices || v != math.Trunc(v) {
			return fmt.Errorf("host %s: %s is %v; a host has a whole number of GPUs from 0 to %d", quote(c.Hosts[i].Name), gpureq.Resource, v, gpureq.MaxDevices)
		}
	}
	return nil
}

// NameClashError reports an attribute name defined twice (e.g. a resource
// named "slots", or a tag named like a resource).
type NameClashError struct{ Name string }

func (e *NameClashError) Error() string {
	return "attribute name " + quote(e.Name) + " is defined twice (resource, tag or built-in)"
}

func quote(s string) string { return "\"" + s + "\"" }

// staticVals fills one host's value vector with its totals (nothing used).
func (c *Cluster) staticVals(h HostID, v []float64) {
	s := c.schema
	host := &c.Hosts[h]
	for i := range v {
		v[i] = math.NaN()
	}
	v[ColSlots] = float64(host.Slots)
	v[ColMaxSlots] = float64(host.MemberSlots())
	for r := range c.Resources {
		v[ResCol(ResID(r))] = host.Capacity[r]
		v[ResCol(ResID(r))+1] = host.Capacity[r]
	}
	if host.Type != "" {
		v[s.TypeCol()] = s.strs[host.Type]
	}
	if host.Model != "" {
		v[s.ModelCol()] = s.strs[host.Model]
	}
	v[s.HostNameCol()] = s.strs[host.Name]
	if host.GPUModel != "" {
		v[s.GPUModelCol()] = s.strs[host.GPUModel]
	}
	for _, t := range host.Tags {
		v[s.cols[t].col] = 1
	}
}
