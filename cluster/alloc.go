package cluster

import (
	"fmt"
	"slices"
)

// HostAlloc is what a job holds on one host: job slots, the total amounts
// of consumables (what its rusage reserves there), and the limit counters
// charged for this part of the job. On a host class (Cluster.IsClass) it
// is a part on Slots of its members, one slot each, and Res is their
// total.
//
// GPUs are the host's devices the job holds, as many as its
// ngpus_physical amount counts; none when it holds none. State.Reserve
// chooses them (the lowest free) when they are not given, and records
// them here; given ones (a running job restored from the event log) are
// kept (docs/gpus.md). A state that does not track devices (a
// projection: State.Derive) leaves them as they are.
type HostAlloc struct {
	Host     HostID
	Slots    int
	Res      []ResAmount
	Counters []CounterAmount
	GPUs     Devices
}

// JobAlloc is a job's allocation: its hosts (distinct, in the order the
// runner claimed them; a host class may appear more than once, each part
// holding other members) and its shared-resource records. A running job of a
// scenario holds one built by RunningAlloc; the runner builds the others.
type JobAlloc struct {
	Hosts  []HostAlloc
	Shared []SharedAmount
}

// Clone returns a deep copy of a.
func (a *JobAlloc) Clone() *JobAlloc {
	var c *JobAlloc
	if len(a.Hosts) == 1 {
		// One host (a job on one host, or on part of a host class): the
		// allocation and its host in one object.
		b := new(oneHostAlloc)
		c, b.alloc.Hosts = &b.alloc, b.host[:]
	} else {
		c = &JobAlloc{Hosts: make([]HostAlloc, len(a.Hosts))}
	}
	c.Shared = slices.Clone(a.Shared)
	for i, h := range a.Hosts {
		c.Hosts[i] = HostAlloc{Host: h.Host, Slots: h.Slots, Res: slices.Clone(h.Res), Counters: slices.Clone(h.Counters), GPUs: h.GPUs}
	}
	return c
}

// oneHostAlloc is a JobAlloc of one host and that host's part, allocated
// together.
type oneHostAlloc struct {
	alloc JobAlloc
	host  [1]HostAlloc
}

// Slots returns the total number of slots of a.
func (a *JobAlloc) Slots() int {
	n := 0
	for _, h := range a.Hosts {
		n += h.Slots
	}
	return n
}

// Take reserves everything a holds.
func (s *State) Take(a *JobAlloc) {
	for i := range a.Hosts {
		s.Reserve(&a.Hosts[i])
	}
	for _, sh := range a.Shared {
		s.ReserveShared(sh.Shared, sh.Amount)
	}
}

// Give releases everything a holds (the inverse of Take).
func (s *State) Give(a *JobAlloc) {
	for i := range a.Hosts {
		s.Release(&a.Hosts[i])
	}
	for _, sh := range a.Shared {
		s.ReleaseShared(sh.Shared, sh.Amount)
	}
}

// Fits returns nil when a can be taken from s without any count going
// negative, else an error naming the host or shared resource that would be
// over-committed. Limit counters are not checked (a running job may exceed
// a limit that was lowered). It reserves nothing: the check is TakeChecked
// followed by Give.
func (s *State) Fits(a *JobAlloc) error {
	if err := s.TakeChecked(a, false); err != nil {
		return err
	}
	s.Give(a)
	return nil
}

// FitsLimits is Fits that also checks the limit counters a charges: the
// test for placing a planned allocation.
func (s *State) FitsLimits(a *JobAlloc) error {
	if err := s.TakeChecked(a, true); err != nil {
		return err
	}
	s.Give(a)
	return nil
}

// TakeChecked reserves a as the allocation runner claims it: host by host,
// each part checked against what is free once the parts before it are
// reserved (so the parts of one job that charge the same limit counter or
// shared resource are checked on their sum, not each on its own), then
// the shared resources. With limits set, the limit counters a charges are
// checked too. An amount of 0 needs nothing, even of a resource the host
// does not define. When s tracks devices, a part's ngpus_physical must be
// a whole number and the GPUs it names (if any) distinct free devices of
// its host; those it does not name are chosen (Reserve). On failure
// nothing is reserved and the error names the host, resource, shared
// resource, limit or device that would be over-committed.
func (s *State) TakeChecked(a *JobAlloc, limits bool) error {
	for i := range a.Hosts {
		if err := s.hostFits(&a.Hosts[i], limits); err != nil {
			for k := i - 1; k >= 0; k-- {
				s.Release(&a.Hosts[k])
			}
			return err
		}
		s.Reserve(&a.Hosts[i])
	}
	for i, sh := range a.Shared {
		if free := s.sharedFree[sh.Shared]; sh.Amount > 0 && !Within(sh.Amount, free) {
			for k := i - 1; k >= 0; k-- {
				s.ReleaseShared(a.Shared[k].Shared, a.Shared[k].Amount)
			}
			for k := len(a.Hosts) - 1; k >= 0; k-- {
				s.Release(&a.Hosts[k])
			}
			return fmt.Errorf("shared resource %s: %v requested, %v free", s.c.Shared[sh.Shared].Name, sh.Amount, free)
		}
		s.ReserveShared(sh.Shared, sh.Amount)
	}
	return nil
}

