package runtime

// cycleMap is a map emptied at every cycle's start, in O(1): each entry
// carries the cycle it was set in, and one set in an earlier cycle is
// absent. Clearing a Go map costs its capacity (and deleting its keys one
// by one, a hash each), so the map is cleared only when it has grown past
// cycleMapBound entries, stale ones included.
type cycleMap[K comparable, V any] struct {
	m     map[K]stamped[V]
	cycle uint64
}

// stamped is a value and the cycle it was set in.
type stamped[V any] struct {
	v  V
	at uint64
}

// cycleMapBound is the most entries a cycleMap keeps across cycles before
// it is cleared.
const cycleMapBound = 1 << 12

func newCycleMap[K comparable, V any]() cycleMap[K, V] {
	return cycleMap[K, V]{m: map[K]stamped[V]{}}
}

// get returns the value of k and whether the cycle set it.
func (c *cycleMap[K, V]) get(k K) (V, bool) {
	e, ok := c.m[k]
	if !ok || e.at != c.cycle {
		var zero V
		return zero, false
	}
	return e.v, true
}

// has reports whether the cycle set k.
func (c *cycleMap[K, V]) has(k K) bool {
	e, ok := c.m[k]
	return ok && e.at == c.cycle
}

// set sets the value of k.
func (c *cycleMap[K, V]) set(k K, v V) {
	c.m[k] = stamped[V]{v, c.cycle}
}

// reset empties the map.
func (c *cycleMap[K, V]) reset() {
	c.cycle++
	if len(c.m) > cycleMapBound {
		clear(c.m)
	}
}
