package runtime

import (
	"strconv"

	"github.com/xce-sched/xce/framework"
)

// ReasonDetail renders the detail of reason r for job output: the name of
// the resource, shared resource or limit it refers to, or "" when it has
// none.
func (s *Scheduler) ReasonDetail(r framework.Reason, detail int32) string {
	c := s.Cluster
	if detail < 0 {
		return ""
	}
	switch framework.DetailOf(r) {
	case framework.DetailResource:
		if int(detail) < len(c.Resources) {
			return c.Resources[detail]
		}
	case framework.DetailShared:
		if int(detail) < len(c.Shared) {
			return c.Shared[detail].Name
		}
	case framework.DetailLimit:
		if int(detail) < len(c.Limits) {
			return c.Limits[detail].Name
		}
	}
	return strconv.Itoa(int(detail))
}

// MainDetail renders what a pending job's main reason names: the
// resource, shared resource or limit (ReasonDetail), for a dependency the
// condition not met, and for a job deferred beyond its queue's
// max_job_test (Priority) why it is not planned (PendReasons.Note).
func (s *Scheduler) MainDetail(pr *framework.PendReasons) string {
	switch pr.Main {
	case framework.Dependency, framework.DependencyNeverSatisfied:
		return pr.Note
	case framework.Priority:
		if pr.Note != "" {
			return pr.Note
		}
	}
	return s.ReasonDetail(pr.Main, pr.Detail)
}
