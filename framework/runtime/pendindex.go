package runtime

import (
	"math"

	"github.com/xce-sched/xce/framework"
)

// pendIndex holds one queue's pending jobs in pending order, each under a
// key that says in which partial cycles it must be considered (keys), in
// a segment tree of the keys' minima: a partial cycle finds the next job
// it must consider in O(log n) and never touches the jobs it leaves out,
// so that it costs what it considers, not the queue (issue 15).
//
// Positions only grow between compactions: a job that leaves the queue
// leaves a hole (no key), and compact renumbers once holes are the
// majority, so that the work is amortized O(1) per job.
type pendIndex struct {
	jobs []*framework.Job // per position: the job, nil for a hole
	// size is a power of two, at least len(jobs); node i of the tree is
	// a[i], b[i], its children 2i and 2i+1, the leaf of position p is
	// size+p. A node holds the least key of its leaves.
	size int
	a, b []int32
	live int // positions that hold a job
	// fresh is the first position of the jobs added by the cycle under
	// way (the newcomers), which the tally of the last cycle lacks.
	fresh int
}

// The keys of a pending job (keyOf): a partial cycle with thresholds
// (fa, fb) considers it when a ≤ fa or b ≤ fb.
const (
	keyNone   = math.MaxInt32 // the key is not used: never ≤ a threshold
	keyAlways = -1            // every partial cycle (a reservation, a rising select[], a newcomer)
	keyAll    = keyNone - 1   // threshold: every job in the index
)

// add appends job, after every job in the index, under keys a, b.
func (x *pendIndex) add(job *framework.Job, a, b int32) {
	if len(x.jobs) == x.size {
		x.rebuild(max(2*x.size, 16))
	}
	p := len(x.jobs)
	x.jobs = append(x.jobs, job)
	x.live++
	x.set(p, a, b)
}

// set gives position p keys a, b.
func (x *pendIndex) set(p int, a, b int32) {
	i := x.size + p
	x.a[i], x.b[i] = a, b
	for i > 1 {
		i >>= 1
		x.a[i], x.b[i] = min(x.a[2*i], x.a[2*i+1]), min(x.b[2*i], x.b[2*i+1])
	}
}

// remove makes position p a hole.
func (x *pendIndex) remove(p int) {
	x.jobs[p] = nil
	x.live--
	x.set(p, keyNone, keyNone)
}

// next returns the first position at or after from whose job a cycle
// with thresholds fa, fb considers (a ≤ fa or b ≤ fb), or -1. It climbs
// from the leaf of from to the first node to its right that holds such a
// key, then descends to that node's leftmost such leaf: O(log n).
func (x *pendIndex) next(from int, fa, fb int32) int {
	if from >= len(x.jobs) {
		return -1
	}
	ok := func(i int) bool { return x.a[i] <= fa || x.b[i] <= fb }
	i := x.size + from
	for !ok(i) {
		// The next subtree to the right: up while i is a right child.
		for i&1 == 1 {
			i >>= 1
			if i == 0 {
				return -1
			}
		}
		i++
	}
	for i < x.size {
		i *= 2
		if !ok(i) {
			i++
		}
	}
	return i - x.size
}

// reset empties the index, keeping its memory.
func (x *pendIndex) reset() {
	clear(x.jobs)
	x.jobs = x.jobs[:0]
	x.live, x.fresh = 0, 0
	for i := range x.a {
		x.a[i], x.b[i] = keyNone, keyNone
	}
}

// compact drops the holes once they are the majority, renumbering the
// jobs; a position taken before it does not hold after it.
func (x *pendIndex) compact() {
	if len(x.jobs) >= 64 && 2*x.live < len(x.jobs) {
		x.rebuild(x.size)
	}
}

// rebuild lays the jobs out again without holes, in a tree of size
// leaves (or fewer, down to 16, when they fit in half of it).
func (x *pendIndex) rebuild(size int) {
	oa, ob := x.a, x.b
	osize := x.size
	n, fresh := 0, 0
	for p, j := range x.jobs {
		if p == x.fresh {
			fresh = n
		}
		if j != nil {
			x.jobs[n] = j
			oa[n], ob[n] = oa[osize+p], ob[osize+p] // the leaves, packed at the front
			n++
		}
	}
	if x.fresh >= len(x.jobs) {
		fresh = n
	}
	clear(x.jobs[n:])
	x.jobs = x.jobs[:n]
	for size > 16 && 2*n <= size/2 {
		size /= 2
	}
	x.size = size
	if len(x.a) != 2*size {
		x.a, x.b = make([]int32, 2*size), make([]int32, 2*size)
	}
	// The packed leaves sit below size, where the inner nodes go, and
	// those are computed after: leaves first.
	for p := range size {
		if p < n {
			x.a[size+p], x.b[size+p] = oa[p], ob[p]
		} else {
			x.a[size+p], x.b[size+p] = keyNone, keyNone
		}
	}
	for i := size - 1; i >= 1; i-- {
		x.a[i], x.b[i] = min(x.a[2*i], x.a[2*i+1]), min(x.b[2*i], x.b[2*i+1])
	}
	x.live, x.fresh = n, fresh
}
