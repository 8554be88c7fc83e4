package cluster

import (
	"math"
	"slices"

	"github.com/goccy/go-yaml/ast"

	"github.com/xce-sched/xce/gpureq"
)

// This file loads the configuration sections of a scenario: hosts, shared,
// queues and limits (docs/scenario.md).

// item reads list item n as a mapping with the allowed fields; a null item
// is an error.
func (l *loader) item(n ast.Node, path string, allowed []string) (*fieldSet, error) {
	fs, err := l.fields(n, path, allowed)
	if err != nil {
		return nil, err
	}
	if fs.node == nil {
		return nil, l.errAt(n, path, "expected a mapping, got null")
	}
	return fs, nil
}

// nameField reads required name field of fs and checks its syntax.
func (l *loader) nameField(fs *fieldSet) (string, ast.Node, error) {
	if err := l.required(fs, "name"); err != nil {
		return "", nil, err
	}
	path := fieldPath(fs.path, "name")
	s, n, err := l.toStr(fs.m["name"].val, path)
	if err == nil {
		err = l.checkName(n, path, s)
	}
	return s, n, err
}

// defineAttr records that what defines select attribute name and fails
// when something else already did (Init would refuse the clash).
func (l *loader) defineAttr(n ast.Node, path, name, what string) error {
	if prev, ok := l.attrs[name]; ok && prev != what {
		return l.errAt(n, path, "attribute name %s (%s) is already taken by %s", quoteValue(name), what, prev)
	}
	l.attrs[name] = what
	return nil
}

// hostResources is one host's resources section, in file order.
type hostResources struct {
	names []string
	vals  []float64
}

func (l *loader) loadHosts(top *fieldSet) error {
	c := l.c
	items, seq, err := l.sequence(top.m["hosts"].val, "hosts")
	if err != nil {
		return err
	}
	if len(items) == 0 {
		at := top.node
		if e, ok := top.m["hosts"]; ok {
			at = orNode(seq, e.kn)
		}
		return l.errAt(at, "hosts", "at least one host is required")
	}
	l.hostIDs = map[string]HostID{}
	l.resIDs = map[string]ResID{}
	l.attrs = map[string]string{}
	for _, b := range []string{"slots", "maxslots", "type", "model", "hname", "gpu_model"} {
		l.attrs[b] = "the built-in attribute " + b
	}
	fields := []string{"name", "slots", "resources", "type", "model", "tags", "status", "gpus", "gpu_model"}
	res := make([]hostResources, len(items))
	for i, it := range items {
		path := indexPath("hosts", i)
		fs, name, err := namedItem(l, it, "hosts", "host", i, fields, l.hostIDs)
		if err != nil {
			return err
		}
		if err := l.required(fs, "slots"); err != nil {
			return err
		}
		slots, err := l.intField(fs, "slots", 1, maxCount, 0)
		if err != nil {
			return err
		}
		h := Host{Name: name, Slots: int(slots)}
		if res[i], err = l.hostResources(fs); err != nil {
			return err
		}
		if err := l.hostGPUs(fs, &res[i]); err != nil {
			return err
		}
		for _, f := range []struct {
			name string
			dst  *string
		}{{"type", &h.Type}, {"model", &h.Model}, {"gpu_model", &h.GPUModel}} {
			s, n, err := l.strField(fs, f.name, "")
			if err == nil && s != "" {
				err = l.checkName(n, fieldPath(path, f.name), s)
			}
			if err != nil {
				return err
			}
			*f.dst = s
		}
		if h.Tags, err = l.hostTags(fs); err != nil {
			return err
		}
		status, err := l.enumField(fs, "status", "ok", "ok", "closed", "unavail")
		if err != nil {
			return err
		}
		h.Status = map[string]HostStatus{"ok": HostOK, "closed": HostClosed, "unavail": HostUnavail}[status]
		c.Hosts = append(c.Hosts, h)
	}
	tags := map[string]bool{}
	for _, h := range c.Hosts {
		for _, t := range h.Tags {
			tags[t] = true
		}
	}
	cols := 2 + numStrCols + 2*len(c.Resources) + len(tags)
	if len(c.Hosts)*cols > maxStateVals {
		return l.errAt(top.m["hosts"].val, "hosts", "too large: %d hosts × %d attribute columns exceed %d values",
			len(c.Hosts), cols, maxStateVals)
	}
	for i := range c.Hosts {
		h := &c.Hosts[i]
		h.Capacity = make([]float64, len(c.Resources))
		for r := range h.Capacity {
			h.Capacity[r] = math.NaN()
		}
		for k, name := range res[i].names {
			h.Capacity[l.resIDs[name]] = res[i].vals[k]
		}
	}
	return nil
}

