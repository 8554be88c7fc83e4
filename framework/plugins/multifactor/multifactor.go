// Package multifactor is a picker that orders a queue's jobs as Slurm's
// priority/multifactor plugin does (the Multifactor Priority Plugin page,
// https://slurm.schedmd.com/priority_multifactor.html; slurm.conf(5)):
//
//	priority = WeightAge × age + WeightFairshare × fair-share
//	         + WeightJobSize × job size + WeightPartition × partition
//	         + WeightQOS × QOS
//
// each factor in [0, 1], summed in floating point in that order and
// truncated to an unsigned 32-bit integer (at least 1), as Slurm does.
// Jobs are taken by priority, highest first, then submit time, then job
// ID ("Job priority, Job submit time, Job ID"); the partition's
// PriorityTier is the queue's priority, which orders queues first.
//
//   - age = min(1, wait / PriorityMaxAge), the wait since submit;
//   - job size = (nodes / cluster nodes + CPUs / cluster CPUs) / 2, or one
//     minus it with PriorityFavorSmall; with SMALL_RELATIVE_TO_TIME, the
//     CPUs (at least nodes × the cluster's CPUs per node) over the time
//     limit in minutes, over the cluster's CPUs;
//   - partition = the queue's PriorityJobFactor / the largest;
//   - QOS = the job's QOS priority / the largest QOS priority;
//   - fair-share: Fair Tree's rank (the default) or the classic
//     2^(−UE/S/d) over the association tree of accounts and users (a
//     job's account is its project), usage being the CPU-seconds of the
//     jobs run, decayed with PriorityDecayHalfLife.
//
// As in Slurm, usage, fair-share factors and the priorities of pending
// jobs are recomputed every PriorityCalcPeriod (at the multiples of it);
// a job submitted in between keeps the priority it got at submission (age
// 0) until the next one. docs/slurm.md says what is approximated.
package multifactor

import (
	"cmp"
	"math"
	"slices"

	"github.com/xce-sched/xce/cluster"
	"github.com/xce-sched/xce/framework"
	"github.com/xce-sched/xce/resreq"
)

// Name is the plugin's registry name (and the scenario's picker name).
const Name = "multifactor"

// Plugin is the multifactor picker of one queue.
type Plugin struct {
	cfg   cluster.Multifactor
	queue cluster.QueueID

	nodes, cpus float64 // the cluster's hosts and slots
	partition   float64 // the queue's partition factor
	qos         map[string]float64
	df          float64 // Slurm's decay factor per second

	tree *tree
	// running are the jobs running, whose usage is charged at each
	// calculation (all queues': usage is the cluster's).
	running []*framework.Job
	// last is the time of the last calculation, -1 before the first.
	last int64
}

var (
	_ framework.Picker   = (*Plugin)(nil)
	_ framework.Observer = (*Plugin)(nil)
)

// New returns the multifactor picker of queue q of cluster c, configured
// by c.Slurm (Slurm's defaults without it). The association tree holds
// the configured accounts and the account (project) and user of every job
// of c.
func New(c *cluster.Cluster, q cluster.QueueID) *Plugin {
	p := &Plugin{cfg: cluster.DefaultMultifactor(), queue: q, qos: map[string]float64{}, last: -1}
	var accounts []cluster.SlurmAccount
	var qos []cluster.SlurmQOS
	if c.Slurm != nil {
		p.cfg = c.Slurm.Priority
		accounts, qos = c.Slurm.Accounts, c.Slurm.QOS
	}
	for _, h := range c.Hosts {
		p.nodes += float64(h.NumHosts()) // a host class's members (docs/host-classes.md)
		p.cpus += float64(h.Slots)
	}
	// Partition factor: PriorityJobFactor over the largest of any queue
	// (1 for a queue without partition settings, Slurm's default).
	factor := func(name string) float64 {
		if s, ok := c.Slurm.Partition(name); ok {
			return float64(s.JobFactor)
		}
		return 1
	}
	maxFactor := 0.0
	for _, qq := range c.Queues {
		maxFactor = max(maxFactor, factor(qq.Name))
	}
	if maxFactor > 0 {
		p.partition = factor(c.Queues[q].Name) / maxFactor
	}
	maxQOS := 0.0
	for _, s := range qos {
		maxQOS = max(maxQOS, float64(s.Priority))
	}
	for _, s := range qos {
		if maxQOS > 0 {
			p.qos[s.Name] = float64(s.Priority) / maxQOS
		}
	}
	p.df = 1
	if p.cfg.DecayHalfLife > 0 {
		// Slurm's own first-order approximation of 2^(-1/half-life)
		// (priority_multifactor.c, "DECAY_FACTOR DESCRIPTION").
		p.df = 1 - 0.693/float64(p.cfg.DecayHalfLife)
	}
	p.tree = newTree(accounts)
	for i := range c.Jobs {
		p.tree.assoc(c.Jobs[i].Project, c.Jobs[i].User)
	}
	return p
}

