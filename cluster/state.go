package cluster

import (
	"fmt"
	"slices"
)

// Epsilon is the tolerance of every comparison of an amount with what is
// free (MB, license units, limit counters): decimal fractions such as 0.1
// are not exact in binary, and three reservations of 0.1 must fit in 0.3.
const Epsilon = 1e-9

// Within reports whether amount fits in free, with tolerance Epsilon. A NaN
// free amount (the host does not define the resource) holds nothing.
func Within(amount, free float64) bool { return amount <= free+Epsilon }

// ResAmount is an amount of one host consumable resource (mem in MB).
type ResAmount struct {
	Res    ResID
	Amount float64
}

// SharedAmount is an amount of one shared resource.
type SharedAmount struct {
	Shared SharedID
	Amount float64
}

// State is the mutable part of a cluster: free slots and free consumables
// per host, and the free amount of every shared resource. Per-host values
// live in one flat vector per host (the select view, laid out by Schema), so
// a compiled select expression reads them without any lookup.
//
// Only the allocation runner and the committers call the mutating methods;
// everybody else reads. The mutators check nothing: the runner checks
// before it reserves, and Release is exactly the inverse of Reserve.
type State struct {
	c          *Cluster
	ncols      int
	vals       []float64 // len(Hosts) * ncols
	sharedFree []float64 // indexed by SharedID
	counters   []Counter // indexed by CounterID; limit instances, created lazily
	freeSlots  int       // Σ free slots over all hosts
	// base is the state this one was derived from (a projection): counters
	// created there after the derivation appear here, unused, on first use.
	base *State
	sync syncState // change tracking between a base and its derived states
	// free groups the hosts by free slots (freeindex.go); limits are the
	// cluster's static maxima, shared by all its states.
	free   freeIndex
	limits *clusterLimits
	// dev is the device binding (devices.go): per host, the bitmask of
	// its GPUs that are held; nil when s does not track devices.
	dev []Devices
}

// CounterID identifies a counter of State: one resource of one limit
// instance.
type CounterID int32

// Counter is a usage counter with a maximum, such as the slots of one
// per-user instance of a limit. Used may exceed Max when the limit was
// lowered below what running jobs already hold; nothing new is admitted then.
type Counter struct {
	Used  float64
	Max   float64
	Limit int32 // index in Cluster.Limits, for pending reasons; -1 for a plugin's own
	// Reason, for a counter a plugin owns (NewOwnCounters), is the host
	// reason (a framework.Reason code) a full one gives; 0 for a limit's.
	Reason uint8
}

// CounterAmount is an amount of one counter.
type CounterAmount struct {
	Counter CounterID
	Amount  float64
}

// NewState returns the state of cluster c with nothing running.
func NewState(c *Cluster) *State {
	s := &State{
		c:          c,
		ncols:      c.schema.NumCols(),
		vals:       make([]float64, len(c.Hosts)*c.schema.NumCols()),
		sharedFree: make([]float64, len(c.Shared)),
		limits:     newClusterLimits(c),
	}
	for h := range c.Hosts {
		c.staticVals(HostID(h), s.HostVals(HostID(h)))
		s.freeSlots += c.Hosts[h].Slots
	}
	for i, sh := range c.Shared {
		s.sharedFree[i] = sh.Total
	}
	if c.gpuRes >= 0 {
		s.dev = make([]Devices, len(c.Hosts))
	}
	return s
}

// Cluster returns the cluster this state belongs to.
func (s *State) Cluster() *Cluster { return s.c }

// HostVals returns host h's value vector (columns as Schema describes). It
// aliases the state: callers must not modify it.
func (s *State) HostVals(h HostID) []float64 {
	o := int(h) * s.ncols
	return s.vals[o : o+s.ncols : o+s.ncols]
}

// FreeSlots returns the number of unused job slots on host h (on a host
// class: its idle members).
func (s *State) FreeSlots(h HostID) int {
	return int(s.vals[int(h)*s.ncols+ColSlots])
}

// TotalFreeSlots returns the number of unused slots over all hosts.
func (s *State) TotalFreeSlots() int { return s.freeSlots }

// Free returns the unused amount of consumable r on host h (NaN when the
// host does not define r); on a host class, an idle member's.
func (s *State) Free(h HostID, r ResID) float64 {
	return s.vals[int(h)*s.ncols+ResCol(r)]
}

// SharedFree returns the unreserved amount of shared resource id.
func (s *State) SharedFree(id SharedID) float64 { return s.sharedFree[id] }

// Reserve takes what a holds on its host: slots, consumables and limit
// counters and, when s tracks devices, the GPUs a's ngpus_physical counts:
// a.GPUs when they are given and free, else the lowest free devices,
// which it records in a.GPUs (docs/gpus.md).
//
// On a host class (Cluster.IsClass) a.Slots counts members, and a.Res,
// their total, is not taken from the free amounts, which stay those of one
// idle member: a member that takes a task has no slot left.
func (s *State) Reserve(a *HostAlloc) {
	s.touch(a.Host)
	v := s.vals[int(a.Host)*s.ncols:]
	v[ColSlots] -= float64(a.Slots)
	s.freeSlots -= a.Slots
	if !s.c.IsClass(a.Host) {
		for _, r := range a.Res {
			v[ResCol(r.Res)] -= r.Amount
		}
	}
	for _, c := range a.Counters {
		s.counter(c.Counter).Used += c.Amount
	}
	if s.dev != nil {
		s.takeDevices(a)
	}
	s.slotsChanged(a.Host)
}

