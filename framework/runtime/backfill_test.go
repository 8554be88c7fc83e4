package runtime_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/xce-sched/xce/cluster"
	"github.com/xce-sched/xce/framework"
	"github.com/xce-sched/xce/framework/plugins"
	"github.com/xce-sched/xce/framework/runtime"
	ct "github.com/xce-sched/xce/internal/clustertest"
	"github.com/xce-sched/xce/sim"
)

// state renders a job after a run: "RUN@t h1*1", "DONE@t", "PEND Reason
// [reserved@t h1*1]".
func state(c *cluster.Cluster, j *framework.Job) string {
	hosts := func(a *cluster.JobAlloc) string {
		out := ""
		for _, h := range a.Hosts {
			out += fmt.Sprintf(" %s*%d", c.Hosts[h.Host].Name, h.Slots)
		}
		return out
	}
	switch j.State {
	case framework.Running:
		return fmt.Sprintf("RUN@%d%s", j.Start, hosts(j.Alloc))
	case framework.Done:
		return fmt.Sprintf("DONE@%d-%d", j.Start, j.End)
	}
	s := "PEND " + j.Reasons.Main.String()
	if j.Reserved != nil {
		s += fmt.Sprintf(" reserved@%d%s", j.Reserved.Start, hosts(j.Reserved.Alloc))
	}
	return s
}

// runPolicy runs spec's jobs under policy, in one queue, until until
// (inclusive).
func runPolicy(t *testing.T, spec ct.Spec, policy cluster.Policy, until int64) (*cluster.Cluster, *runtime.Scheduler) {
	t.Helper()
	spec.Queues = []cluster.Queue{{Name: "normal", Policy: policy, Picker: "priority"}}
	return runQueues(t, spec, until)
}

