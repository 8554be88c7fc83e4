package runtime_test

import (
	"testing"

	"github.com/xce-sched/xce/cluster"
	ct "github.com/xce-sched/xce/internal/clustertest"
)

// decisionCase is a cluster, its jobs and the decision expected for each
// job in ID order ("" for a running job of the snapshot), rendered as
// render does: "a*2 b*2" or the main reason code.
type decisionCase struct {
	name string
	spec ct.Spec
	want []string
}

func runDecisionCases(t *testing.T, tests []decisionCase) {
	t.Helper()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, got := run(t, tc.spec)
			for i, j := range tc.spec.Jobs {
				if tc.want[i] == "" {
					continue
				}
				if g := render(got[j.ID]); g != tc.want[i] {
					t.Errorf("job %d: got %s, want %s", j.ID, g, tc.want[i])
				}
			}
		})
	}
}

func host(name string, slots int, mem float64, typ string) ct.Host {
	return ct.Host{Name: name, Slots: slots, Mem: mem, Type: typ}
}

// TestZeroAmounts: a zero rusage amount reserves nothing and needs nothing,
// so a host without the resource takes such tasks (issue 11 §3).
func TestZeroAmounts(t *testing.T) {
	runDecisionCases(t, []decisionCase{
		// b, the only host with mem, is closed: a takes the task.
		{"mem=0 on a host without mem", ct.Spec{Hosts: []ct.Host{host("a", 4, -1, ""), {Name: "b", Slots: 4, Mem: 1000, Status: cluster.HostClosed}},
			Jobs: []ct.Job{{ID: 1, Min: 1, ResReq: "rusage[mem=0]"}}}, []string{"a*1"}},
		// Largest first: a's 8 slots take all 8 tasks.
		{"sizing and check agree", ct.Spec{Hosts: []ct.Host{host("a", 8, -1, ""), host("b", 4, 1000, ""), host("c", 4, 1000, "")},
			Jobs: []ct.Job{{ID: 1, Min: 8, ResReq: "rusage[mem=0]"}}}, []string{"a*8"}},
		// One term's zero mem, the other's 500: a (no mem) can only take
		// the first, b (1000 MB) the second.
		{"compound zero amount", ct.Spec{Hosts: []ct.Host{host("a", 1, -1, ""), host("b", 1, 1000, "")},
			Jobs: []ct.Job{{ID: 1, Min: 2, ResReq: "1*{rusage[mem=0]} + 1*{rusage[mem=500]}"}}}, []string{"a*1 b*1"}},
	})
}
