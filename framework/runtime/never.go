package runtime

import (
	"fmt"
	"math"

	"github.com/xce-sched/xce/cluster"
	"github.com/xce-sched/xce/framework"
	"github.com/xce-sched/xce/resreq"
)

// The idle-cluster analysis: could a job run at all, with nothing running?
// Without limits, per request, queue and task count (BadRequest when no
// alternative could: neverFits); with the maxima of the limits that apply
// to the job, per class (LimitReached naming the limit, and
// PendReasons.Stuck: limitVerdict). The limits' maxima come from the
// preparers that are framework.Bounders, read in the idle state, where
// every limit counter is unused: what they bound there is what sizing
// bounds and the runner's check refuses with nothing used, whatever the
// limits hold now (a limit may have been lowered below it).

// neverFits returns why no alternative of job could run even on an empty
// cluster (every host of the queue open and idle), or "" when one could. An
// alternative whose select[] no host matches is left to NoHostMatch: it
// returns "" when that is the only obstacle. Limits are not looked at.
func (r *Runner) neverFits(job *framework.Job) string {
	c := &r.static[r.classID(job)-1]
	if c.hasNever {
		return c.never
	}
	key := staticKey{job.Req, job.Spec.Queue, job.Spec.TasksMin, job.Spec.TasksMax}
	why, ok := r.never[key]
	if !ok {
		why = r.neverFitsUncached(job)
		r.never[key] = why
	}
	c.never, c.hasNever = why, true
	return why
}

// classStatic is what the idle-cluster analysis found for one class
// (Job.RunnerClass), kept by class so that a job whose class is known
// finds it by index: its neverFits, and its limitVerdict (kept only when
// the runner is classified; forgotten when a host's status changes).
type classStatic struct {
	never                string
	verdict              limitVerdict
	hasNever, hasVerdict bool
}

// staticKey identifies what neverFits depends on: the request, the queue
// and the task count (the idle cluster does not change).
type staticKey struct {
	req      *framework.Request
	queue    cluster.QueueID
	min, max int
}

func (r *Runner) neverFitsUncached(job *framework.Job) string {
	why := ""
	for ai := range job.Req.Alts {
		altWhy, noMatch, _ := r.altNeverFits(job, &job.Req.Alts[ai], false, false)
		if altWhy == "" && !noMatch {
			return ""
		}
		if why == "" {
			why = altWhy
		}
	}
	return why
}

// NeverFits returns why job can never run on this cluster (its BadRequest
// note), or "".
func (r *Runner) NeverFits(job *framework.Job) string {
	if job.Req == nil {
		if job.ReqErr != nil {
			return job.ReqErr.Error()
		}
		return "no request"
	}
	return r.neverFits(job)
}

// limitVerdict is what the maxima of the limits that apply to a job decide
// on the idle cluster.
type limitVerdict struct {
	// never is LimitReached and a limit when no alternative could run on
	// the idle cluster with every host of the queue open, under those
	// maxima, and some could without them (reason None otherwise): the
	// limit that rules out the first such alternative.
	never reasonKey
	// stuck: no alternative could run on the queue's open hosts, idle,
	// under those maxima (PendReasons.Stuck; always so with never).
	stuck bool
}

// isStuck reports whether job could not run even with every open host
// idle and none of its limits used (PendReasons.Stuck).
func (r *Runner) isStuck(job *framework.Job) bool { return r.limitVerdict(job).stuck }