// runQueues runs spec (with its own queues) until until (inclusive).
func runQueues(t interface {
	Helper()
	Fatal(args ...any)
}, spec ct.Spec, until int64) (*cluster.Cluster, *runtime.Scheduler) {
	t.Helper()
	c := ct.Build(spec)
	s, err := runtime.New(c, runtime.Options{Registry: plugins.NewInTreeRegistry()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sim.Run(context.Background(), s, sim.Options{Until: until}); err != nil {
		t.Fatal(err)
	}
	if err := s.State.CheckInvariants(); err != nil {
		t.Fatal(err)
	}
	return c, s
}

// TestBackfillSchedules: hand-worked schedules for EASY (and conservative
// where it differs). Every job's runtime equals its estimate.
func TestBackfillSchedules(t *testing.T) {
	run := func(id cluster.JobID, submit, rt int64, rr string, min int) ct.Job {
		return ct.Job{ID: id, Submit: submit, Min: min, ResReq: rr, Runtime: rt, Estimate: rt}
	}
	tests := []struct {
		name   string
		spec   ct.Spec
		policy cluster.Policy
		until  int64
		want   []string // per job in ID order
	}{
		{
			// A holds 6000 of h1's 8000 MB until 100. B needs 7000 MB: it is
			// blocked on memory, not slots, and is reserved at 100. C (1000
			// MB, 200 s) fits now and leaves B its 7000 at 100: it starts.
			// D (500 MB, 300 s) fits now but would leave B 6500 at 100: held.
			// E (500 MB, 50 s) ends before 100: it starts.
			name: "head blocked on memory gets a reservation",
			spec: ct.Spec{Hosts: []ct.Host{{Name: "h1", Slots: 4, Mem: 8000}}, Jobs: []ct.Job{
				{ID: 1, Min: 1, ResReq: "rusage[mem=6000]", Runtime: 100, Estimate: 100, Running: map[string]int{"h1": 1}},
				run(2, 0, 50, "rusage[mem=7000]", 1), run(3, 0, 200, "rusage[mem=1000]", 1),
				run(4, 0, 300, "rusage[mem=500]", 1), run(5, 0, 50, "rusage[mem=500]", 1)}},
			policy: cluster.PolicyEASY, until: 0,
			want: []string{"RUN@0 h1*1", "PEND NotEnoughResource reserved@100 h1*1", "RUN@0 h1*1", "PEND Priority", "RUN@0 h1*1"},
		},
		{
			// The same run on to t=100: E ends at 50; A ends at 100 and B
			// starts then, as reserved. D, now the first job that does not
			// fit (no memory left at 100), gets the reservation: at 150,
			// when B ends.
			name: "the memory reservation is kept",
			spec: ct.Spec{Hosts: []ct.Host{{Name: "h1", Slots: 4, Mem: 8000}}, Jobs: []ct.Job{
				{ID: 1, Min: 1, ResReq: "rusage[mem=6000]", Runtime: 100, Estimate: 100, Running: map[string]int{"h1": 1}},
				run(2, 0, 50, "rusage[mem=7000]", 1), run(3, 0, 200, "rusage[mem=1000]", 1),
				run(4, 0, 300, "rusage[mem=500]", 1), run(5, 0, 50, "rusage[mem=500]", 1)}},
			policy: cluster.PolicyEASY, until: 100,
			want: []string{"DONE@0-100", "RUN@100 h1*1", "RUN@0 h1*1", "PEND NotEnoughResource reserved@150 h1*1", "DONE@0-50"},
		},
		{
			// lic = 2; A holds 1 until 100. B needs 2: reserved at 100 for the
			// license. C (1 lic, 200 s) would leave B only 1 at 100: held. D
			// (1 lic, 50 s) ends before 100: it starts.
			name: "a license reservation",
			spec: ct.Spec{Hosts: []ct.Host{{Name: "h1", Slots: 8, Mem: -1}}, Shared: []cluster.Shared{{Name: "lic", Total: 2}}, Jobs: []ct.Job{
				{ID: 1, Min: 1, ResReq: "rusage[lic=1]", Runtime: 100, Estimate: 100, Running: map[string]int{"h1": 1}},
				run(2, 0, 50, "rusage[lic=2]", 1), run(3, 0, 200, "rusage[lic=1]", 1), run(4, 0, 50, "rusage[lic=1]", 1)}},
			policy: cluster.PolicyEASY, until: 0,
			want: []string{"RUN@0 h1*1", "PEND SharedResource reserved@100 h1*1", "PEND Priority", "RUN@0 h1*1"},
		},
		{
			// alice may hold 2 slots (per-user limit) and holds them until
			// 100: her next job is reserved at 100, when the limit frees up
			// in the projection; bob's job runs now.
			name: "a limit-blocked head gets a reservation",
			spec: ct.Spec{Hosts: []ct.Host{{Name: "h1", Slots: 8, Mem: -1}},
				Limits: []cluster.Limit{{Name: "two_each", Users: cluster.Consumers{All: true, PerConsumer: true}, Slots: 2, Jobs: -1}},
				Jobs: []ct.Job{
					{ID: 1, User: "alice", Min: 2, Runtime: 100, Estimate: 100, Running: map[string]int{"h1": 2}},
					{ID: 2, User: "alice", Min: 1, Runtime: 50, Estimate: 50}, {ID: 3, User: "bob", Min: 1, Runtime: 50, Estimate: 50}}},
			policy: cluster.PolicyEASY, until: 0,
			want: []string{"RUN@0 h1*2", "PEND LimitReached reserved@100 h1*1", "RUN@0 h1*1"},
		},
		{
			// h1 is full until 100 (A); B needs all 4 slots: reserved at 100.
			// C and D (1 slot, 50 s) end before 100 and take h2's two slots;
			// E finds no free slot.
			name: "backfilled jobs never share a slot",
			spec: ct.Spec{Hosts: []ct.Host{{Name: "h1", Slots: 2, Mem: -1}, {Name: "h2", Slots: 2, Mem: -1}}, Jobs: []ct.Job{
				{ID: 1, Min: 2, Runtime: 100, Estimate: 100, Running: map[string]int{"h1": 2}},
				run(2, 0, 100, "", 4), run(3, 0, 50, "", 1), run(4, 0, 50, "", 1), run(5, 0, 50, "", 1)}},
			policy: cluster.PolicyEASY, until: 0,
			want: []string{"RUN@0 h1*2", "PEND NotEnoughSlots reserved@100 h1*2 h2*2", "RUN@0 h2*1", "RUN@0 h2*1", "PEND NotEnoughSlots"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, s := runPolicy(t, tc.spec, tc.policy, tc.until)
			for i, j := range s.Jobs {
				if got := state(c, j); got != tc.want[i] {
					t.Errorf("job %d: got %q, want %q", j.Spec.ID, got, tc.want[i])
				}
			}
		})
	}
}

// TestWideJobNotStarved: 4 hosts × 1 slot; a stream of 1-slot jobs of 100 s
// arrives every 10 s from t=0 to 190; a 4-slot job W (50 s) arrives at 5.
// Under EASY (and conservative), W is reserved at 100, when the first
// narrow job ends, and the narrow jobs that would still run then are held:
// W starts at 100. Under firstfit the narrow jobs keep taking every slot
// that frees, and W waits until the stream is over: the last narrow job
// (submitted 190) starts when a slot frees at the earliest at 190 and ends
// 100 s later, so W cannot start before 290.
func TestWideJobNotStarved(t *testing.T) {
	spec := ct.Spec{}
	for i := range 4 {
		spec.Hosts = append(spec.Hosts, ct.Host{Name: fmt.Sprintf("n%d", i), Slots: 1, Mem: -1})
	}
	spec.Jobs = append(spec.Jobs, ct.Job{ID: 100, Submit: 5, Min: 4, Runtime: 50, Estimate: 50})
	for i := range 20 {
		spec.Jobs = append(spec.Jobs, ct.Job{ID: cluster.JobID(i + 1), Submit: int64(10 * i), Min: 1, Runtime: 100, Estimate: 100})
	}
	for _, tc := range []struct {
		policy cluster.Policy
		check  func(start int64) bool
		want   string
	}{
		{cluster.PolicyEASY, func(s int64) bool { return s == 100 }, "100"},
		{cluster.PolicyConservative, func(s int64) bool { return s == 100 }, "100"},
		{cluster.PolicyFirstFit, func(s int64) bool { return s >= 290 }, ">= 290"},
	} {
		_, s := runPolicy(t, spec, tc.policy, 1<<40)
		w := s.Jobs[0]
		if w.State != framework.Done || !tc.check(w.Start) {
			t.Errorf("%s: wide job %v started at %d, want %s", tc.policy, w.State, w.Start, tc.want)
		}
	}
}
