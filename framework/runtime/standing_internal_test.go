package runtime

import (
	"slices"
	"testing"

	"pgregory.net/rapid"

	"github.com/xce-sched/xce/cluster"
	"github.com/xce-sched/xce/framework"
)

// TestPropertyCanMove checks gaps.canMove against its definition, point
// by point: some whole second t in [now, s) has at least n slots free at
// every second of [t, min(t+e, s)), the free slots at a second being the
// live ones plus every event's change up to it; and gaps.earliest finds
// the first such second.
func TestPropertyCanMove(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		live := rapid.IntRange(0, 4).Draw(t, "live")
		c := &cluster.Cluster{Hosts: []cluster.Host{{Name: "h", Slots: max(live, 1)}}, Queues: []cluster.Queue{{Name: "q"}}}
		if err := c.Init(); err != nil {
			t.Fatal(err)
		}
		st := cluster.NewState(c)
		if live == 0 {
			st.Take(&cluster.JobAlloc{Hosts: []cluster.HostAlloc{{Host: 0, Slots: 1}}})
		}
		var p projection
		p.reset(st)
		for range rapid.IntRange(0, 12).Draw(t, "events") {
			e := event{at: rapid.Int64Range(0, 30).Draw(t, "at"), slots: rapid.IntRange(1, 3).Draw(t, "slots")}
			e.release = rapid.Bool().Draw(t, "release")
			e.start = !e.release
			p.events = append(p.events, e)
		}
		slices.SortStableFunc(p.events, func(a, b event) int { return int(a.at - b.at) })
		// Later changes of the projection: rebuilt gaps must follow.
		for round := range 2 {
			if round == 1 {
				p.events = append(p.events, event{at: 31, release: true, slots: 2})
				p.ver++
			}
			now := rapid.Int64Range(0, 10).Draw(t, "now")
			free := func(tau int64) int {
				f := live
				for _, e := range p.events {
					if e.at <= tau {
						f += e.delta()
					}
				}
				return f
			}
			for range 5 {
				s := rapid.Int64Range(now+1, 40).Draw(t, "s")
				e := rapid.Int64Range(1, 40).Draw(t, "e")
				n := rapid.IntRange(1, 6).Draw(t, "n")
				want := false
				for start := now; start < s && !want; start++ {
					ok := true
					for tau := start; tau < min(start+e, s); tau++ {
						ok = ok && free(tau) >= n
					}
					want = ok
				}
				g := p.gapsFrom(now)
				if got := g.canMove(s, e, n); got != want {
					t.Fatalf("now %d s %d e %d n %d: canMove %v, want %v", now, s, e, n, got, want)
				}
				// earliest: the first such second, else s.
				first := s
				for start := now; start < s && first == s; start++ {
					ok := true
					for tau := start; tau < min(start+e, s); tau++ {
						ok = ok && free(tau) >= n
					}
					if ok {
						first = start
					}
				}
				if got, f, ok := g.earliest(s, e, n); got != first || ok != want || ok && f != free(got) {
					t.Fatalf("now %d s %d e %d n %d: earliest %d (%d free) %v, want %d (%d free) %v", now, s, e, n, got, f, ok, first, free(first), want)
				}
			}
		}
	})
}

// TestPropertyReserveAll: reserveAll leaves the projection exactly as
// reserve called for each reservation in turn would: the same events in
// the same order (ties included), the same reservation count; with times
// too far to pack into its sort keys too.
func TestPropertyReserveAll(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		c := &cluster.Cluster{Hosts: []cluster.Host{{Name: "h", Slots: 4}}, Queues: []cluster.Queue{{Name: "q"}}}
		if err := c.Init(); err != nil {
			t.Fatal(err)
		}
		st := cluster.NewState(c)
		var ps [2]projection
		for i := range ps {
			ps[i].reset(st)
		}
		var base int64
		if rapid.Bool().Draw(t, "far future") {
			base = 1 << 41
		}
		allocs := make([]*cluster.JobAlloc, 4)
		for i := range allocs {
			allocs[i] = &cluster.JobAlloc{Hosts: []cluster.HostAlloc{{Host: 0, Slots: i + 1}}}
		}
		for range rapid.IntRange(0, 6).Draw(t, "running") {
			at, a := base+rapid.Int64Range(0, 20).Draw(t, "end"), allocs[rapid.IntRange(0, 3).Draw(t, "alloc")]
			for i := range ps {
				ps[i].ending(at, a)
			}
		}
		var rs []framework.Reservation
		for range rapid.IntRange(0, 30).Draw(t, "reservations") {
			start := base + rapid.Int64Range(0, 20).Draw(t, "start")
			end := start + rapid.Int64Range(1, 10).Draw(t, "length")
			if rapid.IntRange(0, 5).Draw(t, "endless") == 0 {
				end = never
			}
			rs = append(rs, framework.Reservation{Start: start, End: end, Alloc: allocs[rapid.IntRange(0, 3).Draw(t, "alloc")]})
		}
		for _, r := range rs {
			ps[0].reserve(r.Start, r.End, r.Alloc)
		}
		var m mergeScratch
		ps[1].reserveAll(rs, &m)
		if !slices.Equal(ps[0].events, ps[1].events) || ps[0].starts != ps[1].starts {
			t.Fatalf("reserveAll:\n%v\none by one:\n%v", ps[1].events, ps[0].events)
		}
	})
}