// hostFits checks one part of an allocation against what is free now.
func (s *State) hostFits(h *HostAlloc, limits bool) error {
	if free := s.FreeSlots(h.Host); h.Slots > free {
		return fmt.Errorf("host %s: %d slots requested, %d free", s.c.Hosts[h.Host].Name, h.Slots, free)
	}
	if s.c.IsClass(h.Host) {
		// Res is the members' total; each takes its share of an idle
		// member (the runner checked it), which Reserve does not take.
		return s.countersFit(h, limits)
	}
	for _, r := range h.Res {
		if free := s.Free(h.Host, r.Res); r.Amount > 0 && !Within(r.Amount, free) {
			return fmt.Errorf("host %s: %v %s requested, %v free", s.c.Hosts[h.Host].Name, r.Amount, s.c.Resources[r.Res], free)
		}
	}
	if err := s.devicesFit(h); err != nil {
		return err
	}
	return s.countersFit(h, limits)
}

// countersFit checks h's limit counters when limits is set.
func (s *State) countersFit(h *HostAlloc, limits bool) error {
	if !limits {
		return nil
	}
	for _, c := range h.Counters {
		if free := s.CounterFree(c.Counter); c.Amount > 0 && !Within(c.Amount, free) {
			return fmt.Errorf("%s: %v requested, %v free", s.counterName(c.Counter), c.Amount, free)
		}
	}
	return nil
}

// RunningAlloc returns what running job j holds: exactly j.Holds when it
// is known (a live snapshot), else, on each host of j.RunningOn, its slots
// and what the rusage of each host resource reserves there by the
// resource's method (Reserve): slots × the amount per task, the amount per
// host, or the amount once on the job's first host; and once per job the
// rusage of each shared resource. A scenario does not say which compound
// term or which alternative runs where, so for those the reservation is
// conservative: per host and resource, the largest amount of the terms
// (of any alternative) that host could serve, a term whose host
// resources the host has, in that amount (a host without mem serves no
// term of rusage[mem=1000], and is charged none of it); of every term
// when the host could serve none (the snapshot then over-commits, and
// says so); per job, the largest total over the alternatives of a shared
// resource's rusage summed over its terms. A running job is thus never
// under-counted (docs/scenario.md). Rusage on names that are neither host
// nor shared resources is ignored here; the runner reports it as a bad
// request for pending jobs. A job that is not running (empty RunningOn)
// holds nothing.
func (c *Cluster) RunningAlloc(j *Job) *JobAlloc {
	if j.Holds != nil {
		return j.Holds
	}
	a := &JobAlloc{Hosts: make([]HostAlloc, 0, len(j.RunningOn))}
	if len(j.RunningOn) == 0 {
		return a // a pending job holds nothing
	}
	var terms [][]float64 // per term, its amount of each host resource
	shared := make([]float64, len(c.Shared))
	if j.Req != nil {
		for _, alt := range j.Req.Alternatives {
			altShared := make([]float64, len(c.Shared))
			for _, t := range alt.Terms {
				amount := make([]float64, len(c.Resources))
				for _, ru := range t.Rusage {
					if r, ok := c.ResourceByName(ru.Name); ok {
						amount[r] = max(amount[r], ru.Value)
					} else if sh, ok := c.SharedByName(ru.Name); ok {
						altShared[sh] += ru.Value
					}
				}
				terms = append(terms, amount)
			}
			for i, v := range altShared {
				shared[i] = max(shared[i], v)
			}
		}
	}
	for i, v := range shared {
		if v > 0 {
			a.Shared = append(a.Shared, SharedAmount{SharedID(i), v})
		}
	}
	for i, hs := range j.RunningOn {
		ha := HostAlloc{Host: hs.Host, Slots: hs.Slots}
		reserve := func(r int, v float64) float64 {
			switch c.Reserve(ResID(r)) {
			case PerTask:
				return v * float64(hs.Slots)
			case PerJob:
				if i > 0 {
					return 0
				}
			}
			return v
		}
		// The terms the host could serve (it has what each reserves), or
		// every term when it could serve none.
		most := largest(terms, func(amount []float64) bool {
			for r, v := range amount {
				if need := reserve(r, v); need > 0 && !Within(need, c.Hosts[hs.Host].Capacity[r]) {
					return false
				}
			}
			return true
		})
		if most == nil {
			most = largest(terms, func([]float64) bool { return true })
		}
		for r, v := range most {
			if v := reserve(r, v); v > 0 {
				ha.Res = append(ha.Res, ResAmount{ResID(r), v})
			}
		}
		a.Hosts = append(a.Hosts, ha)
	}
	return a
}

// largest returns, per resource, the largest amount of the terms (each
// its amount per resource) that keep holds, nil when none does.
func largest(terms [][]float64, keep func(amount []float64) bool) []float64 {
	var most []float64
	for _, amount := range terms {
		if !keep(amount) {
			continue
		}
		if most == nil {
			most = make([]float64, len(amount))
		}
		for r, v := range amount {
			most[r] = max(most[r], v)
		}
	}
	return most
}

// counterName names counter id for an error: its limit, or, for a
// plugin's own counter (no limit), its reason code.
func (s *State) counterName(id CounterID) string {
	c := s.Counter(id)
	if c.Limit >= 0 && int(c.Limit) < len(s.c.Limits) {
		return "limit " + s.c.Limits[c.Limit].Name
	}
	return fmt.Sprintf("counter %d (reason %d)", id, c.Reason)
}
