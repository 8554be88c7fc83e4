// Package limit enforces resource allocation limits with the semantics of
// LSF's lsb.resources Limit sections (docs/limits.md): consumers (users,
// queues, hosts, projects; lists, all, or one instance per consumer) and
// maxima on slots, jobs, host consumables and shared resources. A users
// or hosts list may name user groups and host groups: users: [chem] is
// one instance for the group's members together, per_user: [chem] one
// per member (LSF's USERS and PER_USER with a group).
//
// The plugin takes part in the runner's prepare fan-out: a job-level pass
// (PrepareJob) that rules a job out when a limit it falls under cannot take
// even its smallest task count, and a per-host pass (PrepareHost) that adds
// the limit counters a candidate would charge to the per-host request. The
// runner checks and reserves those counters with everything else, so a
// limit is never over-committed. Limit instances (one counter per limited
// resource) are created lazily, on first use.
package limit

import (
	"encoding/binary"
	"slices"

	"github.com/xce-sched/xce/cluster"
	"github.com/xce-sched/xce/framework"
	"github.com/xce-sched/xce/resreq"
)

// Name is the plugin's registry name.
const Name = "limit"

// resKind is what a limited resource counts.
type resKind uint8

const (
	kindSlots   resKind = iota // task slots (on the limit's hosts)
	kindJobs                   // running jobs (per host for a per-host limit)
	kindHostRes                // a host consumable's rusage (mem in MB)
	kindShared                 // a shared resource's rusage, once per job
)

type limRes struct {
	kind resKind
	id   int32 // ResID or SharedID
	max  float64
}

// compiled is one Limit resolved against the cluster.
type compiled struct {
	idx      int32
	lim      *cluster.Limit
	queueSet []bool // per queue: matches (nil: every queue)
	hostMask []bool // per host: counted (nil: every host)
	// users holds the users a users or per_user list names, user groups
	// expanded (nil: every user).
	users *cluster.UserSet
	res   []limRes
	maxes []float64
}

// instKey identifies one limit instance apart from its host: the consumers
// it is per (empty when the limit is shared by all its consumers).
type instKey struct {
	limit   int32
	user    string
	queue   cluster.QueueID // -1 unless per_queue
	project string
}

// Instance is one limit instance as `xce limits` shows it.
type Instance struct {
	Limit   int // index in Cluster.Limits
	User    string
	Queue   string
	Project string
	Host    string
	// First is the counter of the limit's first resource; the others follow.
	First cluster.CounterID
}

// Plugin is the limit plugin for one cluster state.
type Plugin struct {
	c      *cluster.Cluster
	st     *cluster.State
	limits []compiled

	insts     []instKey         // interned instances, by instance number
	instIdx   map[instKey]int32 // instance → number
	instFirst []cluster.CounterID
	// hostFirst is, per instance of a per-host limit, the first counter
	// of each host's instance (-1 until first used), in pages of hostPage
	// hosts indexed by HostID: the host walk looks it up without hashing,
	// and memory grows with the pages of hosts an instance has touched.
	hostFirst [][][]cluster.CounterID
	shown     []Instance // every instance created, in creation order
	classes   map[string]int32
	// byConsumer memoizes bind per (user, project, queue): the limits that
	// apply and the class depend on nothing else.
	byConsumer map[consumerKey]binding

	// The job whose applicable limits are cached.
	job     *framework.Job
	applied []applied
	class   int32
}

type applied struct {
	lim  *compiled
	inst int32 // instance number (without host)
}

type consumerKey struct {
	user, project string
	queue         cluster.QueueID
}

type binding struct {
	applied []applied
	class   int32
}

var (
	_ framework.Preparer    = (*Plugin)(nil)
	_ framework.JobPreparer = (*Plugin)(nil)
	_ framework.Classifier  = (*Plugin)(nil)
	_ framework.Slacker     = (*Plugin)(nil)
)