// Name implements framework.Plugin.
func (*Plugin) Name() string { return Name }

// Factors are a job's priority factors, each in [0, 1], and its priority.
type Factors struct {
	// Age, Fairshare, JobSize, Partition and QOS are the factors.
	Age, Fairshare, JobSize, Partition, QOS float64
	// Priority is their weighted sum, truncated (at least 1).
	Priority uint32
}

// Factors returns job's factors and priority at time now (seconds), as
// of the last calculation at or before now (or its submission, when
// later).
func (p *Plugin) Factors(job *framework.Job, now int64) Factors {
	p.advance(now)
	return p.factors(job)
}

// factors computes job's factors as of the last calculation.
func (p *Plugin) factors(job *framework.Job) Factors {
	spec := job.Spec
	var f Factors
	at := max(p.last, spec.Submit)
	if p.cfg.WeightAge > 0 {
		f.Age = min(1, float64(at-spec.Submit)/float64(p.cfg.MaxAge))
	}
	if p.cfg.WeightFairshare > 0 {
		f.Fairshare = p.tree.nodes[p.tree.assoc(spec.Project, spec.User)].fs
	}
	if p.cfg.WeightJobSize > 0 && p.nodes > 0 {
		f.JobSize = p.jobSize(spec)
	}
	if p.cfg.WeightPartition > 0 {
		f.Partition = p.partition
	}
	if p.cfg.WeightQOS > 0 {
		f.QOS = p.qos[cmp.Or(spec.QOS, "normal")]
	}
	prio := f.Age*float64(p.cfg.WeightAge) + f.Fairshare*float64(p.cfg.WeightFairshare) +
		f.JobSize*float64(p.cfg.WeightJobSize) + f.Partition*float64(p.cfg.WeightPartition) +
		f.QOS*float64(p.cfg.WeightQOS)
	switch {
	case prio < 1: // 0 is reserved for held jobs
		f.Priority = 1
	case prio > math.MaxUint32:
		f.Priority = math.MaxUint32
	default:
		f.Priority = uint32(prio) // truncated, as Slurm's (uint32_t) cast
	}
	return f
}

// jobSize is the job size factor of spec: its nodes (from span[ptile],
// else 1) and its CPUs (its least task count) against the cluster's.
func (p *Plugin) jobSize(spec *cluster.Job) float64 {
	cpus := float64(spec.TasksMin)
	nodes := float64(jobNodes(spec))
	var js float64
	switch {
	case p.cfg.SmallRelativeToTime:
		js = max(nodes*p.cpus/p.nodes, cpus)
		js /= float64(max(spec.Estimate/60, 1)) // the time limit in minutes
		js /= p.cpus
		if p.cfg.FavorSmall {
			js = 1 - js
		}
	case p.cfg.FavorSmall:
		js = ((p.nodes-nodes)/p.nodes + (p.cpus-cpus)/p.cpus) / 2
	default:
		js = (nodes/p.nodes + cpus/p.cpus) / 2
	}
	return min(max(js, 0), 1)
}

