package runtime

// cycleMap is a map emptied at every cycle's start. Clearing a Go map
// costs its capacity, even when it holds little (and a map that once grew
// keeps its capacity), so it remembers the keys it took and deletes only
// those: a reset costs what the cycle put in.
type cycleMap[K comparable, V any] struct {
	m    map[K]V
	keys []K
}

func newCycleMap[K comparable, V any]() cycleMap[K, V] {
	return cycleMap[K, V]{m: map[K]V{}}
}

// get returns the value of k and whether the cycle set it.
func (c *cycleMap[K, V]) get(k K) (V, bool) {
	v, ok := c.m[k]
	return v, ok
}

// has reports whether the cycle set k.
func (c *cycleMap[K, V]) has(k K) bool {
	_, ok := c.m[k]
	return ok
}

// set sets the value of k.
func (c *cycleMap[K, V]) set(k K, v V) {
	if _, ok := c.m[k]; !ok {
		c.keys = append(c.keys, k)
	}
	c.m[k] = v
}

// reset empties the map.
func (c *cycleMap[K, V]) reset() {
	for _, k := range c.keys {
		delete(c.m, k)
	}
	clear(c.keys)
	c.keys = c.keys[:0]
}
