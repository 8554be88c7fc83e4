package runtime_test

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/xce-sched/xce/cluster"
	ct "github.com/xce-sched/xce/internal/clustertest"
)

// render gives a decision as "a*2 b*1" (hosts sorted by name) or the main
// reason code.
func render(d decision) string {
	if d.hosts == nil {
		return d.reason.String()
	}
	var parts []string
	for h, n := range d.hosts {
		parts = append(parts, fmt.Sprintf("%s*%d", h, n))
	}
	sort.Strings(parts)
	return strings.Join(parts, " ")
}

// TestReviewRegressions pins the defects a review found, each with its
// expected decision worked out by hand.
func TestReviewRegressions(t *testing.T) {
	h := func(name string, slots int, mem float64, typ string) ct.Host {
		return ct.Host{Name: name, Slots: slots, Mem: mem, Type: typ}
	}
	abc := []ct.Host{h("a", 4, -1, "A"), h("b", 4, -1, "A"), h("c", 1, -1, "B")}
	tests := []struct {
		name string
		spec ct.Spec
		want []string // per job in ID order; "" for a running job of the snapshot
	}{
		{"huge ptile count pends at once", ct.Spec{Hosts: []ct.Host{h("a", 1e9, -1, ""), h("b", 1e9, -1, "")},
			Jobs: []ct.Job{{ID: 1, Min: 1e9, ResReq: "span[ptile=1]"}}}, []string{"BadRequest"}},
		// Ranges start at the largest count that could fit now.
		{"huge range, hosts=1", ct.Spec{Hosts: abc, Jobs: []ct.Job{{ID: 1, Min: 1, Max: 1e9, ResReq: "span[hosts=1]"}}}, []string{"a*4"}},
		{"huge range, ptile=2", ct.Spec{Hosts: abc, Jobs: []ct.Job{{ID: 1, Min: 1, Max: 1e9, ResReq: "span[ptile=2]"}}}, []string{"a*2 b*2 c*1"}},
		{"huge range, ptile=4 same[type]", ct.Spec{Hosts: abc, Jobs: []ct.Job{{ID: 1, Min: 1, Max: 1e9, ResReq: "span[ptile=4] same[type]"}}}, []string{"a*4 b*4"}},
		{"fcfs does not wait behind a job that can never run", ct.Spec{Hosts: []ct.Host{h("h1", 4, -1, ""), h("h2", 4, -1, "")},
			Queues: []cluster.Queue{{Name: "f", Policy: cluster.PolicyFCFS}},
			Jobs:   []ct.Job{{ID: 1, Min: 100}, {ID: 2, Submit: 1, Min: 1}}}, []string{"BadRequest", "h1*1"}},
		// Strict FCFS is not held by a job that could not run even with
		// every open host idle: job 1 matches only the closed h2, job 3
		// needs 6 slots where 4 are open; job 2 runs.
		{"fcfs not held by jobs too big for the open hosts", ct.Spec{Hosts: []ct.Host{h("h1", 4, -1, ""), {Name: "h2", Slots: 4, Mem: -1, Status: cluster.HostClosed}},
			Queues: []cluster.Queue{{Name: "f", Policy: cluster.PolicyFCFS}},
			Jobs:   []ct.Job{{ID: 1, Min: 1, ResReq: "select[hname==h2]"}, {ID: 3, Min: 6}, {ID: 2, Submit: 1, Min: 1}}},
			[]string{"NoHostMatch", "NotEnoughSlots", "h1*1"}},
		// A job larger than its user's limit allows even with nothing used.
		{"fcfs not held by a job over its limit", ct.Spec{Hosts: []ct.Host{h("h1", 8, -1, "")},
			Queues: []cluster.Queue{{Name: "f", Policy: cluster.PolicyFCFS}},
			Limits: []cluster.Limit{{Name: "two", Users: cluster.Consumers{All: true, PerConsumer: true}, Slots: 2, Jobs: -1}},
			Jobs:   []ct.Job{{ID: 1, User: "a", Min: 3}, {ID: 2, User: "b", Submit: 1, Min: 1}}},
			[]string{"LimitReached", "h1*1"}},
		{"order[] sizes no-span buckets", ct.Spec{Hosts: []ct.Host{h("h1", 4, 1000, ""), h("h2", 2, 5000, ""), h("h3", 2, 9000, "")},
			Jobs: []ct.Job{{ID: 1, Min: 3, ResReq: "order[-mem]"}}}, []string{"h2*1 h3*2"}},
		{"decimal licenses add up", ct.Spec{Hosts: []ct.Host{h("h", 8, -1, "")}, Shared: []cluster.Shared{{Name: "lic", Total: 0.3}},
			Jobs: []ct.Job{{ID: 1, Min: 1, ResReq: "rusage[lic=0.1]"}, {ID: 2, Min: 1, ResReq: "rusage[lic=0.1]"}, {ID: 3, Min: 1, ResReq: "rusage[lic=0.1]"}}},
			[]string{"h*1", "h*1", "h*1"}},
		{"decimal mem adds up", ct.Spec{Hosts: []ct.Host{h("h", 4, 0.3, "")}, Jobs: []ct.Job{{ID: 1, Min: 3, ResReq: "rusage[mem=0.1]"}}}, []string{"h*3"}},
		// A running compound job holds the largest per-slot mem of its
		// terms on each of its slots (4000 on h1 and on h2) and the
		// licenses of all its terms (2).
		{"running compound job reserves", ct.Spec{Hosts: []ct.Host{h("h1", 4, 10000, ""), h("h2", 4, 10000, "")}, Shared: []cluster.Shared{{Name: "lic", Total: 3}},
			Jobs: []ct.Job{{ID: 1, Min: 2, ResReq: "1*{rusage[mem=4000:lic=2]} + 1*{rusage[mem=4000]}", Running: map[string]int{"h1": 1, "h2": 1}},
				{ID: 3, Min: 2, ResReq: "rusage[mem=5000:lic=3]"}, {ID: 4, Min: 1, ResReq: "rusage[mem=9000]"}}},
			[]string{"", "SharedResource", "NotEnoughResource"}},
		{"compound terms need distinct hosts", ct.Spec{Hosts: []ct.Host{h("h1", 4, -1, "")}, Jobs: []ct.Job{{ID: 1, Min: 2, ResReq: "1*{} + {}"}}}, []string{"BadRequest"}},
		{"ptile needs more hosts than exist", ct.Spec{Hosts: []ct.Host{h("h1", 8, -1, "")}, Jobs: []ct.Job{{ID: 1, Min: 8, ResReq: "span[ptile=4]"}}}, []string{"BadRequest"}},
		// Issue 11 §4 chose LSF's rule for every shape: a host without
		// a same[] value takes no task, even alone (h1 has no type).
		{"same[] on one host needs a value", ct.Spec{Hosts: []ct.Host{h("h1", 3, -1, ""), h("h3", 4, -1, "A")}, Jobs: []ct.Job{{ID: 1, Min: 2, ResReq: "same[type] span[hosts=1]"}}}, []string{"h3*2"}},
	}
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