// hostResources reads a host's resources map and adds new names to
// c.Resources.
func (l *loader) hostResources(fs *fieldSet) (hostResources, error) {
	var hr hostResources
	e, ok := fs.m["resources"]
	if !ok {
		return hr, nil
	}
	es, _, err := l.mapping(e.val, e.path)
	if err != nil {
		return hr, err
	}
	for _, re := range es {
		if err := l.checkIdent(re.kn, re.path, re.key); err != nil {
			return hr, err
		}
		if re.key == gpureq.Resource {
			return hr, l.errAt(re.kn, re.path, "%s counts the host's GPUs: declare them with gpus: N instead (docs/gpus.md)", gpureq.Resource)
		}
		if _, seen := l.resIDs[re.key]; !seen {
			what := "resource " + quote(re.key)
			if err := l.defineAttr(re.kn, re.path, re.key, what); err != nil {
				return hr, err
			}
			if err := l.defineAttr(re.kn, re.path, "max"+re.key, "the total of "+what); err != nil {
				return hr, err
			}
			l.resIDs[re.key] = ResID(len(l.c.Resources))
			l.c.Resources = append(l.c.Resources, re.key)
		}
		v, err := l.toNum(re.val, re.path)
		if err != nil {
			return hr, err
		}
		hr.names = append(hr.names, re.key)
		hr.vals = append(hr.vals, v)
	}
	return hr, nil
}

// hostTags reads a host's tags list.
func (l *loader) hostTags(fs *fieldSet) ([]string, error) {
	e, ok := fs.m["tags"]
	if !ok {
		return nil, nil
	}
	items, _, err := l.sequence(e.val, e.path)
	if err != nil {
		return nil, err
	}
	var tags []string
	seen := map[string]bool{}
	for k, it := range items {
		path := indexPath(e.path, k)
		t, n, err := l.toStr(it, path)
		if err != nil {
			return nil, err
		}
		if err := l.checkIdent(n, path, t); err != nil {
			return nil, err
		}
		if seen[t] {
			return nil, l.errAt(n, path, "duplicate tag %s", quoteValue(t))
		}
		seen[t] = true
		if err := l.defineAttr(n, path, t, "tag "+quote(t)); err != nil {
			return nil, err
		}
		tags = append(tags, t)
	}
	return tags, nil
}

func (l *loader) loadShared(top *fieldSet) error {
	l.sharedIDs = map[string]SharedID{}
	e, ok := top.m["shared"]
	if !ok {
		return nil
	}
	es, _, err := l.mapping(e.val, e.path)
	if err != nil {
		return err
	}
	for _, se := range es {
		if err := l.checkIdent(se.kn, se.path, se.key); err != nil {
			return err
		}
		if _, isRes := l.resIDs[se.key]; isRes {
			return l.errAt(se.kn, se.path, "%s is already a host resource; a shared resource needs another name", quoteValue(se.key))
		}
		v, err := l.toNum(se.val, se.path)
		if err != nil {
			return err
		}
		l.sharedIDs[se.key] = SharedID(len(l.c.Shared))
		l.c.Shared = append(l.c.Shared, Shared{Name: se.key, Total: v})
	}
	return nil
}

func (l *loader) loadQueues(top *fieldSet) error {
	c := l.c
	l.queueIDs = map[string]QueueID{}
	items, seq, err := l.sequence(top.m["queues"].val, "queues")
	if err != nil {
		return err
	}
	if seq == nil {
		c.Queues = []Queue{{Name: "normal", Policy: PolicyFirstFit, Picker: "priority"}}
		l.queueIDs["normal"] = 0
		return nil
	}
	if len(items) == 0 {
		return l.errAt(seq, "queues", "must not be empty (leave the section out for the default queue)")
	}
	fields := []string{"name", "priority", "policy", "picker", "status", "hosts", "shares", "half_life", "default_runlimit", "exclusive",
		"preemptive", "preempt_action", "max_job_test"}
	var preempt []preemptiveItem
	for i, it := range items {
		fs, name, err := namedItem(l, it, "queues", "queue", i, fields, l.queueIDs)
		if err != nil {
			return err
		}
		q := Queue{Name: name}
		prio, err := l.intField(fs, "priority", -maxPriority, maxPriority, 0)
		if err != nil {
			return err
		}
		q.Priority = int(prio)
		policy, err := l.slurmEnumField(fs, "policy", "firstfit", "backfill", "fcfs", "firstfit", "easy", "conservative")
		if err != nil {
			return err
		}
		q.Policy = Policy(policy)
		if q.Picker, err = l.slurmEnumField(fs, "picker", "priority", "multifactor", "priority", "fairshare"); err != nil {
			return err
		}
		status, err := l.enumField(fs, "status", "open", "open", "closed")
		if err != nil {
			return err
		}
		q.Closed = status == "closed"
		if err := l.boolField(fs, "exclusive", &q.Exclusive); err != nil {
			return err
		}
		if q.DefaultRunLimit, err = l.intField(fs, "default_runlimit", 1, MaxTime, 0); err != nil {
			return err
		}
		depth, err := l.intField(fs, "max_job_test", 1, maxCount, 0)
		if err != nil {
			return err
		}
		q.MaxJobTest = int(depth)
		if e, ok := fs.m["hosts"]; ok && l.has(fs, "hosts") {
			names, n, err := l.nameList(e.val, e.path, "host", l.hostOrGroupExists, "")
			if err != nil {
				return err
			}
			if len(names) == 0 {
				return l.errAt(n, e.path, "must not be empty (leave it out for every host)")
			}
			q.Hosts = l.expandHosts(names)
		}
		if err := l.loadFairshare(fs, &q); err != nil {
			return err
		}
		preempt = append(preempt, preemptiveItem{QueueID(len(c.Queues)), fs})
		c.Queues = append(c.Queues, q)
	}
	return l.loadPreemption(preempt)
}

