// Package limitview shows each limit instance's usage and maximum, as
// LSF's blimits does: for `xce limits` over a scenario and over the live
// scheduler alike.
package limitview

import (
	"cmp"
	"strings"

	"github.com/xce-sched/xce/cluster"
	"github.com/xce-sched/xce/framework/plugins/limit"
	"github.com/xce-sched/xce/framework/runtime"
)

// Row is one limit instance: its consumers (the user, queue, host or
// project of a per-consumer instance, else the configured list, "all", or
// "-" for a dimension the limit does not set) and, per limited resource in
// the limit's order, what is used and the maximum.
type Row struct {
	Name     string
	Users    string
	Queues   string
	Hosts    string
	Projects string
	// Resources names the limited resources ("slots", "jobs", "mem", a
	// shared resource); Used and Max are parallel to it.
	Resources []string
	Used, Max []float64
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

// Rows returns the rows of s's limits: every instance in use, in the order
// they were created, then each limit no job fell under, once, with nothing
// used. None when the cluster has no limit.
func Rows(s *runtime.Scheduler) []Row {
	c := s.Cluster
	lp := limitPlugin(s)
	if lp == nil {
		return nil
	}
	seen := make([]bool, len(c.Limits))
	var rows []Row
	row := func(l int) Row {
		lim := &c.Limits[l]
		return Row{Name: lim.Name, Users: consumers(lim.Users), Queues: consumers(lim.Queues),
			Hosts: consumers(lim.Hosts), Projects: consumers(lim.Projects), Resources: lp.Resources(l)}
	}
	for _, in := range lp.Instances() {
		seen[in.Limit] = true
		r := row(in.Limit)
		r.Users = cmp.Or(in.User, r.Users)
		r.Queues = cmp.Or(in.Queue, r.Queues)
		r.Hosts = cmp.Or(in.Host, r.Hosts)
		r.Projects = cmp.Or(in.Project, r.Projects)
		for k := range r.Resources {
			cnt := s.State.Counter(in.First + cluster.CounterID(k))
			r.Used, r.Max = append(r.Used, cnt.Used), append(r.Max, cnt.Max)
		}
		rows = append(rows, r)
	}
	for l := range c.Limits {
		if !seen[l] {
			r := row(l)
			for _, m := range maxes(&c.Limits[l]) {
				r.Used, r.Max = append(r.Used, 0), append(r.Max, m)
			}
			rows = append(rows, r)
		}
	}
	return rows
}

// maxes lists limit l's maxima in the order of the limit plugin's
// Resources.
func maxes(l *cluster.Limit) []float64 {
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

// limitPlugin returns the limit preparer s runs, nil when it runs none
// (the cluster has no limits).
func limitPlugin(s *runtime.Scheduler) *limit.Plugin {
	for _, p := range s.Preparers() {
		if lp, ok := p.(*limit.Plugin); ok {
			return lp
		}
	}
	return nil
}