// limitVerdict returns job's limitVerdict, cached per class (the limit
// instances that apply are part of it). An alternative is ruled out by the
// limits when, in the idle state, a JobPreparer's job-level pass refuses
// its smallest placement, or its shape does not fit the hosts' capacities
// bounded by the Bounders (altNeverFits, bounded).
func (r *Runner) limitVerdict(job *framework.Job) limitVerdict {
	c := &r.static[r.classID(job)-1]
	if c.hasVerdict {
		return c.verdict
	}
	open := r.idleFits(job, true)
	v := limitVerdict{stuck: true}
	if r.idleSlack(job) {
		// The limits have room for all of the job with nothing used: they
		// bound nothing it needs.
		for ai := range open {
			v.stuck = v.stuck && !open[ai]
		}
	} else {
		all := r.idleFits(job, false)
		idle := framework.View{Cluster: r.view.Cluster, State: r.empty}
		never := true
		for ai := range job.Req.Alts {
			alt := &job.Req.Alts[ai]
			if !all[ai] && !open[ai] {
				continue
			}
			veto := reasonKey{detail: -1}
			tasks, _ := alt.TaskRange(job.Spec)
			for _, p := range r.jobPreparers {
				if reason, detail := p.PrepareJob(job, alt, tasks, &idle); reason != framework.None {
					veto = reasonKey{reason, detail}
					break
				}
			}
			if all[ai] {
				lim := veto
				if lim.reason == framework.None {
					lim = r.boundedNeverFits(job, alt, false)
				}
				if lim.reason == framework.None {
					never = false
				} else if v.never.reason == framework.None {
					v.never = lim
				}
			}
			if open[ai] && v.stuck && veto.reason == framework.None && r.boundedNeverFits(job, alt, true).reason == framework.None {
				v.stuck = false
			}
		}
		if !never {
			v.never = reasonKey{}
		}
		v.stuck = v.stuck || v.never.reason != framework.None
	}
	if r.classified {
		c.verdict, c.hasVerdict = v, true
	}
	return v
}

// idleSlack reports whether every preparer is a Slacker that is slack for
// job in the idle state: the limits' maxima then leave room for its
// largest placement on any host, and bound nothing it needs.
func (r *Runner) idleSlack(job *framework.Job) bool {
	if !r.allSlack {
		return false
	}
	idle := framework.View{Cluster: r.view.Cluster, State: r.empty}
	for _, sl := range r.slackers {
		if !sl.Slack(job, &idle) {
			return false
		}
	}
	return true
}

// boundedNeverFits returns LimitReached and the limit when alt could not
// run on the idle cluster (only its open hosts when openOnly) under the
// Bounders' bounds, else reason None. The caller has checked that alt
// could without them.
func (r *Runner) boundedNeverFits(job *framework.Job, alt *framework.Alternative, openOnly bool) reasonKey {
	if len(r.view.Bounders) == 0 {
		return reasonKey{detail: -1}
	}
	if why, _, by := r.altNeverFits(job, alt, openOnly, true); why != "" {
		return reasonKey{framework.LimitReached, by}
	}
	return reasonKey{detail: -1}
}

// idleKey names an idleFits result.
type idleKey struct {
	static   staticKey
	openOnly bool
}

// idleFits returns, per alternative of job, whether it could run on the
// queue's hosts (only its open ones when openOnly) with nothing running,
// limits aside; cached, as neverFits, per request, queue and task count.
func (r *Runner) idleFits(job *framework.Job, openOnly bool) []bool {
	key := idleKey{staticKey{job.Req, job.Spec.Queue, job.Spec.TasksMin, job.Spec.TasksMax}, openOnly}
	if fits, ok := r.idleFit[key]; ok {
		return fits
	}
	fits := make([]bool, len(job.Req.Alts))
	for ai := range job.Req.Alts {
		why, noMatch, _ := r.altNeverFits(job, &job.Req.Alts[ai], openOnly, false)
		fits[ai] = why == "" && !noMatch
	}
	r.idleFit[key] = fits
	return fits
}

