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
func (s *Scheduler) gate(now int64) []*framework.Job {
	s.gatesAsked = false
	if s.gated+s.requeuing == 0 || !slices.ContainsFunc(s.order, func(j *framework.Job) bool { return j.Gated || j.Requeuing }) {
		return s.order
	}
	s.gatesAsked = true
	for _, g := range s.gates {
		g.Begin(now)
	}
	s.admitted = s.admitted[:0]
	for _, j := range s.order {
		if j.Requeuing {
			// Its previous run is still being killed (live preemption).
			j.Reasons = framework.PendReasons{Main: framework.Requeued, Detail: -1}
			j.Reserved = nil
			continue
		}
		// A job that can never run (BadRequest, or over a limit's maximum)
		// goes on to pend with that reason: it takes no place under an
		// array's cap, nor waits on a dependency first.
		if j.Gated {
			// A job that can never run bypasses the gates; the check
			// comes first where admitting would take a counted place.
			counted := s.counted(j.Spec)
			if counted && s.cannotRun(j) {
				s.admitted = append(s.admitted, j)
				continue
			}
			if ok, why := s.admitOne(j); !ok && (counted || !s.cannotRun(j)) {
				j.Reasons = why
				if j.Reserved != nil {
					j.Reserved = nil
					s.offPlan = true
				}
				continue
			}
		}
		s.admitted = append(s.admitted, j)
	}
	return s.admitted
}

// cannotRun reports whether job can never run (BadRequest), or not even
// under its limits' maxima (stuck).
func (s *Scheduler) cannotRun(job *framework.Job) bool {
	return s.runner.NeverFits(job) != "" || s.runner.isStuck(job)
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
