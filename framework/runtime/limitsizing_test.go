package runtime_test

import (
	"context"
	"fmt"
	"testing"

	"pgregory.net/rapid"

	"github.com/xce-sched/xce/cluster"
	"github.com/xce-sched/xce/framework"
	"github.com/xce-sched/xce/framework/plugins"
	"github.com/xce-sched/xce/framework/runtime"
	ct "github.com/xce-sched/xce/internal/clustertest"
)

// rangeCluster: 8,000 hosts of 1 to 4 slots (host i has 1 + i%4), the
// per-host limit {per_host: all, slots: 2}, a running job holding 1 slot on
// every host i with i%3 != 2, and job 2 of tasks 1,10000. It returns the
// cluster and, worked out from that description, the tasks that fit: the
// sum over hosts of min(free slots, room under the limit) = 8,666.
func rangeCluster() (*cluster.Cluster, int) {
	const n, limit = 8000, 2
	spec := ct.Spec{Limits: []cluster.Limit{perHostSlots(limit)}, MemMethod: cluster.PerTask}
	running := map[string]int{}
	fit := 0
	for i := range n {
		name := fmt.Sprintf("h%04d", i)
		slots, used := 1+i%4, 0
		spec.Hosts = append(spec.Hosts, ct.Host{Name: name, Slots: slots, Mem: -1})
		if i%3 != 2 {
			running[name], used = 1, 1
		}
		fit += max(0, min(slots-used, limit-used))
	}
	spec.Jobs = []ct.Job{{ID: 1, Min: len(running), Running: running}, {ID: 2, Min: 1, Max: 10000}}
	return ct.Build(spec), fit
}