// altNeverFits checks one alternative against the idle cluster (only its
// open hosts when openOnly): shared
// totals; per term, the matching hosts' capacity (slots bounded by per-slot
// rusage) in all, on one host for span[hosts=1], and in hosts of ptile
// tasks for span[ptile=N]; and enough distinct hosts for all terms (the
// hosts of a plan are distinct). noMatch is set when a term matches no host.
// A host matches when the static part of the term's select[] holds on it
// (framework.Term.Static): a condition on free slots or a free consumable
// may hold on a busy host that it fails on an idle one (select[slots < 2]),
// so it never makes a request "never".
//
// When bounded, each host's capacity is also bounded by the Bounders'
// HostBound and each term's tasks by their JobBound total, in the idle
// state (the limits' maxima), as sizing bounds them; by is then the limit
// that rules the alternative out: the one bounding the total when the
// total is what fails, else the one that bounds the most matching hosts
// below their capacity (ties: the lower limit number).
func (r *Runner) altNeverFits(job *framework.Job, alt *framework.Alternative, openOnly, bounded bool) (why string, noMatch bool, by int32) {
	c := r.view.Cluster
	empty := framework.View{Cluster: c, State: r.empty}
	if bounded {
		empty.Bounders = r.view.Bounders
	}
	q := job.Spec.Queue
	for _, sh := range alt.Shared {
		if total := c.Shared[sh.Shared].Total; !cluster.Within(sh.Amount, total) {
			return fmt.Sprintf("needs %v of shared resource %s, the cluster has %v", sh.Amount, c.Shared[sh.Shared].Name, total), false, -1
		}
	}
	minHosts := 0
	// joint: the terms' capacities, host by host, for the check of the
	// terms together (jointNeverFits); limits aside.
	joint := len(alt.Terms) > 1 && !bounded
	if joint {
		r.diag.joint.reset(len(alt.Terms), len(c.Hosts))
	}
	for ti := range alt.Terms {
		t := &alt.Terms[ti]
		need := t.Tasks
		if need == 0 {
			need = job.Spec.TasksMin
		}
		termHosts := minHosts
		total, largest, matching, slots := 0, 0, 0, 0
		caps := r.diag.caps[:0]
		r.diag.limits = r.diag.limits[:0]
		for h := range c.Hosts {
			id := cluster.HostID(h)
			vals := r.empty.HostVals(id)
			if !c.QueueHasHost(q, id) || !t.Static.Match(vals) || !t.SameDefined(vals) || openOnly && r.hostState[id] != framework.None {
				continue
			}
			matching++
			// A host class's members are bounded one by one.
			each, hosts := empty.MemberCapacity(id, empty.Capacity(id, t))
			slots += c.Hosts[h].Slots
			lowered, hostBy := false, int32(-1)
			for _, b := range empty.Bounders {
				if hb, hby := b.HostBound(job, alt, t, id, &empty); hb < each {
					each, lowered, hostBy = max(hb, 0), true, hby
				}
			}
			if lowered {
				r.diag.limits = addHostReason(r.diag.limits, reasonKey{framework.HostLimit, hostBy}, hosts)
			}
			total += each * hosts
			largest = max(largest, each)
			caps = append(caps, capRun{each, hosts})
			if joint {
				r.diag.joint.set(ti, h, each, hosts)
			}
		}
		r.diag.caps = caps
		if matching == 0 {
			noMatch = true
			continue
		}
		jobTotal, totalBy := math.MaxInt, int32(-1)
		for _, b := range empty.Bounders {
			if tot, _, tby := b.JobBound(job, alt, t, &empty); tot < jobTotal {
				jobTotal, totalBy = tot, tby
			}
		}
		if need > jobTotal {
			return fmt.Sprintf("needs %s, the limits let it place %d", plural(need, "task"), jobTotal), false, totalBy
		}
		by = r.mostBounding()
		bound := ""
		switch {
		case len(r.diag.limits) > 0:
			bound = " (the limits bound them below their slots)"
		case total < slots:
			bound = " (per-slot rusage[] bounds them below their slots)"
		}
		switch t.Span.Kind {
		case resreq.SpanHostsOne:
			minHosts++
			if need > largest {
				return fmt.Sprintf("span[hosts=1] needs %d tasks on one host, the largest matching host takes %d%s", need, largest, bound), false, by
			}
		case resreq.SpanPtile:
			p := t.Span.Ptile
			fullNeed, rem := need/p, need%p
			full, other := 0, 0
			for _, c := range caps {
				if c.each >= p {
					full += c.hosts
				} else if rem > 0 && c.each >= rem {
					other += c.hosts
				}
			}
			minHosts += fullNeed
			if rem > 0 {
				minHosts++
			}
			if full < fullNeed || rem > 0 && full+other < fullNeed+1 {
				return fmt.Sprintf("span[ptile=%d] needs %s that take %d tasks each%s; the matching hosts that can: %d", p, plural(fullNeed, "host"), p, remText(rem), full), false, by
			}
		default:
			minHosts += (need + max(largest, 1) - 1) / max(largest, 1)
		}
		if joint {
			r.diag.joint.need[ti], r.diag.joint.hostsNeed[ti] = need, minHosts-termHosts
		}
		if need > total {
			if total == 0 {
				if why := r.perHostTooBig(job, t, openOnly); why != "" {
					return why, false, -1
				}
			}
			return fmt.Sprintf("needs %s, the matching hosts take %d in all%s", plural(need, "task"), total, bound), false, by
		}
		if len(t.PerJob) > 0 && !r.firstHostFits(job, t, openOnly, &empty) {
			return "no matching host has room for the per-job rusage[] with one task", false, -1
		}
	}
	if nh := empty.NumHosts(q); len(alt.Terms) > 1 && minHosts > nh && !openOnly {
		return fmt.Sprintf("the compound terms need %d distinct hosts, the queue has %d", minHosts, nh), false, -1
	}
	if joint && !noMatch {
		if why := r.diag.joint.neverFits(); why != "" {
			return why, false, -1
		}
	}
	return "", noMatch, -1
}

