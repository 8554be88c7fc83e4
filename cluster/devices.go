package cluster

import (
	"fmt"
	"math"
	"math/bits"

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

// Devices is a set of device indices of one host: bit i is device i, 0 …
// gpureq.MaxDevices-1. A flat value, so an allocation's devices cost no
// allocation.
type Devices uint64

// DevicesOf returns the set of the indices list holds, and false when one
// is outside 0 … gpureq.MaxDevices-1 or given twice.
func DevicesOf(list []int) (Devices, bool) {
	var d Devices
	for _, g := range list {
		if g < 0 || g >= gpureq.MaxDevices || d&(1<<g) != 0 {
			return 0, false
		}
		d |= 1 << g
	}
	return d, true
}

// Len returns the number of devices in d.
func (d Devices) Len() int { return bits.OnesCount64(uint64(d)) }

// List returns the indices in d, ascending; nil when d is empty.
func (d Devices) List() []int {
	var out []int
	for m := uint64(d); m != 0; m &= m - 1 {
		out = append(out, bits.TrailingZeros64(m))
	}
	return out
}

// String renders d as "[0 2 3]".
func (d Devices) String() string { return fmt.Sprint(d.List()) }

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

// onHost reports whether every device of d exists on host h.
func (s *State) onHost(h HostID, d Devices) bool {
	total := s.gpuTotal(h)
	return total >= gpureq.MaxDevices || uint64(d)>>total == 0
}

// takeDevices marks the devices a holds as held: a.GPUs when they are
// given (as many as it counts, on the host, all free), else the lowest
// free ones, which it records in a.GPUs.
func (s *State) takeDevices(a *HostAlloc) {
	n, _ := s.gpuCount(a)
	if n <= 0 {
		return
	}
	held := s.dev[a.Host]
	if a.GPUs.Len() == n && s.onHost(a.Host, a.GPUs) && a.GPUs&held == 0 {
		s.dev[a.Host] = held | a.GPUs
		return
	}
	total := s.gpuTotal(a.Host)
	var got Devices
	for i := 0; i < total && got.Len() < n; i++ {
		if held&(1<<i) == 0 {
			got |= 1 << i
		}
	}
	a.GPUs = got
	s.dev[a.Host] = held | got
}

// giveDevices frees the devices a holds.
func (s *State) giveDevices(a *HostAlloc) { s.dev[a.Host] &^= a.GPUs }

// devicesFit returns nil when a's devices can be taken on its host: its
// ngpus_physical amount is a whole number and, when a names its devices,
// they are as many, exist on the host and are free. It is the device part
// of TakeChecked's check.
func (s *State) devicesFit(a *HostAlloc) error {
	if s.dev == nil {
		return nil
	}
	n, whole := s.gpuCount(a)
	name := s.c.Hosts[a.Host].Name
	switch {
	case !whole:
		return fmt.Errorf("host %s: %s is not a whole number of devices", name, gpureq.Resource)
	case a.GPUs == 0:
		return nil // the count was checked; Reserve picks free ones
	case a.GPUs.Len() != n:
		return fmt.Errorf("host %s: %d GPUs named for %d %s", name, a.GPUs.Len(), n, gpureq.Resource)
	case !s.onHost(a.Host, a.GPUs):
		return fmt.Errorf("host %s: GPUs %v are not all among its %d", name, a.GPUs, s.gpuTotal(a.Host))
	}
	if busy := a.GPUs & s.dev[a.Host]; busy != 0 {
		return fmt.Errorf("host %s: GPU %d is held by another job", name, bits.TrailingZeros64(uint64(busy)))
	}
	return nil
}

// TracksGPUs reports whether s knows which device of each host is held
// (see HostAlloc.GPUs): true for a state of a cluster with GPUs made by
// NewState, Idle or Clone; false for a projection (Derive) and for a
// cluster without GPUs.
func (s *State) TracksGPUs() bool { return s.dev != nil }

// HeldGPUs returns the devices of host h that are held; none when s does
// not track devices.
func (s *State) HeldGPUs(h HostID) Devices {
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
		if !s.onHost(HostID(h), held) {
			return fmt.Errorf("host %s: GPUs %v held, of %d", s.c.Hosts[h].Name, held, total)
		}
		used := float64(total) - s.Free(HostID(h), r)
		if total == 0 {
			used = 0
		}
		if n := held.Len(); math.Abs(float64(n)-used) > Epsilon {
			return fmt.Errorf("host %s: GPUs %v held (%d), but %v %s in use", s.c.Hosts[h].Name, held, n, used, gpureq.Resource)
		}
	}
	return nil
}
