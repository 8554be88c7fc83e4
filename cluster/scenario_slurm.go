package cluster

import (
	"math"

	"github.com/goccy/go-yaml/ast"
)

// This file loads the slurm section of a scenario or configuration
// (docs/slurm.md): the partitions' settings, the multifactor priority
// configuration, QOS priorities and the accounts of the association tree.

// maxWeight bounds a Slurm priority weight or QOS priority: 2^32−1, as
// Slurm keeps them in unsigned 32-bit integers.
const maxWeight = math.MaxUint32

// slurmKeys are the fields of the slurm section.
var slurmKeys = []string{"first_job_id", "partitions", "priority", "qos", "accounts"}

// priorityKeys are the fields of slurm.priority.
var priorityKeys = []string{"weight_age", "weight_fairshare", "weight_job_size", "weight_partition", "weight_qos",
	"max_age", "decay_half_life", "calc_period", "favor_small", "small_relative_to_time", "fairshare", "dampening_factor"}

// xceKeys returns the keys of allowed but the slurm section's, which an
// unknown field's message names apart (slurmNote): xce's own sections
// first, then Slurm's.
func xceKeys(allowed []string) []string {
	if !contains(allowed, "slurm") {
		return allowed
	}
	out := make([]string, 0, len(allowed)-1)
	for _, k := range allowed {
		if k != "slurm" {
			out = append(out, k)
		}
	}
	return out
}

// slurmNote is what an unknown field's message adds when the slurm
// section is allowed there.
func slurmNote(allowed []string) string {
	if !contains(allowed, "slurm") {
		return ""
	}
	return ", or slurm for a Slurm cluster's settings (docs/slurm.md)"
}

// slurmEnumField reads optional enum field name as enumField does, and
// also accepts slurmValue, a value that stands for a Slurm plugin
// (docs/slurm.md), which the error names after xce's own values.
func (l *loader) slurmEnumField(fs *fieldSet, name, def, slurmValue string, allowed ...string) (string, error) {
	if s, _, err := l.strField(fs, name, def); err == nil && s == slurmValue {
		return s, nil
	}
	v, err := l.enumField(fs, name, def, allowed...)
	if se, ok := err.(*ScenarioError); ok {
		se.Msg = clipMsg(se.Msg + " (or " + slurmValue + ", Slurm's: docs/slurm.md)")
	}
	return v, err
}

func (l *loader) loadSlurm(top *fieldSet) error {
	if !l.has(top, "slurm") {
		return nil
	}
	fs, err := l.fields(top.m["slurm"].val, "slurm", slurmKeys)
	if err != nil {
		return err
	}
	s := &SlurmConfig{Priority: DefaultMultifactor()}
	if s.FirstJobID, err = l.intField(fs, "first_job_id", 0, math.MaxInt64, 0); err != nil {
		return err
	}
	if err := l.slurmPartitions(fs, s); err != nil {
		return err
	}
	if err := l.slurmPriority(fs, &s.Priority); err != nil {
		return err
	}
	if l.has(fs, "qos") {
		e := fs.m["qos"]
		es, _, err := l.mapping(e.val, e.path)
		if err != nil {
			return err
		}
		for _, q := range es {
			if err := l.checkName(q.kn, q.path, q.key); err != nil {
				return err
			}
			p, err := l.toInt(q.val, q.path, 0, maxWeight)
			if err != nil {
				return err
			}
			s.QOS = append(s.QOS, SlurmQOS{Name: q.key, Priority: p})
		}
	}
	if err := l.slurmAccounts(fs, s); err != nil {
		return err
	}
	l.c.Slurm = s
	return nil
}

// slurmPartitions reads slurm.partitions: queue name → settings.
func (l *loader) slurmPartitions(fs *fieldSet, s *SlurmConfig) error {
	if !l.has(fs, "partitions") {
		return nil
	}
	e := fs.m["partitions"]
	es, _, err := l.mapping(e.val, e.path)
	if err != nil {
		return err
	}
	for _, pe := range es {
		if _, ok := l.queueIDs[pe.key]; !ok {
			return l.errAt(pe.kn, pe.path, "unknown queue %s (a partition's settings go with its queue)", quoteValue(pe.key))
		}
		pf, err := l.fields(pe.val, pe.path, []string{"job_factor", "def_mem_per_cpu", "def_mem_per_node", "max_time", "default_time"})
		if err != nil {
			return err
		}
		p := SlurmPartition{Queue: pe.key}
		if p.JobFactor, err = l.intField(pf, "job_factor", 0, 65533, 1); err != nil {
			return err
		}
		for _, f := range []struct {
			name string
			to   *float64
		}{{"def_mem_per_cpu", &p.DefMemPerCPU}, {"def_mem_per_node", &p.DefMemPerNode}} {
			if l.has(pf, f.name) {
				if *f.to, err = l.toNum(pf.m[f.name].val, pf.m[f.name].path); err != nil {
					return err
				}
			}
		}
		if p.DefMemPerCPU > 0 && p.DefMemPerNode > 0 {
			return l.errAt(pf.m["def_mem_per_node"].kn, fieldPath(pe.path, "def_mem_per_node"), "give def_mem_per_cpu or def_mem_per_node, not both")
		}
		if p.MaxTime, err = l.timeOrUnlimited(pf, "max_time"); err != nil {
			return err
		}
		if p.DefaultTime, err = l.timeOrUnlimited(pf, "default_time"); err != nil {
			return err
		}
		s.Partitions = append(s.Partitions, p)
	}
	return nil
}

