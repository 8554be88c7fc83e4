package cluster

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestDeriveResync: a derived state of a cluster large enough for row-wise
// re-sync (trackHosts hosts or more) equals its base after CopyFrom, over
// random interleavings of reservations on both sides, log resets included;
// and so does one of a small cluster (whole copies).
func TestDeriveResync(t *testing.T) {
	for _, n := range []int{8, trackHosts + 10} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			c := &Cluster{Resources: []string{"mem"}, Queues: []Queue{{Name: "q"}}}
			for i := range n {
				c.Hosts = append(c.Hosts, Host{Name: fmt.Sprintf("h%d", i), Slots: 4, Capacity: []float64{100}})
			}
			if err := c.Init(); err != nil {
				t.Fatal(err)
			}
			base := NewState(c)
			d := base.Derive()
			rng := rand.New(rand.NewPCG(1, 2))
			var held []HostAlloc
			for step := range 20000 {
				a := HostAlloc{Host: HostID(rng.IntN(n)), Slots: 1, Res: []ResAmount{{0, 10}}}
				switch rng.IntN(4) {
				case 0: // the base changes
					if base.FreeSlots(a.Host) > 0 {
						base.Reserve(&a)
						held = append(held, a)
					}
				case 1:
					if len(held) > 0 {
						k := rng.IntN(len(held))
						base.Release(&held[k])
						held = append(held[:k], held[k+1:]...)
					}
				case 2: // the derived state changes
					d.Reserve(&a)
				default: // re-sync and compare
					d.CopyFrom(base)
					if !d.Equal(base) || d.TotalFreeSlots() != base.TotalFreeSlots() {
						t.Fatalf("step %d: derived state differs from its base after CopyFrom", step)
					}
				}
			}
		})
	}
}
