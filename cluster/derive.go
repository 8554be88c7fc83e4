package cluster

// Derived states are the scratch states of projections (backfilling plans
// the future on them, many times per cycle). Copying a whole state per plan
// costs O(hosts), which at 10,000 hosts dominates; instead, a base state
// logs the hosts it changes, a derived state remembers the hosts it changed
// itself, and CopyFrom(base) copies only those rows.

// syncState is the change tracking of a state: on a base, the log of hosts
// it changed since the log's generation began; on a derived state, its own
// changed hosts and how far into its base's log it is synced.
type syncState struct {
	// Base side.
	log    []HostID
	logGen int
	logged bool // some state was derived from this one: keep a log

	// Derived side.
	dirty   []HostID
	isDirty []bool
	gen     int // the base log generation this state is synced to; -1: not synced
	pos     int // the base log position it is synced to
}

// touch records that host h's row changed.
func (s *State) touch(h HostID) {
	y := &s.sync
	if y.logged {
		if len(y.log) >= 4*len(s.c.Hosts)+64 {
			// Derived states this far behind copy everything anyway.
			y.log, y.logGen = y.log[:0], y.logGen+1
		}
		y.log = append(y.log, h)
	}
	if y.isDirty != nil && !y.isDirty[h] {
		y.isDirty[h] = true
		y.dirty = append(y.dirty, h)
	}
}

// Derive returns a copy of s for projections (backfill reservations): it
// shares nothing with s, sees limit counters that s creates later, and
// re-syncs with s cheaply (CopyFrom copies only the rows that changed on
// either side). It does not track devices (devices.go): what it plans
// holds GPUs by count only.
func (s *State) Derive() *State {
	d := s.Clone()
	d.dev = nil
	d.base = s
	d.sync.gen = -1
	if len(s.c.Hosts) >= trackHosts {
		s.sync.logged = true
		d.sync.isDirty = make([]bool, len(s.c.Hosts))
		d.sync.gen, d.sync.pos = s.sync.logGen, len(s.sync.log)
	}
	return d
}

// trackHosts is the cluster size from which derived states re-sync by
// changed rows; below it a whole copy is cheaper than the bookkeeping.
const trackHosts = 1024

// Idle returns the state of s's cluster with nothing running and no limit
// counter used, which still sees the counters s creates (unused). It is
// the "could this ever run?" state.
func (s *State) Idle() *State {
	d := NewState(s.c)
	d.base = s
	return d
}

// CopyFrom makes s a copy of o (both of the same cluster), reusing s's
// buffers. s keeps its base. When o is s's base and s is synced with it,
// only the rows either changed since are copied. s keeps tracking devices
// only if it did and o does (a copy of a projection does not).
func (s *State) CopyFrom(o *State) {
	y := &s.sync
	changed := len(y.dirty) + len(o.sync.log) - y.pos
	if o == s.base && y.isDirty != nil && y.gen == o.sync.logGen && changed < len(s.c.Hosts)/4 {
		for _, h := range y.dirty {
			s.copyRow(o, h)
			y.isDirty[h] = false
		}
		for _, h := range o.sync.log[y.pos:] {
			s.copyRow(o, h)
		}
	} else {
		s.vals = append(s.vals[:0], o.vals...)
		s.dropFreeIndex()
		for _, h := range y.dirty {
			y.isDirty[h] = false
		}
	}
	y.dirty = y.dirty[:0]
	y.gen, y.pos = -1, 0
	if o == s.base {
		y.gen, y.pos = o.sync.logGen, len(o.sync.log)
	}
	s.sharedFree = append(s.sharedFree[:0], o.sharedFree...)
	s.counters = append(s.counters[:0], o.counters...)
	s.freeSlots = o.freeSlots
	if s.dev != nil {
		if o.dev == nil {
			s.dev = nil
		} else {
			s.dev = append(s.dev[:0], o.dev...)
		}
	}
}

func (s *State) copyRow(o *State, h HostID) {
	lo := int(h) * s.ncols
	copy(s.vals[lo:lo+s.ncols], o.vals[lo:lo+s.ncols])
	s.slotsChanged(h)
}

// MinWithAlloc lowers s's free amounts to o's, where o's are smaller, on
// what alloc touches: its hosts' vectors, its shared resources and its
// counters (for counters: raises Used). It is how a projection takes the
// least free over a time window: only a reservation's hosts shrink at its
// start. Both must be of the same cluster. Held devices are not
// changed: projections track none.
func (s *State) MinWithAlloc(o *State, a *JobAlloc) {
	nres := len(s.c.Resources)
	for _, h := range a.Hosts {
		s.touch(h.Host)
		lo := int(h.Host) * s.ncols
		mine, theirs := s.vals[lo:lo+s.ncols], o.vals[lo:lo+s.ncols]
		// Only free slots and free consumables change; the other columns
		// (totals, strings, tags) are the same in both.
		if v := theirs[ColSlots]; v < mine[ColSlots] {
			s.freeSlots += int(v - mine[ColSlots])
			mine[ColSlots] = v
			s.slotsChanged(h.Host)
		}
		for r := range nres {
			if c := ResCol(ResID(r)); theirs[c] < mine[c] {
				mine[c] = theirs[c]
			}
		}
		for _, c := range h.Counters {
			if oc := o.counter(c.Counter); oc.Used > s.counter(c.Counter).Used {
				s.counter(c.Counter).Used = oc.Used
			}
		}
	}
	for _, sh := range a.Shared {
		if v := o.sharedFree[sh.Shared]; v < s.sharedFree[sh.Shared] {
			s.sharedFree[sh.Shared] = v
		}
	}
}