// loadFairshare reads a queue's shares and half_life, which only a
// fairshare queue may have.
func (l *loader) loadFairshare(fs *fieldSet, q *Queue) error {
	for _, f := range []string{"shares", "half_life"} {
		if e, ok := fs.m[f]; ok && l.has(fs, f) && q.Picker != "fairshare" {
			return l.errAt(e.kn, e.path, "only a queue with picker: fairshare has %s", f)
		}
	}
	if e, ok := fs.m["shares"]; ok && l.has(fs, "shares") {
		es, _, err := l.mapping(e.val, e.path)
		if err != nil {
			return err
		}
		for _, se := range es {
			n, err := l.toInt(se.val, se.path, 1, maxCount)
			if err != nil {
				return err
			}
			q.Shares = append(q.Shares, UserShare{User: se.key, Shares: int(n)})
		}
	}
	hl, err := l.intField(fs, "half_life", 1, MaxTime, 0)
	if err != nil {
		return err
	}
	q.HalfLife = hl
	return nil
}

// namedItem reads item i of a section as a mapping of the allowed fields
// with a name unique in the section; seen maps names to their item index
// and gets this one.
func namedItem[ID ~int | ~int32](l *loader, it ast.Node, section, what string, i int, fields []string, seen map[string]ID) (*fieldSet, string, error) {
	path := indexPath(section, i)
	fs, err := l.item(it, path, fields)
	if err != nil {
		return nil, "", err
	}
	name, nn, err := l.nameField(fs)
	if err != nil {
		return nil, "", err
	}
	if first, dup := seen[name]; dup {
		return nil, "", l.errAt(nn, fieldPath(path, "name"), "duplicate %s name %s (first at %s)", what, quoteValue(name), indexPath(section, int(first)))
	}
	seen[name] = ID(i)
	return fs, name, nil
}

func (l *loader) hostExists(s string) bool {
	_, ok := l.hostIDs[s]
	return ok
}

// hostOrGroupExists reports whether s names a host or a host group.
func (l *loader) hostOrGroupExists(s string) bool {
	_, ok := l.c.HostGroupByName(s)
	return ok || l.hostExists(s)
}