// TestPerHostLimitRange8k: a range job under a per-host limit gets every
// task that fits, each host within its free slots and its room.
func TestPerHostLimitRange8k(t *testing.T) {
	c, want := rangeCluster()
	if want != 8666 {
		t.Fatalf("the cluster fits %d tasks, the description says 8666", want)
	}
	s, err := runtime.New(c, runtime.Options{Registry: plugins.NewInTreeRegistry()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Cycle(context.Background(), 0); err != nil {
		t.Fatal(err)
	}
	j := s.Jobs[1]
	if j.State != framework.Running {
		t.Fatalf("job 2 pends: %v", j.Reasons.Main)
	}
	if got := j.Alloc.Slots(); got != want {
		t.Fatalf("job 2 got %d tasks, want %d", got, want)
	}
	for _, ha := range j.Alloc.Hosts {
		used := 0
		if ha.Host%3 != 2 {
			used = 1
		}
		if room := min(1+int(ha.Host)%4-used, 2-used); ha.Slots > room {
			t.Fatalf("host %d: %d tasks, room for %d", ha.Host, ha.Slots, room)
		}
	}
	if err := s.State.CheckInvariants(); err != nil {
		t.Fatal(err)
	}
}

// BenchmarkPerHostLimitRange8k times the cycle of TestPerHostLimitRange8k
// (run with -benchtime=1x; issue 11 §3 measured 19 s before the fix).
func BenchmarkPerHostLimitRange8k(b *testing.B) {
	c, want := rangeCluster()
	for b.Loop() {
		jobs := timedCycle(b, c, runtime.Options{}, 0)
		if len(jobs) != 1 || jobs[0].Alloc == nil || jobs[0].Alloc.Slots() != want {
			b.Fatalf("job 2 did not get %d tasks", want)
		}
		b.StartTimer()
	}
}

// TestPerHostLimitOracle: on small random clusters under a per-host slot
// limit, a per-host mem limit and a per-user slot limit, with some slots
// already used, the runner places a job iff a valid allocation exists,
// with the largest valid task count (a brute force over every split of
// the tasks, each host within its free slots and its per-host rooms, all
// within the user's room, in the job's span shape).
func TestPerHostLimitOracle(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		nh := rapid.IntRange(1, 4).Draw(t, "hosts")
		perHost := rapid.IntRange(1, 4).Draw(t, "perHost")
		perHostMem := rapid.IntRange(1, 8).Draw(t, "perHostMem")
		mem := rapid.IntRange(0, 3).Draw(t, "mem") // the job's per-slot rusage[mem]
		user := rapid.IntRange(1, 12).Draw(t, "user")
		spec := ct.Spec{MemMethod: cluster.PerTask, Limits: []cluster.Limit{perHostSlots(perHost),
			{Name: "m", Hosts: cluster.Consumers{All: true, PerConsumer: true}, Slots: -1, Jobs: -1,
				Resources: []cluster.LimitResource{{Name: "mem", Max: float64(perHostMem)}}},
			{Name: "u", Users: cluster.Consumers{All: true, PerConsumer: true}, Slots: user, Jobs: -1}}}
		free, room := make([]int, nh), make([]int, nh)
		for i := range nh {
			name := fmt.Sprintf("h%d", i)
			slots := rapid.IntRange(1, 5).Draw(t, "slots")
			used := rapid.IntRange(0, min(slots, perHost)).Draw(t, "used")
			spec.Hosts = append(spec.Hosts, ct.Host{Name: name, Slots: slots, Mem: 100})
			if used > 0 {
				// Another user's job: it counts on the per-host limit only.
				spec.Jobs = append(spec.Jobs, ct.Job{ID: cluster.JobID(10 + i), User: "other", Min: used, Running: map[string]int{name: used}})
			}
			free[i], room[i] = slots-used, perHost-used
			if mem > 0 {
				room[i] = min(room[i], perHostMem/mem)
			}
		}
		lo := rapid.IntRange(1, 8).Draw(t, "min")
		hi := rapid.IntRange(lo, 8).Draw(t, "max")
		span := rapid.SampledFrom([]string{"", "span[hosts=1]", "span[ptile=2]"}).Draw(t, "span")
		spec.Jobs = append(spec.Jobs, ct.Job{ID: 1, User: "me", Submit: 1, Min: lo, Max: hi, ResReq: fmt.Sprintf("rusage[mem=%d] %s", mem, span)})
		want := bestSplit(free, room, user, lo, hi, span)

		c := ct.Build(spec)
		s, err := runtime.New(c, runtime.Options{Registry: plugins.NewInTreeRegistry()})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Cycle(context.Background(), 1); err != nil {
			t.Fatal(err)
		}
		j := s.Jobs[len(s.Jobs)-1]
		got := 0
		if j.Alloc != nil {
			got = j.Alloc.Slots()
		}
		if got != want {
			t.Fatalf("free %v, per-host room %v, user room %d, -n %d,%d %q mem=%d: placed %d tasks (%v), the largest valid allocation has %d",
				free, room, user, lo, hi, span, mem, got, j.Reasons.Main, want)
		}
		if err := s.State.CheckInvariants(); err != nil {
			t.Fatal(err)
		}
	})
}

// bestSplit returns the largest task count in lo..hi that some split over
// the hosts allows, 0 if none: host i takes at most min(free[i], room[i]),
// all together at most user; span[hosts=1] uses one host, span[ptile=2]
// gives every host 2 tasks but one, which gets the remainder (LSF).
func bestSplit(free, room []int, user, lo, hi int, span string) int {
	best := 0
	x := make([]int, len(free))
	var rec func(i int)
	rec = func(i int) {
		if i == len(free) {
			n, hosts, short, over := 0, 0, 0, false
			for _, k := range x {
				if k > 0 {
					n += k
					hosts++
					over = over || k > 2
					if k < 2 {
						short++
					}
				}
			}
			ok := n >= lo && n <= hi && n <= user
			switch span {
			case "span[hosts=1]":
				ok = ok && hosts == 1
			case "span[ptile=2]":
				// The short host, if any, holds the remainder n%2 = 1.
				ok = ok && !over && short == n%2
			}
			if ok {
				best = max(best, n)
			}
			return
		}
		for k := 0; k <= max(0, min(free[i], room[i])); k++ {
			x[i] = k
			rec(i + 1)
		}
		x[i] = 0
	}
	rec(0)
	return best
}
