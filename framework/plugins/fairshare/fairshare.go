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
package fairshare

import (
	"cmp"
	"container/heap"
	"math"
	"slices"

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
	queue    cluster.QueueID
	shares   map[string]int
	deflt    int
	halfLife float64 // seconds
	users    map[string]*account
}

// account is one user's usage in the queue.
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
	p := &Plugin{queue: q, shares: map[string]int{}, deflt: 1, halfLife: DefaultHalfLife, users: map[string]*account{}}
	for _, us := range qq.Shares {
		if us.User == "default" {
			p.deflt = us.Shares
		} else {
			p.shares[us.User] = us.Shares
		}
	}
	if qq.HalfLife > 0 {
		p.halfLife = float64(qq.HalfLife)
	}
	return p
}

// Name implements framework.Plugin.
func (*Plugin) Name() string { return Name }

func (p *Plugin) account(user string) *account {
	a, ok := p.users[user]
	if !ok {
		a = &account{}
		p.users[user] = a
	}
	return a
}

func (p *Plugin) share(user string) int {
	if s, ok := p.shares[user]; ok {
		return s
	}
	return p.deflt
}

// Priority returns user's dynamic priority at time now (seconds) with
// extra slots counted as if already running (the cycle's own picks).
func (p *Plugin) Priority(user string, now int64, extra int) float64 {
	a := p.account(user)
	running := (float64(a.slots)*float64(now) - a.slotSecs) / 3600
	hist := a.hist * math.Exp2(-float64(now-a.histAt)/p.halfLife)
	return float64(p.share(user)) / ((hist+running)*RunTimeFactor + float64(1+a.slots+extra)*RunJobFactor)
}

// JobStarted implements framework.Observer.
func (p *Plugin) JobStarted(job *framework.Job, now int64) {
	if job.Spec.Queue != p.queue || job.Alloc == nil {
		return
	}
	a := p.account(job.Spec.User)
	n := job.Alloc.Slots()
	a.slots += n
	a.slotSecs += float64(n) * float64(now)
}

// JobFinished implements framework.Observer: the job's slot-hours move to
// the user's decayed history.
func (p *Plugin) JobFinished(job *framework.Job, now int64) {
	if job.Spec.Queue != p.queue || job.Alloc == nil {
		return
	}
	a := p.account(job.Spec.User)
	n := job.Alloc.Slots()
	a.slots -= n
	a.slotSecs -= float64(n) * float64(job.Start)
	a.hist = a.hist*math.Exp2(-float64(now-a.histAt)/p.halfLife) + float64(n)*float64(now-job.Start)/3600
	a.histAt = now
}

// Order implements framework.Picker: repeatedly the pending job (earliest
// submit, then ID) of the user with the highest dynamic priority, counting
// the slots (minimum task count) of the jobs picked before it as running.
// Ties between users go to the one whose next job was submitted first.
func (p *Plugin) Order(now int64, jobs []*framework.Job) {
	slices.SortStableFunc(jobs, func(a, b *framework.Job) int {
		return cmp.Or(cmp.Compare(a.Spec.Submit, b.Spec.Submit), cmp.Compare(a.Spec.ID, b.Spec.ID))
	})
	byUser := map[string][]*framework.Job{}
	var q userHeap
	for _, j := range jobs {
		u := j.Spec.User
		if _, ok := byUser[u]; !ok {
			q = append(q, &userState{user: u})
		}
		byUser[u] = append(byUser[u], j)
	}
	for _, us := range q {
		us.next = byUser[us.user][0]
		us.prio = p.Priority(us.user, now, 0)
	}
	heap.Init(&q)
	out := jobs[:0:0]
	for q.Len() > 0 {
		us := q[0]
		out = append(out, us.next)
		us.picked++
		us.extra += us.next.Spec.TasksMin
		rest := byUser[us.user][us.picked:]
		if len(rest) == 0 {
			heap.Pop(&q)
			continue
		}
		us.next = rest[0]
		us.prio = p.Priority(us.user, now, us.extra)
		heap.Fix(&q, 0)
	}
	copy(jobs, out)
}

type userState struct {
	user   string
	next   *framework.Job
	picked int
	extra  int
	prio   float64
}

type userHeap []*userState

func (h userHeap) Len() int { return len(h) }
func (h userHeap) Less(i, j int) bool {
	if h[i].prio != h[j].prio {
		return h[i].prio > h[j].prio
	}
	a, b := h[i].next.Spec, h[j].next.Spec
	return cmp.Or(cmp.Compare(a.Submit, b.Submit), cmp.Compare(a.ID, b.ID)) < 0
}
func (h userHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *userHeap) Push(x any)   { *h = append(*h, x.(*userState)) }
func (h *userHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
