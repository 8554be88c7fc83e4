package cluster

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/goccy/go-yaml/ast"

	"github.com/xce-sched/xce/depend"
	"github.com/xce-sched/xce/jobarray"
	"github.com/xce-sched/xce/resreq"
)

// This file loads the jobs section of a scenario (docs/scenario.md).

// Defaults of job fields.
const (
	// DefaultUser is the user of a job that names none.
	DefaultUser = "nobody"
	// DefaultProject is the project of a job that names none.
	DefaultProject = "default"
)

// loadJobs reads the jobs list: from the document, or one item at a time
// (l.stream, scenario_stream.go), once the number of jobs it declares is
// known to be at most MaxScenarioJobs (scenario_declared.go).
func (l *loader) loadJobs(top *fieldSet) error {
	var items []ast.Node
	n := 0
	if l.stream != nil {
		n = l.stream.r.items
		if err := l.checkDeclaredStream(); err != nil {
			return err
		}
	} else {
		var err error
		if items, _, err = l.sequence(top.m["jobs"].val, "jobs"); err != nil {
			return err
		}
		n = len(items)
		if err := l.checkDeclaredItems(items); err != nil {
			return err
		}
	}
	jl := jobList{ids: make(map[JobID]int, n)}
	l.running = map[int]position{}
	l.c.Jobs = make([]Job, 0, n)
	for i := 0; ; i++ {
		var it ast.Node
		if l.stream != nil {
			var err error
			if it, err = l.nextJob(i); err != nil || it == nil {
				return err
			}
			if err := l.spend(1, it, "jobs"); err != nil { // l.sequence's spend, one item at a time
				return err
			}
		} else if i < len(items) {
			it = items[i]
		} else {
			return nil
		}
		if err := l.addJob(&jl, i, it); err != nil {
			return err
		}
	}
}

// jobList is what loadJobs keeps from job to job: the index of each job
// ID's item, the latest submit or start and the runtimes so far.
type jobList struct {
	ids           map[JobID]int
	latest, total int64
}

// addJob reads item i of the jobs list, it, into l.c.Jobs.
func (l *loader) addJob(jl *jobList, i int, it ast.Node) error {
	path := indexPath("jobs", i)
	fs, err := l.item(it, path, jobFields)
	if err != nil {
		return err
	}
	if err := l.required(fs, "id"); err != nil {
		return err
	}
	id, err := l.intField(fs, "id", 0, math.MaxInt64, 0)
	if err != nil {
		return err
	}
	j, err := l.job(fs, JobID(id))
	if err != nil {
		return err
	}
	elems, err := l.array(fs, &j)
	if err != nil {
		return err
	}
	if len(l.c.Jobs)+len(elems) > MaxScenarioJobs {
		return l.errAt(it, path, "the scenario has more than %d jobs (array elements count one each)", MaxScenarioJobs)
	}
	for _, e := range elems {
		if first, dup := jl.ids[e.ID]; dup {
			if e.Array != 0 {
				return l.errAt(fs.value("array"), fieldPath(path, "array"), "the array's %d elements take job ids %d to %d, and id %d is %s's",
					len(elems), id, id+int64(len(elems)-1), e.ID, indexPath("jobs", first))
			}
			return l.errAt(fs.value("id"), fieldPath(path, "id"), "duplicate job id %d (first at %s)", id, indexPath("jobs", first))
		}
		jl.ids[e.ID] = i
		// The horizon (MaxTime): every term is at most MaxTime, and
		// the sum was at most MaxTime before: no overflow.
		jl.latest = max(jl.latest, e.Submit, e.Start)
		if jl.total += e.Runtime; jl.latest+jl.total > MaxTime {
			return l.errAt(it, path, "the latest submit or start time so far (%d s) plus the runtimes of jobs[0] to jobs[%d] (%d s) exceed 10^15 s, the most a simulation of the scenario may reach",
				jl.latest, i, jl.total)
		}
	}
	l.c.Jobs = append(l.c.Jobs, elems...)
	return nil
}

// jobFields are the fields of a job.
var jobFields = []string{"id", "user", "project", "queue", "submit", "tasks",
	"resreq", "runtime", "estimate", "running_on", "start", "array", "name", "depend", "exit_code", "exclusive", "gpu", "qos"}

// MaxScenarioJobs is the most jobs a scenario may hold, array elements
// counted one each.
const MaxScenarioJobs = 10_000_000

