package runtime

// cycleMap is a map emptied at every cycle's start, in O(1). The first
// cycleMapSmall keys a cycle sets live in a slice, searched in order: a
// cycle (or a projection's plan) sets few keys, and comparing a few is
// cheaper than hashing one. Further keys go to a Go map, each entry
// carrying the cycle it was set in (one set in an earlier cycle is
// absent). Clearing a Go map costs its capacity (and deleting its keys
// one by one, a hash each), so the map is cleared only when it has grown
// past cycleMapBound entries, stale ones included.
type cycleMap[K comparable, V any] struct {
	small []smallEntry[K, V] // this cycle's first keys
	m     map[K]stamped[V]
	cycle uint64
}

// smallEntry is a key and its value in cycleMap.small.
type smallEntry[K comparable, V any] struct {
	k K
	v V
}

// stamped is a value and the cycle it was set in.
type stamped[V any] struct {
	v  V
	at uint64
}

// cycleMapSmall is how many keys a cycle keeps in cycleMap.small.
const cycleMapSmall = 8

// cycleMapBound is the most entries a cycleMap keeps across cycles before
// it is cleared.
const cycleMapBound = 1 << 12

func newCycleMap[K comparable, V any]() cycleMap[K, V] {
	return cycleMap[K, V]{m: map[K]stamped[V]{}, small: make([]smallEntry[K, V], 0, cycleMapSmall)}
}

// get returns the value of k and whether the cycle set it.
func (c *cycleMap[K, V]) get(k K) (V, bool) {
	for i := range c.small {
		if c.small[i].k == k {
			return c.small[i].v, true
		}
	}
	if len(c.small) == cycleMapSmall {
		if e, ok := c.m[k]; ok && e.at == c.cycle {
			return e.v, true
		}
	}
	var zero V
	return zero, false
}

// has reports whether the cycle set k.
func (c *cycleMap[K, V]) has(k K) bool {
	_, ok := c.get(k)
	return ok
}

// set sets the value of k.
func (c *cycleMap[K, V]) set(k K, v V) {
	for i := range c.small {
		if c.small[i].k == k {
			c.small[i].v = v
			return
		}
	}
	if len(c.small) < cycleMapSmall {
		c.small = append(c.small, smallEntry[K, V]{k, v})
		return
	}
	c.m[k] = stamped[V]{v, c.cycle}
}

// reset empties the map. What the slice's entries point to stays
// reachable until they are overwritten (cycleMapSmall entries at most).
func (c *cycleMap[K, V]) reset() {
	c.small = c.small[:0]
	c.cycle++
	if len(c.m) > cycleMapBound {
		clear(c.m)
	}
}