// New compiles c's limits against state st, whose counters the plugin's
// instances live in.
func New(c *cluster.Cluster, st *cluster.State) *Plugin {
	p := &Plugin{c: c, st: st, instIdx: map[instKey]int32{}, classes: map[string]int32{},
		byConsumer: map[consumerKey]binding{}}
	for i := range c.Limits {
		l := &c.Limits[i]
		cl := compiled{idx: int32(i), lim: l}
		if l.Queues.Set() && !l.Queues.All {
			cl.queueSet = make([]bool, len(c.Queues))
			for _, name := range l.Queues.Names {
				if q, ok := c.QueueByName(name); ok {
					cl.queueSet[q] = true
				}
			}
		}
		if l.Hosts.Set() && !l.Hosts.All {
			cl.hostMask = make([]bool, len(c.Hosts))
			for _, h := range c.ExpandHosts(l.Hosts.Names) {
				cl.hostMask[h] = true
			}
		}
		if l.Users.Set() && !l.Users.All {
			cl.users = c.NewUserSet(l.Users.Names)
		}
		if l.Slots >= 0 {
			cl.res = append(cl.res, limRes{kindSlots, 0, float64(l.Slots)})
		}
		if l.Jobs >= 0 {
			cl.res = append(cl.res, limRes{kindJobs, 0, float64(l.Jobs)})
		}
		for _, lr := range l.Resources {
			if r, ok := c.ResourceByName(lr.Name); ok {
				cl.res = append(cl.res, limRes{kindHostRes, int32(r), lr.Max})
			} else if s, ok := c.SharedByName(lr.Name); ok {
				cl.res = append(cl.res, limRes{kindShared, int32(s), lr.Max})
			}
		}
		for _, r := range cl.res {
			cl.maxes = append(cl.maxes, r.max)
		}
		p.limits = append(p.limits, cl)
	}
	return p
}

// Name implements framework.Plugin.
func (*Plugin) Name() string { return Name }

func matches(c cluster.Consumers, name string) bool {
	return !c.Set() || c.All || slices.Contains(c.Names, name)
}

// bind sets the limits that apply to job and their instances, and the
// job's class (computed once per consumer tuple).
func (p *Plugin) bind(job *framework.Job) {
	if p.job == job {
		return
	}
	spec := job.Spec
	key := consumerKey{spec.User, spec.Project, spec.Queue}
	b, ok := p.byConsumer[key]
	if !ok {
		b = p.bindConsumer(spec)
		p.byConsumer[key] = b
	}
	p.job, p.applied, p.class = job, b.applied, b.class
}

// bindConsumer computes the binding of the jobs of spec's user, project
// and queue.
func (p *Plugin) bindConsumer(spec *cluster.Job) binding {
	var b binding
	var sig []byte
	for i := range p.limits {
		cl := &p.limits[i]
		l := cl.lim
		if (cl.users != nil && !cl.users.Has(spec.User)) || !matches(l.Projects, spec.Project) ||
			(cl.queueSet != nil && !cl.queueSet[spec.Queue]) {
			continue
		}
		k := instKey{limit: cl.idx, queue: -1}
		if l.Users.PerConsumer {
			k.user = spec.User
		}
		if l.Queues.PerConsumer {
			k.queue = spec.Queue
		}
		if l.Projects.PerConsumer {
			k.project = spec.Project
		}
		n, ok := p.instIdx[k]
		if !ok {
			n = int32(len(p.insts))
			p.insts = append(p.insts, k)
			p.instIdx[k] = n
			p.instFirst = append(p.instFirst, -1)
		}
		b.applied = append(b.applied, applied{cl, n})
		sig = binary.AppendVarint(sig, int64(n))
	}
	id, ok := p.classes[string(sig)]
	if !ok {
		id = int32(len(p.classes))
		p.classes[string(sig)] = id
	}
	b.class = id
	return b
}

// hostPage is how many hosts one page of a per-host limit's counter
// table covers.
const hostPage = 64

