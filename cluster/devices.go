package cluster

import (
	"fmt"
	"math"
	"math/bits"
	"strings"

	"github.com/xce-sched/xce/gpureq"
)

// Device binding (docs/gpus.md). A host's GPUs are counted by the
// consumable ngpus_physical like any other resource, and a state that
// tracks devices also knows which of them each job holds: one bitmask per
// host (bit i set: device i is held), in a flat slice indexed by HostID.
// Reserve picks the lowest free devices for a part of an allocation that
// reserves ngpus_physical and records them in it (HostAlloc.GPUs);
// Release frees exactly those. The counter and the bitmask change
// together, so a host's held devices always number its used
// ngpus_physical (CheckInvariants checks it).
//
// States made by NewState, Idle and Clone track devices; a projection
// (Derive, and CopyFrom into it) does not: it plans over counts only, as
// its free amounts are the least over a time window, which no single set
// of devices realizes. An allocation planned there gets its devices when
// it is placed on the live state.

// gpuCount returns the number of devices a holds on its host: its amount
// of ngpus_physical (0 when the cluster has no GPUs), and whether that
// amount is a whole number.
func (s *State) gpuCount(a *HostAlloc) (n int, whole bool) {
	r := s.c.gpuRes
	if r < 0 {
		return 0, true
	}
	v := 0.0
	for _, ra := range a.Res {
		if ra.Res == r {
			v += ra.Amount
		}
	}
	rv := math.Round(v)
	return int(rv), math.Abs(v-rv) <= Epsilon
}

// gpuTotal returns how many devices host h has.
func (s *State) gpuTotal(h HostID) int {
	v := s.c.Hosts[h].Capacity[s.c.gpuRes]
	if v != v {
		return 0
	}
	return int(v)
}

// takeDevices marks the devices a holds as held: a.GPUs when they are
// given and all free, else the lowest free ones, recorded in a.GPUs (a
// new slice: the old one may be shared).
func (s *State) takeDevices(a *HostAlloc) {
	n, _ := s.gpuCount(a)
	if n <= 0 {
		return
	}
	held := s.dev[a.Host]
	if len(a.GPUs) == n {
		if m, ok := s.deviceMask(a.Host, a.GPUs); ok && m&held == 0 {
			s.dev[a.Host] = held | m
			return
		}
	}
	total := s.gpuTotal(a.Host)
	gpus := make([]int, 0, n)
	for i := 0; i < total && len(gpus) < n; i++ {
		if held&(1<<i) == 0 {
			gpus = append(gpus, i)
			held |= 1 << i
		}
	}
	a.GPUs = gpus
	s.dev[a.Host] = held
}

// giveDevices frees the devices a holds.
func (s *State) giveDevices(a *HostAlloc) {
	for _, g := range a.GPUs {
		if g >= 0 && g < gpureq.MaxDevices {
			s.dev[a.Host] &^= 1 << g
		}
	}
}

// deviceMask returns the bitmask of gpus on host h, and false when one is
// out of the host's range or given twice.
func (s *State) deviceMask(h HostID, gpus []int) (uint64, bool) {
	total := s.gpuTotal(h)
	var m uint64
	for _, g := range gpus {
		if g < 0 || g >= total || m&(1<<g) != 0 {
			return 0, false
		}
		m |= 1 << g
	}
	return m, true
}

// devicesFit returns nil when a's devices can be taken on its host: its
// ngpus_physical amount is a whole number and, when a names its devices,
// they are as many, exist on the host, are distinct and are free. It is
// the device part of TakeChecked's check.
func (s *State) devicesFit(a *HostAlloc) error {
	if s.dev == nil {
		return nil
	}
	n, whole := s.gpuCount(a)
	name := s.c.Hosts[a.Host].Name
	switch {
	case !whole:
		return fmt.Errorf("host %s: %s is not a whole number of devices", name, gpureq.Resource)
	case len(a.GPUs) == 0:
		return nil // the count was checked; Reserve picks free ones
	case len(a.GPUs) != n:
		return fmt.Errorf("host %s: %d GPUs named for %d %s", name, len(a.GPUs), n, gpureq.Resource)
	}
	m, ok := s.deviceMask(a.Host, a.GPUs)
	if !ok {
		return fmt.Errorf("host %s: GPUs %v are not distinct devices of its %d", name, a.GPUs, s.gpuTotal(a.Host))
	}
	if busy := m & s.dev[a.Host]; busy != 0 {
		return fmt.Errorf("host %s: GPU %d is held by another job", name, bits.TrailingZeros64(busy))
	}
	return nil
}

// TracksGPUs reports whether s knows which device of each host is held
// (see HostAlloc.GPUs): true for a state of a cluster with GPUs made by
// NewState, Idle or Clone; false for a projection (Derive) and for a
// cluster without GPUs.
func (s *State) TracksGPUs() bool { return s.dev != nil }

// HeldGPUs returns the devices of host h that are held, as a bitmask (bit
// i: device i); 0 when s does not track devices.
func (s *State) HeldGPUs(h HostID) uint64 {
	if s.dev == nil {
		return 0
	}
	return s.dev[h]
}

// checkDevices is CheckInvariants' device part: on every host, the held
// devices exist and number exactly the ngpus_physical in use (a device
// held by two jobs, or freed twice, breaks the count).
func (s *State) checkDevices() error {
	if s.dev == nil {
		return nil
	}
	r := s.c.gpuRes
	for h := range s.c.Hosts {
		held, total := s.dev[h], s.gpuTotal(HostID(h))
		if total < gpureq.MaxDevices && held>>total != 0 {
			return fmt.Errorf("host %s: GPUs %s held, of %d", s.c.Hosts[h].Name, maskList(held), total)
		}
		used := float64(total) - s.Free(HostID(h), r)
		if total == 0 {
			used = 0
		}
		if n := bits.OnesCount64(held); math.Abs(float64(n)-used) > Epsilon {
			return fmt.Errorf("host %s: GPUs %s held (%d), but %v %s in use", s.c.Hosts[h].Name, maskList(held), n, used, gpureq.Resource)
		}
	}
	return nil
}

// maskList renders a device bitmask as "[0 2 3]".
func maskList(m uint64) string {
	var b strings.Builder
	b.WriteByte('[')
	for i := 0; m != 0; i++ {
		if m&1 != 0 {
			if b.Len() > 1 {
				b.WriteByte(' ')
			}
			fmt.Fprint(&b, i)
		}
		m >>= 1
	}
	b.WriteByte(']')
	return b.String()
}