// array returns the jobs one item of the jobs list stands for: j itself,
// or, with an array field, its elements (docs/arrays.md): consecutive job
// IDs from j's, each with its index, in index order.
func (l *loader) array(fs *fieldSet, j *Job) ([]Job, error) {
	if !l.has(fs, "array") {
		return []Job{*j}, nil
	}
	s, n, err := l.strField(fs, "array", "")
	if err != nil {
		return nil, err
	}
	path := fieldPath(fs.path, "array")
	if j.RunningOn != nil {
		return nil, l.errAt(n, path, "an array cannot have running_on (give each running element as a job of its own)")
	}
	spec, err := jobarray.Parse(s, l.c.MaxArraySize)
	if err != nil {
		se := l.errAt(n, path, "%v", err)
		se.cause = err
		return nil, se
	}
	if uint64(j.ID)+uint64(len(spec.Indices))-1 > math.MaxInt64 {
		return nil, l.errAt(n, path, "its %d elements' job ids would pass %d", len(spec.Indices), int64(math.MaxInt64))
	}
	out := make([]Job, len(spec.Indices))
	for k, index := range spec.Indices {
		out[k] = *j
		out[k].ID = j.ID + JobID(k)
		out[k].Array, out[k].ArrayIndex, out[k].ArrayLimit = j.ID, index, spec.Limit
	}
	return out, nil
}

// job reads the fields of one job but its id.
func (l *loader) job(fs *fieldSet, id JobID) (Job, error) {
	j := Job{ID: id}
	var err error
	for _, f := range []struct {
		name, def string
		dst       *string
	}{{"user", DefaultUser, &j.User}, {"project", DefaultProject, &j.Project}, {"qos", "", &j.QOS}} {
		if f.def == "" && !l.has(fs, f.name) {
			continue // qos: none
		}
		s, n, err := l.strField(fs, f.name, f.def)
		if err == nil {
			err = l.checkName(n, fieldPath(fs.path, f.name), s)
		}
		if err == nil && f.name == "user" {
			if _, isGroup := l.c.UserGroupByName(s); isGroup {
				err = l.errAt(n, fieldPath(fs.path, f.name), "user %s has the name of a user group, which a limit or share naming it means, not this user; rename one of them", quoteValue(s))
			}
		}
		if err != nil {
			return j, err
		}
		*f.dst = l.intern(s)
	}
	if l.has(fs, "queue") {
		name, n, err := l.strField(fs, "queue", "")
		if err != nil {
			return j, err
		}
		q, ok := l.queueIDs[name]
		if !ok {
			return j, l.errAt(n, fieldPath(fs.path, "queue"), "unknown queue %s", quoteValue(name))
		}
		j.Queue = q
	}
	for _, f := range []struct {
		name string
		dst  *int64
	}{{"submit", &j.Submit}, {"runtime", &j.Runtime}, {"estimate", &j.Estimate}} {
		if *f.dst, err = l.intField(fs, f.name, 0, MaxTime, 0); err != nil {
			return j, err
		}
	}
	if j.Estimate == 0 {
		j.Estimate = l.c.Queues[j.Queue].DefaultRunLimit
	}
	if j.TasksMin, j.TasksMax, err = l.tasks(fs); err != nil {
		return j, err
	}
	rs, rn, err := l.strField(fs, "resreq", "")
	if err != nil {
		return j, err
	}
	if j.ResReq, j.Req, err = l.resreq(rs); err != nil {
		se := l.errAt(rn, fieldPath(fs.path, "resreq"), "%v", err)
		se.cause = err
		return j, se
	}
	if err := l.jobGPU(fs, &j); err != nil {
		return j, err
	}
	if err := l.runningOn(fs, &j); err != nil {
		return j, err
	}
	name, nn, err := l.strField(fs, "name", "")
	if err != nil {
		return j, err
	}
	if i := strings.IndexFunc(name, func(r rune) bool { return r < 0x20 || r == 0x7f }); i >= 0 {
		return j, l.errAt(nn, fieldPath(fs.path, "name"), "control character %q in the job name", name[i])
	}
	j.Name = name
	if ds, dn, err := l.strField(fs, "depend", ""); err != nil {
		return j, err
	} else if ds != "" {
		if j.Depend, err = depend.Parse(ds); err != nil {
			se := l.errAt(dn, fieldPath(fs.path, "depend"), "%v", err)
			se.cause = err
			return j, se
		}
	}
	if err := l.boolField(fs, "exclusive", &j.Exclusive); err != nil {
		return j, err
	}
	if j.Exclusive && !l.c.Queues[j.Queue].Exclusive {
		return j, l.errAt(fs.value("exclusive"), fieldPath(fs.path, "exclusive"), "queue %s does not take exclusive jobs (give it exclusive: true)", quoteValue(l.c.Queues[j.Queue].Name))
	}
	code, err := l.intField(fs, "exit_code", 0, 255, 0)
	if err != nil {
		return j, err
	}
	j.ExitCode = int(code)
	if l.has(fs, "start") {
		e := fs.m["start"]
		if j.RunningOn == nil {
			return j, l.errAt(e.val, e.path, "only a running job (with running_on) has a start time")
		}
		if j.Start, err = l.toInt(e.val, e.path, 0, MaxTime); err != nil {
			return j, err
		}
		if j.Start < j.Submit {
			return j, l.errAt(e.val, e.path, "must be >= submit (%d), got %d", j.Submit, j.Start)
		}
	} else if j.RunningOn != nil {
		j.Start = j.Submit
	}
	return j, nil
}