// counters returns the first counter of instance a on host h (the shared
// instance when the limit is not per host), creating it on first use.
func (p *Plugin) counters(a applied, h cluster.HostID) cluster.CounterID {
	if a.lim.lim.Hosts.PerConsumer {
		for int(a.inst) >= len(p.hostFirst) {
			p.hostFirst = append(p.hostFirst, nil)
		}
		dir := p.hostFirst[a.inst]
		if dir == nil {
			dir = make([][]cluster.CounterID, (len(p.c.Hosts)+hostPage-1)/hostPage)
			p.hostFirst[a.inst] = dir
		}
		page := dir[h/hostPage]
		if page == nil {
			page = make([]cluster.CounterID, hostPage)
			for i := range page {
				page[i] = -1
			}
			dir[h/hostPage] = page
		}
		if page[h%hostPage] < 0 {
			page[h%hostPage] = p.create(a, h)
		}
		return page[h%hostPage]
	}
	if p.instFirst[a.inst] < 0 {
		p.instFirst[a.inst] = p.create(a, -1)
	}
	return p.instFirst[a.inst]
}

func (p *Plugin) create(a applied, h cluster.HostID) cluster.CounterID {
	id := p.st.NewCounters(a.lim.idx, a.lim.maxes)
	k := p.insts[a.inst]
	in := Instance{Limit: int(a.lim.idx), User: k.user, Project: k.project, First: id}
	if k.queue >= 0 {
		in.Queue = p.c.Queues[k.queue].Name
	}
	if h >= 0 {
		in.Host = p.c.Hosts[h].Name
	}
	p.shown = append(p.shown, in)
	return id
}

// Class implements framework.Classifier: jobs under the same limit
// instances get the same class.
func (p *Plugin) Class(job *framework.Job) int32 {
	p.bind(job)
	return p.class
}

// PrepareJob implements framework.JobPreparer. For every limit that
// applies to job on all hosts (no hosts consumer) and is not per host, it
// checks that the alternative's smallest placement (tasks slots, the
// host-resource rusage they reserve on as few hosts as may hold them, one
// job, the shared rusage) still fits the counters of the view's state
// (live, or a projection); else the job pends with LimitReached naming the
// limit.
func (p *Plugin) PrepareJob(job *framework.Job, alt *framework.Alternative, tasks int, view *framework.View) (framework.Reason, int32) {
	return p.prepareJob(job, alt, tasks, view, false)
}

// prepareJob is PrepareJob for the smallest placement of tasks tasks, or,
// when largest, for the largest (every task on a host of its own, so that
// per-host rusage is charged once per task).
func (p *Plugin) prepareJob(job *framework.Job, alt *framework.Alternative, tasks int, view *framework.View, largest bool) (framework.Reason, int32) {
	p.bind(job)
	for _, a := range p.applied {
		l := a.lim.lim
		if l.Hosts.Set() {
			continue // usage depends on where the job lands
		}
		first := p.counters(a, -1)
		for k, r := range a.lim.res {
			need := 0.0
			switch r.kind {
			case kindSlots:
				need = float64(tasks)
			case kindJobs:
				need = 1
			case kindHostRes:
				need = hostResNeed(alt, tasks, cluster.ResID(r.id), largest)
			case kindShared:
				need = sharedAmount(alt, r.id)
			}
			if need > 0 && !cluster.Within(need, view.State.CounterFree(first+cluster.CounterID(k))) {
				return framework.LimitReached, a.lim.idx
			}
		}
	}
	return framework.None, -1
}

// Slack implements framework.Slacker: every limit that applies to job
// counts over all hosts (no hosts consumer) and each of its counters has
// room for the job's largest placement under any alternative (TasksMax
// slots, or a compound alternative's tasks; their host-resource rusage,
// each task on a host of its own; one job; the shared rusage).
func (p *Plugin) Slack(job *framework.Job, view *framework.View) bool {
	p.bind(job)
	for _, a := range p.applied {
		if a.lim.lim.Hosts.Set() {
			return false
		}
	}
	for ai := range job.Req.Alts {
		alt := &job.Req.Alts[ai]
		_, tasks := alt.TaskRange(job.Spec)
		if reason, _ := p.prepareJob(job, alt, tasks, view, true); reason != framework.None {
			return false
		}
	}
	return true
}

