package runtime_test

import (
	"testing"

	"github.com/xce-sched/xce/cluster"
	ct "github.com/xce-sched/xce/internal/clustertest"
)

// TestDependency, worked by hand on one host of 2 slots under each
// policy, every job one slot (runtimes, estimates exact):
//   - job 1 (10 s) and job 4 "bad" (2 s, exit code 3) start at 0; jobs
//     2 done(1), 3 started(1), 5 exit("bad", 3) and 6 done(4) are held
//     (a held job blocks nothing, even under FCFS).
//   - at 1 (a cycle a second after starts, for started()): job 3 is
//     admitted but both slots are taken.
//   - at 2 job 4 ends EXIT 3: job 5's condition holds, job 6's never
//     will (DependencyNeverSatisfied, pending for good). Job 3 starts
//     (2-7); job 5 waits for a slot and starts at 7 (7-12).
//   - at 10 job 1 ends DONE: job 2 starts (10-15).
func TestDependency(t *testing.T) {
	for _, policy := range []cluster.Policy{cluster.PolicyFCFS, cluster.PolicyFirstFit, cluster.PolicyEASY, cluster.PolicyConservative} {
		t.Run(string(policy), func(t *testing.T) {
			spec := ct.Spec{Hosts: []ct.Host{{Name: "h", Slots: 2, Mem: -1}}, Jobs: []ct.Job{
				{ID: 1, Runtime: 10, Estimate: 10},
				{ID: 2, Runtime: 5, Estimate: 5, Depend: "done(1)"},
				{ID: 3, Runtime: 5, Estimate: 5, Depend: "started(1)"},
				{ID: 4, Runtime: 2, Estimate: 2, Name: "bad", ExitCode: 3},
				{ID: 5, Runtime: 5, Estimate: 5, Depend: `exit("bad", 3)`},
				{ID: 6, Runtime: 5, Estimate: 5, Depend: "done(4)"},
			}}
			c, s := runPolicy(t, spec, policy, 100)
			for i, want := range []string{"DONE@0-10", "DONE@10-15", "DONE@2-7", "DONE@0-2", "DONE@7-12", "PEND DependencyNeverSatisfied"} {
				if got := state(c, s.Jobs[i]); got != want {
					t.Errorf("job %d: %s, want %s", i+1, got, want)
				}
			}
			if r := s.Jobs[5].Reasons; r.Note != "done(4)" {
				t.Errorf("job 6's unmet condition %q, want done(4)", r.Note)
			}
			if j := s.Jobs[3]; !j.Failed || j.ExitCode != 3 {
				t.Errorf("job 4: failed %v exit code %d", j.Failed, j.ExitCode)
			}
		})
	}
}
