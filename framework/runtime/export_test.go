package runtime

import (
	"fmt"
	"slices"

	"github.com/xce-sched/xce/framework"
)

// ConsiderEveryJob makes every cycle of s consider every pending job, as
// before jobs were held behind a blocked head (behind.go), and re-plan
// every kept reservation, as before they could stand (standing.go): the
// oracle the tests compare with.
func ConsiderEveryJob(s *Scheduler) { s.considerAll = true }

// CheckRunningByEnd returns an error when s's running jobs by end
// (runningByEnd) are not exactly its running jobs, sorted by estimated end
// then ID, each with its estimated end, ID, allocation and slots as they
// are now, when its running list (Running) does not hold each of them
// once, or when what the list by end tells at a glance (a job past its
// estimated end at now) is not what the jobs say.
func CheckRunningByEnd(s *Scheduler, now int64) error {
	overrun := false
	for _, j := range s.Jobs {
		if j.State == framework.Running {
			overrun = overrun || runEnd(j) <= now
		}
	}
	if got := s.overrun(now); got != overrun {
		return fmt.Errorf("overrun(%d) = %v, want %v", now, got, overrun)
	}
	var want []runningEnd
	for _, j := range s.Jobs {
		if j.State == framework.Running {
			want = append(want, runningEnd{at: runEnd(j), id: j.Spec.ID, slots: j.Alloc.Slots(), job: j, alloc: j.Alloc})
		}
	}
	slices.SortFunc(want, byRunEnd)
	if !slices.Equal(s.runningByEnd(), want) {
		return fmt.Errorf("running jobs by end: %d jobs, want %d in (end, ID) order, each as it is now", len(s.runningByEnd()), len(want))
	}
	// The running list (Running) holds the same jobs, each once.
	seen := map[*framework.Job]bool{}
	for _, j := range s.Running() {
		if seen[j] || j.State != framework.Running {
			return fmt.Errorf("running jobs: job %d listed twice, or not running (%v)", j.Spec.ID, j.State)
		}
		seen[j] = true
	}
	if len(seen) != len(want) {
		return fmt.Errorf("running jobs: %d listed, want %d", len(seen), len(want))
	}
	return nil
}

// TryInFull makes s's runner try every job in full: no job is found too
// large for the free slots before its plans are asked for (tooFewSlots).
func TryInFull(s *Scheduler) { s.runner.inFull = true }
