package cluster

import (
	"math"
	"math/bits"
)

// The free-slot index groups hosts by how many slots they have free, in
// power-of-two levels, so that an allocator that wants the hosts with the
// most free slots (largest-first sizing of a job without span[]) reads a
// few hosts instead of all of them. It is kept up to date by every change
// of a host's free slots, and built lazily: a state that is copied whole
// (Clone, CopyFrom) drops it and rebuilds it on first use.

// FreeIndexHosts is the cluster size from which the free-slot index pays
// for its upkeep; allocators scan the hosts of smaller clusters instead
// (on 100 hosts a scan costs less than keeping the index of a projection
// that replays thousands of events).
const FreeIndexHosts = 1024

// freeIndex is the free-slot index of one state.
type freeIndex struct {
	live  bool
	level []uint8    // per host: its level
	pos   []int32    // per host: its position in lists[level]
	lists [][]HostID // per level: its hosts, in no particular order
	// moves counts the hosts moved since the index was last read. A state
	// that changes much more than it is read (a projection replaying
	// events) drops its index rather than keep it up to date, and rebuilds
	// it when next read: upkeep costs at most O(hosts) per read.
	moves int
}

// freeLevel returns the level of a host with free free slots: 0 for a full
// host, else bits.Len(free), so that level k ≥ 1 holds 2^(k-1) … 2^k − 1.
func freeLevel(free float64) uint8 {
	if !(free >= 1) {
		return 0
	}
	return uint8(bits.Len64(uint64(free)))
}

// NumFreeLevels returns how many free-slot levels there are: level k ≥ 1
// holds the hosts with 2^(k−1) to 2^k − 1 free slots, level 0 the full
// hosts; NumFreeLevels()-1 is the highest level any host can reach.
func (s *State) NumFreeLevels() int { return int(freeLevel(float64(s.limits.maxSlots))) + 1 }

// FreeLevelUpper returns the most free slots a host of level k can have:
// 0 for level 0, else 2^k − 1 (math.MaxInt when that is beyond int).
func FreeLevelUpper(k int) int {
	switch {
	case k <= 0:
		return 0
	case k >= bits.UintSize-1:
		return math.MaxInt
	}
	return 1<<k - 1
}

// HostsAtFreeLevel returns the hosts of free-slot level k (see
// NumFreeLevels), in an order that depends only on the history of changes
// (deterministic, not host order). The slice aliases the state: callers
// must not modify it nor keep it across a change of the state.
func (s *State) HostsAtFreeLevel(k int) []HostID {
	ix := s.freeIndex()
	if k < 0 || k >= len(ix.lists) {
		return nil
	}
	return ix.lists[k]
}

// MaxSlots returns the most slots any host of the cluster has (a member of
// a host class has one).
func (s *State) MaxSlots() int { return s.limits.maxSlots }

// MaxTotal returns the largest total of consumable r on any host (0 when
// no host defines it): no host can ever have more of r free.
func (s *State) MaxTotal(r ResID) float64 { return s.limits.maxTotal[r] }

// clusterLimits are the static maxima of a cluster, shared by its states.
type clusterLimits struct {
	maxSlots int
	maxTotal []float64 // per ResID
}

func newClusterLimits(c *Cluster) *clusterLimits {
	l := &clusterLimits{maxTotal: make([]float64, len(c.Resources))}
	for h := range c.Hosts {
		l.maxSlots = max(l.maxSlots, c.Hosts[h].MemberSlots())
		for r, v := range c.Hosts[h].Capacity {
			if v > l.maxTotal[r] { // NaN (undefined) never is
				l.maxTotal[r] = v
			}
		}
	}
	return l
}

// levelOf returns host h's level now (never above the highest level).
func (s *State) levelOf(h HostID) uint8 {
	return min(freeLevel(s.vals[int(h)*s.ncols+ColSlots]), uint8(len(s.free.lists)-1))
}

// freeIndex returns s's index, building it when it is not live.
func (s *State) freeIndex() *freeIndex {
	ix := &s.free
	if ix.live {
		ix.moves = 0
		return ix
	}
	n := len(s.c.Hosts)
	if ix.level == nil {
		ix.level = make([]uint8, n)
		ix.pos = make([]int32, n)
		ix.lists = make([][]HostID, s.NumFreeLevels())
	}
	for k := range ix.lists {
		ix.lists[k] = ix.lists[k][:0]
	}
	for h := range n {
		k := s.levelOf(HostID(h))
		ix.level[h], ix.pos[h] = k, int32(len(ix.lists[k]))
		ix.lists[k] = append(ix.lists[k], HostID(h))
	}
	ix.live, ix.moves = true, 0
	return ix
}

// slotsChanged moves host h to the level of its current free slots, when
// the index is live.
func (s *State) slotsChanged(h HostID) {
	if s.free.live {
		s.moveHost(h)
	}
}

func (s *State) moveHost(h HostID) {
	ix := &s.free
	k := s.levelOf(h)
	old := ix.level[h]
	if k == old {
		return
	}
	if ix.moves++; ix.moves > len(ix.level)/4+64 {
		ix.live = false
		return
	}
	// Swap-remove h from its old level, append it to the new one.
	l := ix.lists[old]
	p, last := ix.pos[h], l[len(l)-1]
	l[p], ix.pos[last] = last, p
	ix.lists[old] = l[:len(l)-1]
	ix.level[h], ix.pos[h] = k, int32(len(ix.lists[k]))
	ix.lists[k] = append(ix.lists[k], h)
}

// dropFreeIndex marks the index stale after a whole copy of the values.
func (s *State) dropFreeIndex() { s.free.live = false }

// checkFreeIndex returns false when the live index disagrees with the free
// slots (for tests).
func (s *State) checkFreeIndex() bool {
	ix := &s.free
	if !ix.live {
		return true
	}
	seen := 0
	for k, l := range ix.lists {
		for p, h := range l {
			if int(ix.level[h]) != k || int(ix.pos[h]) != p || s.levelOf(h) != uint8(k) {
				return false
			}
			seen++
		}
	}
	return seen == len(s.c.Hosts)
}
