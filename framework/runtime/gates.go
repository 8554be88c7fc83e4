package runtime

import (
	"cmp"
	"slices"

	"github.com/xce-sched/xce/cluster"
	"github.com/xce-sched/xce/framework"
)

// The scheduler's side of the gates (framework.Gate) and of the lookups
// they make (framework.Lookup).

// gate asks the gates about each job of the cycle's order and returns
// the jobs they admit, in order (s.order itself when no job is gated). A
// job held back has the gate's reason and no reservation; dropping a kept
// one lets the others move up (the cycle re-plans them, as after an end
// off its estimate).
//
// The precedence of docs/pending-reasons.md holds here: a gated job that
// can never run (BadRequest, rule 1) pends with that reason and goes no
// further, asking no gate; every other gated job asks every gate, and one
// held back pends with the gate's reason (rule 2) whatever the runner
// would have said of it. Only the jobs the gates admit reach the policies:
// a gate holds whatever the reason, so no analysis, right or wrong, can let
// a held job start.
//
// A counting gate (an array's cap) gives each job it admits a place for
// the pass. A job that could not run even on the idle open hosts (stuck:
// a limit's maximum, every matching host closed) would take a place it
// cannot use, so such jobs ask the gates last, after every other job of
// the cycle, and take only the places left over; one held back keeps the
// gate's reason, with Stuck set (it is set aside as stuck jobs are).
func (s *Scheduler) gate(now int64) []*framework.Job {
	s.gatesAsked = false
	if s.gated+s.requeuing == 0 || !slices.ContainsFunc(s.order, func(j *framework.Job) bool { return j.Gated || j.Requeuing }) {
		return s.order
	}
	s.gatesAsked = true
	for _, g := range s.gates {
		g.Begin(now)
	}
	verdict := grownVerdicts(&s.verdicts, len(s.order))
	last := false
	for i, j := range s.order {
		switch {
		case j.Requeuing:
			// Its previous run is still being killed (live preemption).
			j.Reasons = framework.PendReasons{Main: framework.Requeued, Detail: -1}
			j.Reserved = nil
			verdict[i] = gateHeld
		case !j.Gated:
			verdict[i] = gateAdmitted
		case s.runner.NeverFits(j) != "":
			s.hold(j, framework.PendReasons{Main: framework.BadRequest, Detail: -1, Note: s.runner.NeverFits(j), Stuck: true})
			verdict[i] = gateHeld
		case s.counted(j.Spec) && s.runner.isStuck(j):
			verdict[i], last = gateLast, true
		default:
			verdict[i] = s.admitOrHold(j)
		}
	}
	if last {
		for i, j := range s.order {
			if verdict[i] == gateLast {
				if verdict[i] = s.admitOrHold(j); verdict[i] == gateHeld {
					// Held by a gate, it is still stuck: set aside as such.
					j.Reasons.Stuck = true
				}
			}
		}
	}
	s.admitted = s.admitted[:0]
	for i, j := range s.order {
		if verdict[i] == gateAdmitted {
			s.admitted = append(s.admitted, j)
		}
	}
	return s.admitted
}

// gateVerdict is what the gates' pass decided of one job of the order.
type gateVerdict uint8

const (
	gateAdmitted gateVerdict = iota
	gateHeld
	gateLast // stuck under a counting gate: asks the gates after the others
)

// grownVerdicts returns *v resized to n, reusing its array.
func grownVerdicts(v *[]gateVerdict, n int) []gateVerdict {
	if cap(*v) < n {
		*v = make([]gateVerdict, n)
	}
	*v = (*v)[:n]
	return *v
}

// admitOrHold asks the gates about job: admitted, or held with the reason
// of the first gate that holds it back.
func (s *Scheduler) admitOrHold(job *framework.Job) gateVerdict {
	if ok, why := s.admitOne(job); !ok {
		s.hold(job, why)
		return gateHeld
	}
	return gateAdmitted
}

// hold gives job, kept out of the cycle's policies, the reasons why and
// drops its reservation.
func (s *Scheduler) hold(job *framework.Job, why framework.PendReasons) {
	job.Reasons = why
	if job.Reserved != nil {
		job.Reserved = nil
		s.offPlan = true
	}
}

// counted reports whether a gate counts the admission of the job spec
// describes (framework.Counting).
func (s *Scheduler) counted(spec *cluster.Job) bool {
	for _, g := range s.gates {
		if c, ok := g.(framework.Counting); ok && c.Counts(spec) {
			return true
		}
	}
	return false
}

// admitOne asks every gate about job, in order; the first that holds it
// back answers.
func (s *Scheduler) admitOne(job *framework.Job) (bool, framework.PendReasons) {
	for _, g := range s.gates {
		if ok, why := g.Admit(job); !ok {
			return false, why
		}
	}
	return true, framework.PendReasons{}
}

// nameKey is a job name of one user.
type nameKey struct{ user, name string }

// JobByID implements framework.Lookup.
func (s *Scheduler) JobByID(id cluster.JobID) *framework.Job {
	for ; !s.unsorted && s.idsChecked < len(s.Jobs); s.idsChecked++ {
		if k := s.idsChecked; k > 0 && s.Jobs[k].Spec.ID <= s.Jobs[k-1].Spec.ID {
			s.unsorted = true
			s.byID = make(map[cluster.JobID]*framework.Job, len(s.Jobs))
			for _, j := range s.Jobs {
				s.byID[j.Spec.ID] = j
			}
		}
	}
	if s.unsorted {
		return s.byID[id]
	}
	if n := len(s.Jobs); n > 0 {
		// IDs are most often dense: the job is where its ID says.
		if k := id - s.Jobs[0].Spec.ID; k >= 0 && k < cluster.JobID(n) && s.Jobs[k].Spec.ID == id {
			return s.Jobs[k]
		}
	}
	if i, ok := slices.BinarySearchFunc(s.Jobs, id, func(j *framework.Job, id cluster.JobID) int { return cmp.Compare(j.Spec.ID, id) }); ok {
		return s.Jobs[i]
	}
	return nil
}

// JobsByName implements framework.Lookup.
func (s *Scheduler) JobsByName(user, name string) []*framework.Job {
	if s.byName == nil {
		s.byName = map[nameKey][]*framework.Job{}
		for _, j := range s.Jobs {
			s.addName(j)
		}
	}
	return s.byName[nameKey{user, name}]
}

// index adds job, about to join Jobs, to the Lookup indexes built so far.
func (s *Scheduler) index(job *framework.Job) {
	if s.byID != nil {
		s.byID[job.Spec.ID] = job
	}
	if s.byName != nil {
		s.addName(job)
	}
}

func (s *Scheduler) addName(job *framework.Job) {
	if job.Spec.Name != "" {
		k := nameKey{job.Spec.User, job.Spec.Name}
		s.byName[k] = append(s.byName[k], job)
	}
}

// SetRequeuing sets job's Requeuing flag (framework.Job.Requeuing): the
// live scheduler's previous run of the requeued job is still being
// killed (on), or is gone (off).
func (s *Scheduler) SetRequeuing(job *framework.Job, on bool) {
	if job.Requeuing == on {
		return
	}
	job.Requeuing = on
	if on {
		s.requeuing++
	} else {
		s.requeuing--
	}
}
