package runtime

import (
	"fmt"
	"slices"

	"github.com/xce-sched/xce/framework"
)

// ConsiderEveryJob makes every cycle of s consider every pending job, as
// before jobs were held behind a blocked head (behind.go): the oracle the
// tests compare with.
func ConsiderEveryJob(s *Scheduler) { s.considerAll = true }

// CheckRunningByEnd returns an error when s's running jobs by end
// (runningByEnd) are not exactly its running jobs, sorted by estimated end
// then ID.
func CheckRunningByEnd(s *Scheduler) error {
	var want []*framework.Job
	for _, j := range s.Jobs {
		if j.State == framework.Running {
			want = append(want, j)
		}
	}
	slices.SortFunc(want, byRunEnd)
	if !slices.Equal(s.runningByEnd(), want) {
		return fmt.Errorf("running jobs by end: %d jobs, want %d in (end, ID) order", len(s.runningByEnd()), len(want))
	}
	return nil
}
