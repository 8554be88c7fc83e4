package runtime_test

import (
	"context"
	"testing"

	"github.com/xce-sched/xce/cluster"
	"github.com/xce-sched/xce/framework"
	"github.com/xce-sched/xce/framework/plugins"
	"github.com/xce-sched/xce/framework/runtime"
	ct "github.com/xce-sched/xce/internal/clustertest"
)

// TestRunningByEndGlance: the list of running jobs by estimated end tells
// whether one never ends (no runtime estimate) and whether one is past
// its estimated end, as the jobs themselves do (CheckRunningByEnd), while
// such jobs start and end.
func TestRunningByEndGlance(t *testing.T) {
	spec := ct.Spec{Hosts: []ct.Host{{Name: "h", Slots: 4, Mem: -1}},
		Jobs: []ct.Job{{ID: 1, Min: 1, Runtime: 5, Estimate: 5}, {ID: 2, Min: 1, Submit: 1}, {ID: 3, Min: 1, Submit: 2, Runtime: 50, Estimate: 20}}}
	s, err := runtime.New(ct.Build(spec), runtime.Options{Registry: plugins.NewInTreeRegistry()})
	if err != nil {
		t.Fatal(err)
	}
	for now := int64(0); now <= 40; now++ {
		if _, err := s.Cycle(context.Background(), now); err != nil {
			t.Fatal(err)
		}
		for _, end := range []struct {
			id cluster.JobID
			at int64
		}{{1, 5}, {2, 30}, {3, 40}} {
			if j := s.Jobs[end.id-1]; j.State == framework.Running && now == end.at {
				s.Finish(j, now)
			}
		}
		for _, at := range []int64{now, now + 1} {
			if err := runtime.CheckRunningByEnd(s, at); err != nil {
				t.Fatalf("t=%d: %v", now, err)
			}
		}
	}
}