// intern returns s, or an equal string it returned before: the jobs of a
// scenario share their users' and projects' names.
func (l *loader) intern(s string) string {
	if t, ok := l.strs[s]; ok {
		return t
	}
	if l.strs == nil {
		l.strs = map[string]string{}
	}
	l.strs[s] = s
	return s
}

// resreq parses a job's resource requirement, or returns the string and
// the parse of an equal one read before: no one changes a Requirement,
// and jobs of the same requirement share one (arrays' elements did
// already).
func (l *loader) resreq(s string) (string, *resreq.Requirement, error) {
	if r, ok := l.reqs[s]; ok {
		return r.text, r.req, nil
	}
	req, err := resreq.Parse(s)
	if err != nil {
		return s, nil, err
	}
	if l.reqs == nil {
		l.reqs = map[string]parsedReq{}
	}
	l.reqs[s] = parsedReq{s, req}
	return s, req, nil
}

// parsedReq is a resource requirement string and its parse.
type parsedReq struct {
	text string
	req  *resreq.Requirement
}

// tasks reads a job's task count: n, "n" or "min,max" (default 1).
func (l *loader) tasks(fs *fieldSet) (lo, hi int, err error) {
	e, ok := fs.m["tasks"]
	if !ok || !l.has(fs, "tasks") {
		return 1, 1, nil
	}
	r, str, err := l.resolve(e.val, e.path)
	if err != nil {
		return 0, 0, err
	}
	if _, isInt := r.(*ast.IntegerNode); isInt && !str {
		n, err := l.toInt(e.val, e.path, 1, maxCount)
		return int(n), int(n), err
	}
	s, sn, err := l.toStr(e.val, e.path)
	if err != nil {
		return 0, 0, l.errAt(r, e.path, "expected a task count n or \"min,max\", got %s", kind(r))
	}
	bad := func(format string, args ...any) error {
		return l.errAt(sn, e.path, "%s: %s", quoteValue(s), fmt.Sprintf(format, args...))
	}
	parts := strings.Split(s, ",")
	if len(parts) > 2 {
		return 0, 0, bad("expected \"n\" or \"min,max\"")
	}
	var v [2]int
	for k, p := range parts {
		p = strings.TrimSpace(p)
		if p == "" || strings.Trim(p, "0123456789") != "" {
			return 0, 0, bad("expected \"n\" or \"min,max\" with whole numbers")
		}
		n, perr := strconv.Atoi(p)
		if perr != nil || n > maxCount {
			return 0, 0, bad("task counts must be <= %d", maxCount)
		}
		v[k] = n
	}
	if len(parts) == 1 {
		v[1] = v[0]
	}
	if v[0] < 1 {
		return 0, 0, bad("task counts must be >= 1")
	}
	if v[1] < v[0] {
		return 0, 0, bad("min %d is greater than max %d", v[0], v[1])
	}
	return v[0], v[1], nil
}

// runningOn reads a job's running_on map into j.RunningOn (host order).
func (l *loader) runningOn(fs *fieldSet, j *Job) error {
	e, ok := fs.m["running_on"]
	if !ok {
		return nil
	}
	es, mn, err := l.mapping(e.val, e.path)
	if err != nil || mn == nil {
		return err
	}
	if len(es) == 0 {
		return l.errAt(mn, e.path, "must not be empty (leave it out for a pending job)")
	}
	total := 0
	for _, re := range es {
		h, ok := l.hostIDs[re.key]
		if !ok {
			return l.errAt(re.kn, re.path, "unknown host %s", quoteValue(re.key))
		}
		n, err := l.toInt(re.val, re.path, 1, maxCount)
		if err != nil {
			return err
		}
		j.RunningOn = append(j.RunningOn, HostSlots{Host: h, Slots: int(n)})
		total += int(n)
	}
	slices.SortFunc(j.RunningOn, func(a, b HostSlots) int { return int(a.Host) - int(b.Host) })
	if total < j.TasksMin || total > j.TasksMax {
		return l.errAt(mn, e.path, "holds %d slots in total, outside the job's tasks %s", total, taskRange(j))
	}
	l.running[len(l.c.Jobs)] = at(mn)
	return nil
}

func taskRange(j *Job) string {
	if j.TasksMin == j.TasksMax {
		return strconv.Itoa(j.TasksMin)
	}
	return fmt.Sprintf("%d,%d", j.TasksMin, j.TasksMax)
}
