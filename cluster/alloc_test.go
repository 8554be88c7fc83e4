package cluster

import (
	"reflect"
	"testing"
)

// TestJobAllocClone: a clone equals its original, whatever its number of
// hosts, and shares none of its slices: writing the clone leaves the
// original as it was.
func TestJobAllocClone(t *testing.T) {
	host := func(h HostID) HostAlloc {
		return HostAlloc{Host: h, Slots: int(h) + 1, Res: []ResAmount{{1, 100}}, Counters: []CounterAmount{{2, 1}}, GPUs: Devices(h)}
	}
	for _, a := range []*JobAlloc{
		{Hosts: []HostAlloc{{Host: 3, Slots: 2}}},
		{Hosts: []HostAlloc{host(1)}, Shared: []SharedAmount{{0, 5}}},
		{Hosts: []HostAlloc{host(1), host(4), {Host: 5, Slots: 1}}, Shared: []SharedAmount{{0, 5}, {1, 2}}},
	} {
		c := a.Clone()
		if !reflect.DeepEqual(c, a) {
			t.Fatalf("clone %+v of %+v", c, a)
		}
		want := *a
		want.Hosts = append([]HostAlloc(nil), a.Hosts...)
		for i, h := range a.Hosts {
			want.Hosts[i].Res = append([]ResAmount(nil), h.Res...)
			want.Hosts[i].Counters = append([]CounterAmount(nil), h.Counters...)
		}
		want.Shared = append([]SharedAmount(nil), a.Shared...)
		for i := range c.Hosts {
			c.Hosts[i].Slots++
			for k := range c.Hosts[i].Res {
				c.Hosts[i].Res[k].Amount++
			}
			for k := range c.Hosts[i].Counters {
				c.Hosts[i].Counters[k].Amount++
			}
		}
		for k := range c.Shared {
			c.Shared[k].Amount++
		}
		if !reflect.DeepEqual(*a, want) {
			t.Errorf("writing the clone changed the original: %+v", a)
		}
	}
}
