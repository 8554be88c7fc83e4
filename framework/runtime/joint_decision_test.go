package runtime_test

import (
	"testing"

	ct "github.com/xce-sched/xce/internal/clustertest"
)

// TestCompoundTermsTogether: a compound request whose terms fit one by
// one but not together, the hosts of a plan being distinct, can never run
// (BadRequest); one whose terms fit together is placed. Worked by hand.
func TestCompoundTermsTogether(t *testing.T) {
	nine := []ct.Host{host("a", 3, -1, "A"), host("b", 3, -1, "A"), host("c", 3, -1, "B")}
	runDecisionCases(t, false, []decisionCase{
		// 5 tasks on type A (6 slots) and 5 anywhere (9): 10 tasks, 9 slots.
		{"tasks", ct.Spec{Hosts: nine, Jobs: []ct.Job{{ID: 1, Min: 10, ResReq: "5*{select[type==A]} + 5*{}"}}},
			[]string{"BadRequest"}},
		// 4 on A and 3 anywhere: the first takes both A hosts (a 3, b 1),
		// the second c: each host serves one term.
		{"fits", ct.Spec{Hosts: nine, Jobs: []ct.Job{{ID: 1, Min: 7, ResReq: "4*{select[type==A]} + 3*{}"}}},
			[]string{"a*3 b*1 c*3"}},
		// Three terms of one task on type A: two A hosts (the pair of
		// terms 1 and 2 passes; all three do not).
		{"hosts", ct.Spec{Hosts: nine, Jobs: []ct.Job{{ID: 1, Min: 3, ResReq: "1*{select[type==A]} + 1*{select[type==A]} + 1*{select[type==A]}"}}},
			[]string{"BadRequest"}},
		// Terms 2 and 3 cannot share c; term 1 alone is fine.
		{"pair", ct.Spec{Hosts: nine, Jobs: []ct.Job{{ID: 1, Min: 3, ResReq: "1*{} + 1*{select[type==B]} + 1*{select[type==B]}"}}},
			[]string{"BadRequest"}},
	})
}
