// Package fairshare is the queue-level fairshare picker: within a queue,
// jobs are ordered by their user's dynamic priority, recomputed after each
// job the cycle would start, as LSF does (docs/fairshare.md).
//
// Dynamic priority (IBM Spectrum LSF, "Dynamic user priority", with the
// CPU-time term left out since xce does not measure CPU time):
//
//	priority = shares / ((historical + running) × RunTimeFactor + (1 + slots) × RunJobFactor)
//
// where slots is the job slots the user's running jobs hold in the queue,
// running is their slot-hours so far, and historical is the slot-hours of
// the user's finished jobs in the queue, decayed with a half-life.
//
// Shares may go to user groups (LSF's hierarchical fairshare): a group is
// an account whose usage is its members' together, and whose share its
// members divide, equally unless the group gives them shares of their
// own. The queue's jobs are ordered by walking this share tree from the
// top, at each level to the account of highest priority.
package fairshare

import (
	"math"

	"github.com/xce-sched/xce/cluster"
	"github.com/xce-sched/xce/framework"
)

// Name is the plugin's registry name.
const Name = "fairshare"

// LSF's defaults for the weighting factors (lsb.params RUN_TIME_FACTOR,
// RUN_JOB_FACTOR) and the decay: HIST_HOURS=5 makes an hour of usage weigh
// 0.1 hour after 5 hours, i.e. a half-life of 5 h × log10(2) ≈ 5418 s.
const (
	RunTimeFactor   = 0.7
	RunJobFactor    = 3.0
	DefaultHalfLife = 5 * 3600 * 0.30102999566398120 // seconds
)

// Plugin is the fairshare picker of one queue.
type Plugin struct {
	c        *cluster.Cluster
	queue    cluster.QueueID
	halfLife float64 // seconds

	root        *level   // the queue's shares
	groupLevels []*level // per user group, made on first use
	nodes       []node   // the share tree; 0 is the root
	leafOf      map[string]int32

	touched []int32 // Order's active nodes
}

// account is the usage charged to one node of the share tree in the
// queue: a user's jobs, or a group's members' together.
type account struct {
	slots    int     // slots of running jobs
	slotSecs float64 // Σ slots × start over running jobs, to get their slot-seconds at any time
	hist     float64 // decayed slot-hours of finished jobs, as of histAt
	histAt   int64
}

var (
	_ framework.Picker   = (*Plugin)(nil)
	_ framework.Observer = (*Plugin)(nil)
)

// New returns the fairshare picker of queue q of cluster c.
func New(c *cluster.Cluster, q cluster.QueueID) *Plugin {
	qq := &c.Queues[q]
	p := &Plugin{c: c, queue: q, halfLife: DefaultHalfLife, root: rootLevel(c, qq.Shares),
		groupLevels: make([]*level, len(c.UserGroups)), leafOf: map[string]int32{},
		nodes: []node{{parent: -1, group: -1, pos: -1}}}
	if qq.HalfLife > 0 {
		p.halfLife = float64(qq.HalfLife)
	}
	return p
}

// Name implements framework.Plugin.
func (*Plugin) Name() string { return Name }

// priority returns node n's dynamic priority at time now (seconds) with
// extra slots counted as if already running (the cycle's own picks).
func (p *Plugin) priority(n int32, now int64, extra int) float64 {
	nd := &p.nodes[n]
	a := &nd.acct
	running := (float64(a.slots)*float64(now) - a.slotSecs) / 3600
	hist := a.hist * math.Exp2(-float64(now-a.histAt)/p.halfLife)
	return nd.shares / ((hist+running)*RunTimeFactor + float64(1+a.slots+extra)*RunJobFactor)
}

// Priority returns user's dynamic priority at time now (seconds) with
// extra slots counted as if already running (the cycle's own picks): the
// priority of the user's own account, which competes with its siblings in
// the share tree (the queue's other users, or the other members of its
// group).
func (p *Plugin) Priority(user string, now int64, extra int) float64 {
	return p.priority(p.leaf(user), now, extra)
}

// GroupPriority returns the dynamic priority at time now of the account
// of user's path that belongs to user group group (false when the user's
// jobs are not charged through that group): its share among its siblings
// over the usage of all the jobs charged through it.
func (p *Plugin) GroupPriority(user, group string, now int64) (float64, bool) {
	g, ok := p.c.UserGroupByName(group)
	if !ok {
		return 0, false
	}
	for n := p.nodes[p.leaf(user)].parent; n > 0; n = p.nodes[n].parent {
		if p.nodes[n].group == g {
			return p.priority(n, now, 0), true
		}
	}
	return 0, false
}

// JobStarted implements framework.Observer: the job's slots are charged to
// its user's account and every group account above it.
func (p *Plugin) JobStarted(job *framework.Job, now int64) {
	if job.Spec.Queue != p.queue || job.Alloc == nil {
		return
	}
	n := job.Alloc.Slots()
	for a := p.leaf(job.Spec.User); a > 0; a = p.nodes[a].parent {
		acct := &p.nodes[a].acct
		acct.slots += n
		acct.slotSecs += float64(n) * float64(now)
	}
}

// JobFinished implements framework.Observer: the job's slot-hours move to
// the decayed history of its user's account and every group account above
// it.
func (p *Plugin) JobFinished(job *framework.Job, now int64) {
	if job.Spec.Queue != p.queue || job.Alloc == nil {
		return
	}
	n := job.Alloc.Slots()
	for a := p.leaf(job.Spec.User); a > 0; a = p.nodes[a].parent {
		acct := &p.nodes[a].acct
		acct.slots -= n
		acct.slotSecs -= float64(n) * float64(job.Start)
		acct.hist = acct.hist*math.Exp2(-float64(now-acct.histAt)/p.halfLife) + float64(n)*float64(now-job.Start)/3600
		acct.histAt = now
	}
}