// jobNodes returns the nodes a job asks for: its task count over its
// span[ptile] rounded up, 1 for span[hosts=1] or no span (Slurm's
// min_nodes defaults to 1).
func jobNodes(spec *cluster.Job) int {
	if spec.Req == nil || len(spec.Req.Alternatives) == 0 {
		return 1
	}
	nodes := 0
	for _, t := range spec.Req.Alternatives[0].Terms {
		tasks := t.Count
		if tasks == 0 {
			tasks = spec.TasksMin
		}
		switch {
		case t.Span.Kind == resreq.SpanPtile && t.Span.Ptile > 0:
			nodes += (tasks + t.Span.Ptile - 1) / t.Span.Ptile
		default:
			nodes++
		}
	}
	return max(nodes, 1)
}

// Order implements framework.Picker: priority, highest first, then
// submit time, then job ID.
func (p *Plugin) Order(now int64, jobs []*framework.Job) {
	p.advance(now)
	type keyed struct {
		prio uint32
		job  *framework.Job
	}
	ks := make([]keyed, len(jobs))
	for i, j := range jobs {
		ks[i] = keyed{p.factors(j).Priority, j}
	}
	slices.SortStableFunc(ks, func(a, b keyed) int {
		return cmp.Or(cmp.Compare(b.prio, a.prio), cmp.Compare(a.job.Spec.Submit, b.job.Spec.Submit), cmp.Compare(a.job.Spec.ID, b.job.Spec.ID))
	})
	for i := range ks {
		jobs[i] = ks[i].job
	}
}

// JobStarted implements framework.Observer: the job's usage is charged
// from now on, at each calculation.
func (p *Plugin) JobStarted(job *framework.Job, now int64) {
	p.advance(now)
	if job.Alloc != nil {
		p.running = append(p.running, job)
	}
}

// JobFinished implements framework.Observer: the job's usage since the
// last calculation is charged (Slurm's priority_p_job_end).
func (p *Plugin) JobFinished(job *framework.Job, now int64) {
	p.advance(now)
	i := slices.Index(p.running, job)
	if i < 0 {
		return
	}
	p.running = slices.Delete(p.running, i, i+1)
	p.charge(job, now)
}

// charge adds job's usage from the last calculation (or its start) to t:
// CPUs × Δ × df^Δ, Slurm's decayed usage of the interval.
func (p *Plugin) charge(job *framework.Job, t int64) {
	from := max(p.last, job.Start)
	if from < 0 || t <= from || job.Alloc == nil {
		return
	}
	d := float64(t - from)
	p.tree.charge(p.tree.assoc(job.Spec.Project, job.Spec.User), float64(job.Alloc.Slots())*d*math.Pow(p.df, d))
}

// advance runs the calculations due at or before now: at every multiple
// of CalcPeriod (at now itself when CalcPeriod is 0), the usage decays
// for the time since the last, the running jobs' usage is charged, and
// the fair-share factors are recomputed.
func (p *Plugin) advance(now int64) {
	period := p.cfg.CalcPeriod
	if period <= 0 {
		if now > p.last {
			p.calc(now)
		}
		return
	}
	if p.last < 0 {
		p.calc(now - now%period) // the first calculation, before now
		return
	}
	for t := p.last + period; t <= now; t += period {
		if len(p.running) == 0 {
			// Nothing to charge: jump to the last calculation due,
			// decaying all the way (df^a · df^b = df^(a+b)).
			t += (now - t) / period * period
		}
		p.calc(t)
	}
}

// calc is one calculation at time t.
func (p *Plugin) calc(t int64) {
	if p.last >= 0 {
		p.tree.decay(math.Pow(p.df, float64(t-p.last)))
		for _, j := range p.running {
			p.charge(j, t)
		}
	}
	p.last = t
	if p.cfg.Classic {
		p.tree.classic(float64(max(p.cfg.DampeningFactor, 1)))
	} else {
		p.tree.fairTree()
	}
}
