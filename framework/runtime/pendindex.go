package runtime

import (
	"math"

	"github.com/xce-sched/xce/framework"
)

// pendIndex holds one queue's pending jobs in pending order, each under
// keys that say in which partial cycles it must be considered (keyOf), in
// a segment tree of the keys' extremes: a partial cycle finds the next job
// it must consider in O(log n) and never touches the jobs it leaves out,
// so that it costs what it considers, not the queue (issue 15).
//
// Positions only grow between compactions: a job that leaves the queue
// leaves a hole (noKeys), and compact renumbers once holes are the
// majority, so that the work is amortized O(1) per job.
type pendIndex struct {
	jobs []*framework.Job // per position: the job, nil for a hole
	// sizes, per position: what a job asks for (jobSize), read where
	// reaching the job's spec would cost a cache miss a job.
	sizes []jobSize
	// size is a power of two, at least len(jobs); node i of the tree is
	// k[i], its children 2i and 2i+1, the leaf of position p is size+p. A
	// node holds the extremes of its leaves' keys (keys.merge).
	size int
	k    []keys
	live int // positions that hold a job
	// fresh is the first position of the jobs added by the cycle under
	// way (the newcomers), which the tally of the last cycle lacks.
	fresh int
}

// keys say when a partial cycle considers a pending job (keyOf): a, b
// for a job that stands unless it is volatile, new or fewer slots than it
// needs are free (a: at its turn, b: at the cycle's start); need and est
// for a job held for a reservation (Priority), which stands while it
// still fits in the slots free and still cannot start without delaying
// the reservations (limits.takes). An inner node holds the least a, b,
// est and least need, and the largest need, of its leaves.
type keys struct {
	a, b             int32
	needMax, needMin int32 // a held job's slots (needMax -1, needMin keyNone: none)
	est              int32 // a held job's estimate, seconds (keyNone: none)
}

// held sets k to the keys of a job of size z held for reservations
// (Priority): its slots and estimate, nothing else (field by field, as
// merge).
func (k *keys) held(z *jobSize) {
	k.a, k.b, k.needMax, k.needMin, k.est = keyNone, keyNone, max(z.tasks, z.tasksMin), z.tasks, z.est
}

// noKeys are a hole's: no cycle considers it.
var noKeys = keys{a: keyNone, b: keyNone, needMax: -1, needMin: keyNone, est: keyNone}

// merge sets u to the keys of a node over children with keys l and r,
// field by field (a struct copied whole goes through memory, a stall in
// the loops that fix the tree), and reports whether that changed u.
func (u *keys) merge(l, r *keys) bool {
	a, b, hi, lo, est := min(l.a, r.a), min(l.b, r.b), max(l.needMax, r.needMax), min(l.needMin, r.needMin), min(l.est, r.est)
	if a == u.a && b == u.b && hi == u.needMax && lo == u.needMin && est == u.est {
		return false
	}
	u.a, u.b, u.needMax, u.needMin, u.est = a, b, hi, lo, est
	return true
}

// limits are what a partial cycle considers at a job's turn: a job with
// keys k when takes(k).
type limits struct {
	a, b int32 // k.a ≤ a or k.b ≤ b
	// A held job whose slots are more than free (no longer held: it pends
	// for want of slots), whose estimate is at most est, or whose slots
	// are at most need (either may start now).
	free, est, need int32
}

// takes reports whether a node with keys k holds a job the cycle
// considers.
func (l *limits) takes(k *keys) bool {
	return k.a <= l.a || k.b <= l.b || k.needMax > l.free || k.est <= l.est || k.needMin <= l.need
}

// jobSize is what a pending job asks for, as its keys compare it: its
// fewest tasks (minTasks), its spec's TasksMin and its estimate
// (seconds), each clamped (clampKey).
type jobSize struct {
	tasks, tasksMin, est int32
}

// The values of keys and limits.
const (
	keyNone   = math.MaxInt32 // a key not used, never ≤ a limit
	keyAlways = -1            // every partial cycle (a reservation, a rising select[], a newcomer)
	keyAll    = keyNone - 1   // a limit every used key is under
)

// Limits of the cycles that consider the volatile jobs only (quiet) and
// every job.
var (
	quietLimits = limits{a: keyAlways, b: keyAlways, free: keyAll, est: -1, need: -1}
	allLimits   = limits{a: keyAll, b: keyAll, free: -1, est: keyAll, need: keyAll}
)

