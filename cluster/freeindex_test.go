package cluster

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestFreeLevel(t *testing.T) {
	for _, c := range []struct {
		free  float64
		level uint8
	}{{-1, 0}, {0, 0}, {0.5, 0}, {1, 1}, {2, 2}, {3, 2}, {4, 3}, {7, 3}, {8, 4}, {31, 5}, {32, 6}, {63, 6}, {64, 7}} {
		if got := freeLevel(c.free); got != c.level {
			t.Errorf("freeLevel(%v) = %d, want %d", c.free, got, c.level)
		}
	}
	for k, want := range map[int]int{0: 0, 1: 1, 2: 3, 3: 7, 4: 15, 62: 1<<62 - 1, 63: math.MaxInt, 64: math.MaxInt} {
		if got := FreeLevelUpper(k); got != want {
			t.Errorf("FreeLevelUpper(%d) = %d, want %d", k, got, want)
		}
	}
}

// levelHosts is the oracle: the hosts whose free slots f satisfy
// lo ≤ f ≤ hi for level k (lo = hi = 0 for level 0, else 2^(k−1) … 2^k − 1),
// found by scanning every host.
func levelHosts(s *State, k int) []HostID {
	lo, hi := 0, 0
	if k > 0 {
		lo, hi = 1, 1
		for range k - 1 {
			lo *= 2
		}
		hi = 2*lo - 1
	}
	var out []HostID
	for h := range s.c.Hosts {
		if f := s.FreeSlots(HostID(h)); f >= lo && f <= hi {
			out = append(out, HostID(h))
		}
	}
	return out
}

// TestFreeIndex: over random reservations, releases, bursts of changes
// with no read in between, whole and row-wise re-syncs and window minima,
// on a base state and a derived one, every level of the index holds
// exactly the hosts the oracle finds.
func TestFreeIndex(t *testing.T) {
	for _, tc := range []struct{ n, maxSlots, levels int }{{9, 9, 5}, {trackHosts + 7, 40, 7}} {
		n := tc.n
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			c := &Cluster{Resources: []string{"mem"}, Queues: []Queue{{Name: "q"}}}
			for i := range n {
				c.Hosts = append(c.Hosts, Host{Name: fmt.Sprintf("h%d", i), Slots: 1 + i%40, Capacity: []float64{1000}})
			}
			if err := c.Init(); err != nil {
				t.Fatal(err)
			}
			base := NewState(c)
			d := base.Derive()
			if base.NumFreeLevels() != tc.levels || base.MaxSlots() != tc.maxSlots || base.MaxTotal(0) != 1000 {
				t.Fatalf("levels %d, max slots %d, max mem %v; want %d, %d, 1000", base.NumFreeLevels(), base.MaxSlots(), base.MaxTotal(0), tc.levels, tc.maxSlots)
			}
			rng := rand.New(rand.NewPCG(3, 4))
			var held []HostAlloc
			check := func(step int, s *State, name string) {
				for k := range s.NumFreeLevels() {
					got := slices.Clone(s.HostsAtFreeLevel(k))
					slices.Sort(got)
					if want := levelHosts(s, k); !slices.Equal(got, want) {
						t.Fatalf("step %d, %s: level %d holds %v, want %v", step, name, k, got, want)
					}
				}
			}
			for step := range 6000 {
				h := HostID(rng.IntN(n))
				a := HostAlloc{Host: h, Slots: 1 + rng.IntN(max(base.FreeSlots(h), 1)), Res: []ResAmount{{0, 1}}}
				switch rng.IntN(7) {
				case 6: // a burst of changes with no read: the index may drop and rebuild
					for range 400 {
						h := HostID(rng.IntN(n))
						if base.FreeSlots(h) > 0 {
							a := HostAlloc{Host: h, Slots: 1}
							base.Reserve(&a)
							base.Release(&a)
							base.Reserve(&a)
							held = append(held, a)
						}
					}
				case 0:
					if base.FreeSlots(h) >= a.Slots {
						base.Reserve(&a)
						held = append(held, a)
					}
				case 1:
					if len(held) > 0 {
						k := rng.IntN(len(held))
						base.Release(&held[k])
						held = append(held[:k], held[k+1:]...)
					}
				case 2:
					if d.FreeSlots(h) >= a.Slots {
						d.Reserve(&a)
					}
				case 3:
					d.CopyFrom(base)
				case 4:
					d.MinWithAlloc(base, &JobAlloc{Hosts: []HostAlloc{a}})
				default:
					check(step, base, "base")
					check(step, d, "derived")
				}
				if !base.checkFreeIndex() || !d.checkFreeIndex() {
					t.Fatalf("step %d: an index's positions disagree with its lists", step)
				}
			}
		})
	}
}