// timeOrUnlimited reads optional field name: seconds (1 … MaxTime) or
// the word unlimited; -1 when absent or unlimited.
func (l *loader) timeOrUnlimited(fs *fieldSet, name string) (int64, error) {
	if !l.has(fs, name) {
		return -1, nil
	}
	e := fs.m[name]
	if r, _, err := l.resolve(e.val, e.path); err == nil {
		if sn, ok := r.(*ast.StringNode); ok && sn.Value == "unlimited" {
			return -1, nil
		}
	}
	v, err := l.toInt(e.val, e.path, 1, MaxTime)
	if err != nil {
		return 0, l.errAt(e.val, e.path, "want seconds (1 to 10^15) or unlimited: %s", err.(*ScenarioError).Msg)
	}
	return v, nil
}

// slurmPriority reads slurm.priority into m (which holds the defaults).
func (l *loader) slurmPriority(fs *fieldSet, m *Multifactor) error {
	if !l.has(fs, "priority") {
		return nil
	}
	pf, err := l.fields(fs.m["priority"].val, "slurm.priority", priorityKeys)
	if err != nil {
		return err
	}
	for _, f := range []struct {
		name   string
		to     *int64
		lo, hi int64
	}{
		{"weight_age", &m.WeightAge, 0, maxWeight},
		{"weight_fairshare", &m.WeightFairshare, 0, maxWeight},
		{"weight_job_size", &m.WeightJobSize, 0, maxWeight},
		{"weight_partition", &m.WeightPartition, 0, maxWeight},
		{"weight_qos", &m.WeightQOS, 0, maxWeight},
		{"max_age", &m.MaxAge, 1, MaxTime},
		{"decay_half_life", &m.DecayHalfLife, 0, MaxTime},
		{"calc_period", &m.CalcPeriod, 0, MaxTime},
		{"dampening_factor", &m.DampeningFactor, 1, math.MaxUint16},
	} {
		if *f.to, err = l.intField(pf, f.name, f.lo, f.hi, *f.to); err != nil {
			return err
		}
	}
	if err := l.boolField(pf, "favor_small", &m.FavorSmall); err != nil {
		return err
	}
	if err := l.boolField(pf, "small_relative_to_time", &m.SmallRelativeToTime); err != nil {
		return err
	}
	algo, err := l.enumField(pf, "fairshare", "fair_tree", "fair_tree", "classic")
	if err != nil {
		return err
	}
	m.Classic = algo == "classic"
	return nil
}

// slurmAccounts reads slurm.accounts: account name → {parent, fairshare,
// users}. A parent must be an account of the section; the parents may not
// form a cycle.
func (l *loader) slurmAccounts(fs *fieldSet, s *SlurmConfig) error {
	if !l.has(fs, "accounts") {
		return nil
	}
	e := fs.m["accounts"]
	es, _, err := l.mapping(e.val, e.path)
	if err != nil {
		return err
	}
	index := map[string]int{}
	parents := make([]ast.Node, len(es))
	for i, ae := range es {
		if err := l.checkName(ae.kn, ae.path, ae.key); err != nil {
			return err
		}
		if ae.key == "root" {
			return l.errAt(ae.kn, ae.path, "root is the association tree's root, not an account of it")
		}
		af, err := l.fields(ae.val, ae.path, []string{"parent", "fairshare", "users"})
		if err != nil {
			return err
		}
		a := SlurmAccount{Name: ae.key}
		var pn ast.Node
		if a.Parent, pn, err = l.strField(af, "parent", ""); err != nil {
			return err
		}
		if a.Parent == "root" {
			a.Parent = ""
		}
		parents[i] = pn
		if a.Shares, err = l.intField(af, "fairshare", 0, maxCount, 1); err != nil {
			return err
		}
		if l.has(af, "users") {
			ue := af.m["users"]
			us, _, err := l.mapping(ue.val, ue.path)
			if err != nil {
				return err
			}
			for _, u := range us {
				if err := l.checkName(u.kn, u.path, u.key); err != nil {
					return err
				}
				n, err := l.toInt(u.val, u.path, 0, maxCount)
				if err != nil {
					return err
				}
				a.Users = append(a.Users, UserShare{User: u.key, Shares: int(n)})
			}
		}
		index[a.Name] = i
		s.Accounts = append(s.Accounts, a)
	}
	for i, a := range s.Accounts {
		if a.Parent == "" {
			continue
		}
		if _, ok := index[a.Parent]; !ok {
			return l.errAt(parents[i], fieldPath(es[i].path, "parent"), "unknown account %s", quoteValue(a.Parent))
		}
		// Follow the parents: a cycle comes back to i within len steps.
		p := a.Parent
		for range s.Accounts {
			if p == "" {
				break
			}
			if p == a.Name {
				return l.errAt(parents[i], fieldPath(es[i].path, "parent"), "account %s is its own ancestor", quoteValue(a.Name))
			}
			p = s.Accounts[index[p]].Parent
		}
	}
	return nil
}
