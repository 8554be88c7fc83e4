package runtime_test

import (
	"testing"

	"github.com/xce-sched/xce/cluster"
	"github.com/xce-sched/xce/framework"
	"github.com/xce-sched/xce/framework/plugins"
	"github.com/xce-sched/xce/framework/runtime"
	ct "github.com/xce-sched/xce/internal/clustertest"
)

// TestArrayLimit, worked by hand on one host of 4 slots under each
// policy: array 1 has five single-slot elements (jobs 1-5, 10 s each) and
// a cap of 2; job 6 (one slot) comes after it. At 0 the gate admits
// elements 1 and 2 and holds 3-5 back with ArrayLimit, without a
// reservation; job 6 starts even under strict FCFS (a held element blocks
// nothing). At 10, when 1, 2 and 6 end, elements 3 and 4 start; at 20,
// element 5.
func TestArrayLimit(t *testing.T) {
	for _, policy := range []cluster.Policy{cluster.PolicyFCFS, cluster.PolicyFirstFit, cluster.PolicyEASY, cluster.PolicyConservative} {
		t.Run(string(policy), func(t *testing.T) {
			spec := ct.Spec{Hosts: []ct.Host{{Name: "h", Slots: 4, Mem: -1}},
				Queues: []cluster.Queue{{Name: "normal", Policy: policy, Picker: "priority"}}}
			for i := 1; i <= 5; i++ {
				spec.Jobs = append(spec.Jobs, ct.Job{ID: cluster.JobID(i), Min: 1, Runtime: 10, Estimate: 10, Array: 1, Index: int64(i), ArrayLimit: 2})
			}
			spec.Jobs = append(spec.Jobs, ct.Job{ID: 6, Min: 1, Runtime: 10, Estimate: 10})
			c := ct.Build(spec)
			s, err := runtime.New(c, runtime.Options{Registry: plugins.NewInTreeRegistry()})
			if err != nil {
				t.Fatal(err)
			}
			check := func(at int64, want []string) {
				t.Helper()
				for i, w := range want {
					if got := state(c, s.Jobs[i]); got != w {
						t.Errorf("t=%d job %d: %s, want %s", at, i+1, got, w)
					}
				}
			}
			held := "PEND ArrayLimit"
			cycle(t, s, 0)
			check(0, []string{"RUN@0 h*1", "RUN@0 h*1", held, held, held, "RUN@0 h*1"})
			for _, i := range []int{0, 1, 5} {
				s.Finish(s.Jobs[i], 10)
			}
			cycle(t, s, 10)
			check(10, []string{"DONE@0-10", "DONE@0-10", "RUN@10 h*1", "RUN@10 h*1", held, "DONE@0-10"})
			s.Finish(s.Jobs[2], 20)
			s.Finish(s.Jobs[3], 20)
			cycle(t, s, 20)
			check(20, []string{"DONE@0-10", "DONE@0-10", "DONE@10-20", "DONE@10-20", "RUN@20 h*1", "DONE@0-10"})
			if s.Jobs[4].State != framework.Running {
				t.Errorf("element 5: %v", s.Jobs[4].State)
			}
		})
	}
}
