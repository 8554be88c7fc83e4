package runtime

import (
	"testing"

	"pgregory.net/rapid"
)

// TestPropertyCycleMap: a cycleMap answers as a Go map cleared at every
// reset would, whether its keys of the cycle are few (all in the slice) or
// many (some in the map), and stale entries of earlier cycles are never
// seen.
func TestPropertyCycleMap(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		c := newCycleMap[cursorKey, int]()
		want := map[cursorKey]int{}
		key := func() cursorKey {
			return cursorKey{slots: rapid.IntRange(0, 2*cycleMapSmall).Draw(t, "slots"), first: rapid.Bool().Draw(t, "first")}
		}
		for range rapid.IntRange(0, 300).Draw(t, "ops") {
			switch rapid.IntRange(0, 9).Draw(t, "op") {
			case 0:
				c.reset()
				clear(want)
			case 1, 2, 3, 4:
				k, v := key(), rapid.Int().Draw(t, "v")
				c.set(k, v)
				want[k] = v
			default:
				k := key()
				got, ok := c.get(k)
				w, wok := want[k]
				if got != w || ok != wok || c.has(k) != wok {
					t.Fatalf("get(%+v) = %d, %v; want %d, %v", k, got, ok, w, wok)
				}
			}
		}
	})
}