// perHostTooBig returns why term t of job fits no matching host when a
// per-host rusage[] amount is more than any matching host has (such as
// more GPUs than any host's ngpus_physical), else "".
func (r *Runner) perHostTooBig(job *framework.Job, t *framework.Term, openOnly bool) string {
	c := r.view.Cluster
	for _, ra := range t.PerHost {
		most := math.Inf(-1)
		for h := range c.Hosts {
			id := cluster.HostID(h)
			vals := r.empty.HostVals(id)
			if !c.QueueHasHost(job.Spec.Queue, id) || !t.Static.Match(vals) || !t.SameDefined(vals) || openOnly && r.hostState[id] != framework.None {
				continue
			}
			if v := c.Hosts[h].Capacity[ra.Res]; v == v {
				most = max(most, v)
			}
		}
		if !cluster.Within(ra.Amount, most) {
			name := c.Resources[ra.Res]
			if math.IsInf(most, -1) {
				return fmt.Sprintf("rusage[%s=%v] is reserved on each of its hosts, and no matching host has %s", name, ra.Amount, name)
			}
			return fmt.Sprintf("rusage[%s=%v] is reserved on each of its hosts, and no matching host has that much (the most is %v)", name, ra.Amount, most)
		}
	}
	return ""
}

// firstHostFits reports whether some host that matches term t of job's
// queue could, empty, be the term's first host: take one task and the
// term's per-job rusage with it.
func (r *Runner) firstHostFits(job *framework.Job, t *framework.Term, openOnly bool, empty *framework.View) bool {
	c := empty.Cluster
	for h := range c.Hosts {
		id := cluster.HostID(h)
		vals := r.empty.HostVals(id)
		if !c.QueueHasHost(job.Spec.Queue, id) || !t.Static.Match(vals) || !t.SameDefined(vals) || openOnly && r.hostState[id] != framework.None {
			continue
		}
		if empty.Capacity(id, t) < 1 {
			continue
		}
		fits := true
		for _, ru := range t.PerJob {
			fits = fits && cluster.Within(t.HostAmount(ru.Res, 1, true), r.empty.Free(id, ru.Res))
		}
		if fits {
			return true
		}
	}
	return false
}

// mostBounding returns the limit that altNeverFits counted as bounding the
// most hosts of the term below their capacity (ties: the lower number),
// -1 when none did.
func (r *Runner) mostBounding() int32 {
	by, most := int32(-1), 0
	for _, hc := range r.diag.limits {
		if hc.Hosts > most || hc.Hosts == most && hc.Detail < by {
			by, most = hc.Detail, hc.Hosts
		}
	}
	return by
}

// capRun is the capacity of hosts hosts that take each tasks each (a
// host class's members, or one host).
type capRun struct{ each, hosts int }

func remText(rem int) string {
	if rem == 0 {
		return ""
	}
	return fmt.Sprintf(" and one more that takes %d", rem)
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}