// hostResNeed returns what a placement of tasks tasks of alt reserves of
// host resource r in all: each term's per-slot rusage for each of its
// tasks, its per-job rusage once, and its per-host rusage on the fewest
// hosts the term's tasks can take (one, or ⌈tasks/ptile⌉ under
// span[ptile]) or, when largest, once per task (the most).
func hostResNeed(alt *framework.Alternative, tasks int, r cluster.ResID, largest bool) float64 {
	need := 0.0
	for ti := range alt.Terms {
		t := &alt.Terms[ti]
		n := t.Tasks
		if n == 0 {
			n = tasks
		}
		hosts := 1 // the fewest hosts n tasks take: one, or ⌈n/ptile⌉
		if t.Span.Kind == resreq.SpanPtile {
			hosts = (n + t.Span.Ptile - 1) / t.Span.Ptile
		}
		if largest {
			hosts = n
		}
		perHost := t.HostAmount(r, 0, false)
		need += t.HostAmount(r, n, true) - perHost + perHost*float64(hosts)
	}
	return need
}

func sharedAmount(alt *framework.Alternative, id int32) float64 {
	for _, sh := range alt.Shared {
		if int32(sh.Shared) == id {
			return sh.Amount
		}
	}
	return 0
}

// PrepareHost implements framework.Preparer: it adds to req.Host the
// counters this candidate charges, for every limit that applies to the job
// and counts host h: NSlots slots; one job (per host for a per-host limit,
// else on the job's first host the limit counts); the candidate's total of
// each limited host consumable; a limited shared resource's rusage once per
// job. It never vetoes: the runner checks the counters.
func (p *Plugin) PrepareHost(req *framework.AllocRequest, h cluster.HostID) (framework.Reason, int32) {
	p.bind(req.Job)
	for _, a := range p.applied {
		cl := a.lim
		if cl.hostMask != nil && !cl.hostMask[h] {
			continue
		}
		first := p.counters(a, h)
		once := cl.lim.Hosts.PerConsumer || !p.countedBefore(cl, req.Claims)
		for k, r := range cl.res {
			amount := 0.0
			switch r.kind {
			case kindSlots:
				amount = float64(req.NSlots)
			case kindJobs:
				if once {
					amount = 1
				}
			case kindHostRes:
				amount = req.Host.Amount(cluster.ResID(r.id))
			case kindShared:
				if once && req.Alt != nil {
					amount = sharedAmount(req.Alt, r.id)
				}
			}
			if amount > 0 {
				req.Host.Counters = append(req.Host.Counters, cluster.CounterAmount{Counter: first + cluster.CounterID(k), Amount: amount})
			}
		}
	}
	return framework.None, -1
}

// countedBefore reports whether an earlier claim of the plan already landed
// on a host limit cl counts (so its per-job needs were charged there).
func (p *Plugin) countedBefore(cl *compiled, claims []framework.Claim) bool {
	if cl.hostMask == nil {
		return len(claims) > 0
	}
	for _, c := range claims {
		if cl.hostMask[c.Host] {
			return true
		}
	}
	return false
}

// Instances returns every limit instance created so far, in creation order.
func (p *Plugin) Instances() []Instance { return p.shown }

// Resources returns the names of limit l's limited resources, in counter
// order: "slots", "jobs", then resource names.
func (p *Plugin) Resources(l int) []string {
	var names []string
	for _, r := range p.limits[l].res {
		switch r.kind {
		case kindSlots:
			names = append(names, "slots")
		case kindJobs:
			names = append(names, "jobs")
		case kindHostRes:
			names = append(names, p.c.Resources[r.id])
		case kindShared:
			names = append(names, p.c.Shared[r.id].Name)
		}
	}
	return names
}