// expandHosts returns the hosts names (hosts and host groups) stand for,
// sorted by HostID, each once.
func (l *loader) expandHosts(names []string) []HostID {
	var out []HostID
	for _, n := range names {
		if g, ok := l.c.HostGroupByName(n); ok {
			out = append(out, l.c.HostGroupHosts(g)...)
		} else {
			out = append(out, l.hostIDs[n])
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func (l *loader) queueExists(s string) bool {
	_, ok := l.queueIDs[s]
	return ok
}

// nameList reads a list of distinct names; what names their kind in
// messages, exists, if not nil, says which names are known, and reserved,
// if not empty, is a keyword that may not appear in the list.
func (l *loader) nameList(n ast.Node, path, what string, exists func(string) bool, reserved string) ([]string, ast.Node, error) {
	items, seq, err := l.sequence(n, path)
	if err != nil {
		return nil, seq, err
	}
	var names []string
	seen := map[string]bool{}
	for k, it := range items {
		p := indexPath(path, k)
		s, sn, err := l.toStr(it, p)
		if err == nil {
			err = l.checkName(sn, p, s)
		}
		if err != nil {
			return nil, seq, err
		}
		if reserved != "" && s == reserved {
			return nil, seq, l.errAt(sn, p, "%s inside a list is ambiguous; write %s without brackets", quoteValue(s), s)
		}
		if exists != nil && !exists(s) {
			return nil, seq, l.errAt(sn, p, "unknown %s %s", what, quoteValue(s))
		}
		if seen[s] {
			return nil, seq, l.errAt(sn, p, "%s %s is listed twice", what, quoteValue(s))
		}
		seen[s] = true
		names = append(names, s)
	}
	return names, seq, nil
}

func (l *loader) loadLimits(top *fieldSet) error {
	items, _, err := l.sequence(top.m["limits"].val, "limits")
	if err != nil {
		return err
	}
	fields := []string{"name", "users", "queues", "hosts", "projects",
		"per_user", "per_queue", "per_host", "per_project", "slots", "jobs", "mem", "resources"}
	names := map[string]int{}
	for i, it := range items {
		path := indexPath("limits", i)
		fs, name, err := namedItem(l, it, "limits", "limit", i, fields, names)
		if err != nil {
			return err
		}
		lim := Limit{Name: name}
		for _, d := range []struct {
			field, what string
			dst         *Consumers
			exists      func(string) bool
		}{
			{"users", "user", &lim.Users, nil},
			{"queues", "queue", &lim.Queues, l.queueExists},
			{"hosts", "host", &lim.Hosts, l.hostOrGroupExists},
			{"projects", "project", &lim.Projects, nil},
		} {
			if *d.dst, err = l.consumers(fs, d.field, "per_"+d.what, d.what, d.exists); err != nil {
				return err
			}
		}
		slots, err := l.intField(fs, "slots", 0, maxCount, -1)
		if err != nil {
			return err
		}
		jobs, err := l.intField(fs, "jobs", 0, maxCount, -1)
		if err != nil {
			return err
		}
		lim.Slots, lim.Jobs = int(slots), int(jobs)
		if lim.Resources, err = l.limitResources(fs); err != nil {
			return err
		}
		if lim.Slots < 0 && lim.Jobs < 0 && len(lim.Resources) == 0 {
			return l.errAt(fs.node, path, "a limit needs at least one of slots, jobs, mem, resources")
		}
		l.c.Limits = append(l.c.Limits, lim)
	}
	return nil
}

// consumers reads one consumer dimension of a limit: field (e.g. users) or
// perField (per_user), each "all" or a list of names.
func (l *loader) consumers(fs *fieldSet, field, perField, what string, exists func(string) bool) (Consumers, error) {
	var c Consumers
	has, hasPer := l.has(fs, field), l.has(fs, perField)
	if has && hasPer {
		e := fs.m[perField]
		return c, l.errAt(e.val, e.path, "cannot be combined with %s (give one of them)", field)
	}
	if !has && !hasPer {
		return c, nil
	}
	e := fs.m[field]
	if hasPer {
		e = fs.m[perField]
		c.PerConsumer = true
	}
	r, _, err := l.resolve(e.val, e.path)
	if err != nil {
		return c, err
	}
	if s, ok := r.(*ast.StringNode); ok {
		if s.Value != "all" {
			return c, l.errAt(r, e.path, "expected \"all\" or a list of %s names, got string %s", what, quoteValue(s.Value))
		}
		c.All = true
		return c, nil
	}
	names, n, err := l.nameList(e.val, e.path, what, exists, "all")
	if err != nil {
		return c, err
	}
	if len(names) == 0 {
		return c, l.errAt(n, e.path, "must not be empty")
	}
	c.Names = names
	return c, nil
}

// limitResources reads a limit's mem and resources fields.
func (l *loader) limitResources(fs *fieldSet) ([]LimitResource, error) {
	var out []LimitResource
	if e, ok := fs.m["mem"]; ok && l.has(fs, "mem") {
		v, err := l.toNum(e.val, e.path)
		if err != nil {
			return nil, err
		}
		if _, isRes := l.resIDs["mem"]; !isRes {
			return nil, l.errAt(e.val, e.path, "no host has a mem resource")
		}
		out = append(out, LimitResource{"mem", v})
	}
	e, ok := fs.m["resources"]
	if !ok {
		return out, nil
	}
	es, _, err := l.mapping(e.val, e.path)
	if err != nil {
		return nil, err
	}
	for _, re := range es {
		if _, isRes := l.resIDs[re.key]; !isRes && !l.sharedExists(re.key) {
			return nil, l.errAt(re.kn, re.path, "%s is neither a host resource nor a shared resource", quoteValue(re.key))
		}
		if re.key == "mem" && len(out) > 0 && out[0].Name == "mem" {
			return nil, l.errAt(re.kn, re.path, "mem is already limited by the mem field")
		}
		v, err := l.toNum(re.val, re.path)
		if err != nil {
			return nil, err
		}
		out = append(out, LimitResource{re.key, v})
	}
	return out, nil
}

func (l *loader) sharedExists(s string) bool {
	_, ok := l.sharedIDs[s]
	return ok
}