// Release gives back what Reserve(a) took, the devices a.GPUs included
// (a.GPUs is left as it is), and on a host class only the members.
func (s *State) Release(a *HostAlloc) {
	s.touch(a.Host)
	v := s.vals[int(a.Host)*s.ncols:]
	v[ColSlots] += float64(a.Slots)
	s.freeSlots += a.Slots
	if !s.c.IsClass(a.Host) {
		for _, r := range a.Res {
			v[ResCol(r.Res)] += r.Amount
		}
	}
	for _, c := range a.Counters {
		s.counter(c.Counter).Used -= c.Amount
	}
	if s.dev != nil {
		s.giveDevices(a)
	}
	s.slotsChanged(a.Host)
}

// ReserveShared takes amount of shared resource id.
func (s *State) ReserveShared(id SharedID, amount float64) { s.sharedFree[id] -= amount }

// ReleaseShared gives back what ReserveShared took.
func (s *State) ReleaseShared(id SharedID, amount float64) { s.sharedFree[id] += amount }

// NewCounters appends one counter per entry of max, all unused and owned
// by limit, and returns the ID of the first; the others follow in order.
// Creating counters is not a change of allocation state: Equal treats a
// counter that exists on one side only as unused.
func (s *State) NewCounters(limit int32, max []float64) CounterID {
	id := CounterID(len(s.counters))
	for _, m := range max {
		s.counters = append(s.counters, Counter{Max: m, Limit: limit})
	}
	return id
}

// NewOwnCounters appends one counter per entry of max for a plugin that
// is not a limit (the exclusive preparer's per-host counters): a host
// whose counter a bucket would overfill refuses it with host reason
// reason (a framework.Reason code).
func (s *State) NewOwnCounters(reason uint8, max []float64) CounterID {
	id := CounterID(len(s.counters))
	for _, m := range max {
		s.counters = append(s.counters, Counter{Max: m, Limit: -1, Reason: reason})
	}
	return id
}

// Counter returns counter id.
func (s *State) Counter(id CounterID) Counter { return *s.counter(id) }

// counter returns counter id, first catching up with counters created in
// the base state since this one was derived.
func (s *State) counter(id CounterID) *Counter {
	for int(id) >= len(s.counters) && s.base != nil && len(s.counters) < len(s.base.counters) {
		c := s.base.counters[len(s.counters)]
		c.Used = 0 // created after the derivation: nothing reserved here yet
		s.counters = append(s.counters, c)
	}
	return &s.counters[id]
}

// NumCounters returns how many counters exist.
func (s *State) NumCounters() int { return len(s.counters) }

// CounterFree returns how much of counter id is left (may be negative).
func (s *State) CounterFree(id CounterID) float64 {
	c := s.counter(id)
	return c.Max - c.Used
}

// Clone returns a deep copy of s (the held devices included).
func (s *State) Clone() *State {
	return &State{c: s.c, ncols: s.ncols, vals: slices.Clone(s.vals), sharedFree: slices.Clone(s.sharedFree), counters: slices.Clone(s.counters), freeSlots: s.freeSlots, limits: s.limits, dev: slices.Clone(s.dev)}
}

// Equal reports whether s and o hold the same counters (NaN equals NaN)
// and, when both track devices, the same devices. A limit counter present
// in only one of them must be unused.
func (s *State) Equal(o *State) bool {
	eq := func(a, b float64) bool { return a == b || (a != a && b != b) }
	if s.c != o.c || !slices.EqualFunc(s.vals, o.vals, eq) || !slices.EqualFunc(s.sharedFree, o.sharedFree, eq) {
		return false
	}
	if s.dev != nil && o.dev != nil && !slices.Equal(s.dev, o.dev) {
		return false
	}
	a, b := s.counters, o.counters
	if len(a) > len(b) {
		a, b = b, a
	}
	for i := range b {
		if i < len(a) {
			if a[i] != b[i] {
				return false
			}
		} else if b[i].Used != 0 {
			return false
		}
	}
	return true
}

// CheckInvariants returns an error naming the first host or shared resource
// whose free amount is negative or above its total, i.e. over-committed or
// released twice, or, when s tracks devices, the first host whose held
// GPUs do not exist or do not number the ngpus_physical in use (a device
// held by two jobs at once, or freed twice).
func (s *State) CheckInvariants() error {
	for h := range s.c.Hosts {
		host := &s.c.Hosts[h]
		v := s.HostVals(HostID(h))
		if v[ColSlots] < 0 || v[ColSlots] > float64(host.Slots) { // slots are whole numbers
			return fmt.Errorf("host %s: %v free slots of %d", host.Name, v[ColSlots], host.Slots)
		}
		for r, name := range s.c.Resources {
			f, total := v[ResCol(ResID(r))], host.Capacity[r]
			if f < -Epsilon || f > total+Epsilon {
				return fmt.Errorf("host %s: %v free %s of %v", host.Name, f, name, total)
			}
		}
	}
	for i, sh := range s.c.Shared {
		if f := s.sharedFree[i]; f < -Epsilon || f > sh.Total+Epsilon {
			return fmt.Errorf("shared resource %s: %v free of %v", sh.Name, f, sh.Total)
		}
	}
	for i, c := range s.counters {
		if c.Used < -Epsilon {
			return fmt.Errorf("%s: used %v", s.counterName(CounterID(i)), c.Used)
		}
	}
	return s.checkDevices()
}