// add appends job, of size z, after every job in the index, under keys k.
func (x *pendIndex) add(job *framework.Job, z jobSize, k keys) {
	if len(x.jobs) == x.size {
		x.rebuild()
	}
	p := len(x.jobs)
	x.jobs = append(x.jobs, job)
	x.sizes = append(x.sizes, z)
	x.live++
	x.set(p, k)
}

// set gives position p keys k.
func (x *pendIndex) set(p int, k keys) {
	i := x.size + p
	if x.k[i] == k {
		return
	}
	x.k[i] = k
	for i > 1 {
		i >>= 1
		if !x.k[i].merge(&x.k[2*i], &x.k[2*i+1]) {
			return // and so every node above
		}
	}
}

// setLeaf gives position p keys k and leaves the nodes above as they
// were: the tree holds again after fix over every position so set.
func (x *pendIndex) setLeaf(p int, k keys) {
	x.k[x.size+p] = k
}

// removeLeaf makes position p a hole, leaving the nodes above to fix.
func (x *pendIndex) removeLeaf(p int) {
	x.jobs[p] = nil
	x.live--
	x.setLeaf(p, noKeys)
}

// fix brings the nodes above the leaves of positions dirty (ascending,
// each once or more) up to date, a level at a time, each node once, and
// no higher than the nodes its new value changes: for a cycle's k changes
// among n jobs, O(k log(n/k)) merges rather than k log n. It uses dirty
// as scratch.
func (x *pendIndex) fix(dirty []int) {
	for i := range dirty {
		dirty[i] += x.size
	}
	for len(dirty) > 0 && dirty[0] > 1 {
		w, prev := 0, -1
		for _, i := range dirty {
			up := i >> 1
			if up == prev {
				continue
			}
			prev = up
			if x.k[up].merge(&x.k[2*up], &x.k[2*up+1]) {
				dirty[w] = up
				w++
			}
		}
		dirty = dirty[:w]
	}
}

// next returns the first position at or after from whose job l takes, or
// -1. It climbs from the leaf of from to the first node to its right
// that holds such a job, then descends to that node's leftmost such leaf:
// O(log n).
func (x *pendIndex) next(from int, l *limits) int {
	if from >= len(x.jobs) {
		return -1
	}
	i := x.size + from
	for !l.takes(&x.k[i]) {
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
		if !l.takes(&x.k[i]) {
			i++
		}
	}
	return i - x.size
}

// reset empties the index, keeping its memory.
func (x *pendIndex) reset() {
	clear(x.jobs)
	x.jobs, x.sizes = x.jobs[:0], x.sizes[:0]
	x.live, x.fresh = 0, 0
	for i := range x.k {
		x.k[i] = noKeys
	}
}

// compact drops the holes once they are the majority, renumbering the
// jobs; a position taken before it does not hold after it.
func (x *pendIndex) compact() {
	if len(x.jobs) >= 64 && 2*x.live < len(x.jobs) {
		x.rebuild()
	}
}

// rebuild lays the jobs out again without holes, in a tree of the
// fewest leaves (a power of two, 16 or more) that leave room for a
// quarter more jobs: a rebuild costs O(jobs), and comes after as many
// adds or removals as a fraction of them.
func (x *pendIndex) rebuild() {
	old, osize := x.k, x.size
	n, fresh := 0, 0
	for p, j := range x.jobs {
		if p == x.fresh {
			fresh = n
		}
		if j != nil {
			x.jobs[n], x.sizes[n] = j, x.sizes[p]
			old[n] = old[osize+p] // the leaves, packed below the old leaves
			n++
		}
	}
	if x.fresh >= len(x.jobs) {
		fresh = n
	}
	clear(x.jobs[n:])
	x.jobs, x.sizes = x.jobs[:n], x.sizes[:n]
	size := 16
	for size < n+n/4+1 {
		size *= 2
	}
	x.size = size
	if len(x.k) != 2*size {
		x.k = make([]keys, 2*size)
	}
	// The packed leaves sit below size, where the inner nodes go, and
	// those are computed after: leaves first.
	for p := range size {
		if p < n {
			x.k[size+p] = old[p]
		} else {
			x.k[size+p] = noKeys
		}
	}
	for i := size - 1; i >= 1; i-- {
		x.k[i].merge(&x.k[2*i], &x.k[2*i+1])
	}
	x.live, x.fresh = n, fresh
}
