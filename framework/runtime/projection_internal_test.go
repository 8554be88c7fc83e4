package runtime

import (
	"testing"

	"pgregory.net/rapid"

	"github.com/xce-sched/xce/cluster"
	ct "github.com/xce-sched/xce/internal/clustertest"
)

// TestPropertyMinFreeSlots: over random projections (running jobs' ends,
// some never,
// reservations added and removed, jobs started in the live state between
// queries), minFreeSlots, which keeps its sweep from one start time while
// nothing changes, always equals a brute-force minimum: the total of free
// slots at t, and after every event in (t, end), from the live state and
// the events replayed one by one.
func TestPropertyMinFreeSlots(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		c := ct.Build(ct.Spec{Hosts: []ct.Host{{Name: "a", Slots: 8, Mem: -1}, {Name: "b", Slots: 8, Mem: -1}}})
		live := cluster.NewState(c)
		var p projection
		p.reset(live)
		one := func(h cluster.HostID, n int) *cluster.JobAlloc {
			return &cluster.JobAlloc{Hosts: []cluster.HostAlloc{{Host: h, Slots: n}}}
		}
		type res struct {
			start, end int64
			a          *cluster.JobAlloc
		}
		var reservations []res
		for range rapid.IntRange(1, 40).Draw(t, "steps") {
			switch rapid.IntRange(0, 4).Draw(t, "op") {
			case 0: // a job starts now and ends later
				h := cluster.HostID(rapid.IntRange(0, 1).Draw(t, "host"))
				if live.FreeSlots(h) == 0 {
					continue
				}
				a := one(h, rapid.IntRange(1, live.FreeSlots(h)).Draw(t, "slots"))
				live.Take(a)
				end := rapid.Int64Range(0, 30).Draw(t, "end")
				if rapid.IntRange(0, 3).Draw(t, "endless") == 0 {
					end = never // no end event: only the live state changes
				}
				p.ending(end, a)
			case 1:
				start := rapid.Int64Range(0, 30).Draw(t, "start")
				r := res{start, start + rapid.Int64Range(1, 20).Draw(t, "length"), one(cluster.HostID(rapid.IntRange(0, 1).Draw(t, "host")), rapid.IntRange(1, 3).Draw(t, "slots"))}
				p.reserve(r.start, r.end, r.a)
				reservations = append(reservations, r)
			case 2:
				if len(reservations) > 0 {
					i := rapid.IntRange(0, len(reservations)-1).Draw(t, "which")
					r := reservations[i]
					p.unreserve(r.start, r.end, r.a)
					reservations = append(reservations[:i], reservations[i+1:]...)
				}
			default: // queries
				from, end := rapid.SampledFrom([]int64{0, 10, 20}).Draw(t, "t"), rapid.Int64Range(0, 50).Draw(t, "window end") // a cycle asks from few start times
				want := live.TotalFreeSlots()
				for i := range p.events {
					if p.events[i].at <= from {
						want += p.events[i].delta()
					}
				}
				run, least := want, want
				for i := range p.events {
					if e := &p.events[i]; e.at > from && e.at < end {
						run += e.delta()
						least = min(least, run)
					}
				}
				if got := p.minFreeSlots(from, end); got != least {
					t.Fatalf("minFreeSlots(%d, %d) = %d, want %d", from, end, got, least)
				}
			}
		}
	})
}
