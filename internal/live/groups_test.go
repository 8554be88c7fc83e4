package live

import (
	"reflect"
	"strings"
	"testing"

	"github.com/xce-sched/xce/internal/event"
	"github.com/xce-sched/xce/internal/state"
)

const groupsConfig = `
hosts:
  - {name: h1, slots: 2}
  - {name: h2, slots: 2}
  - {name: h3, slots: 2}
host_groups:
  pair: [h1, h2]
user_groups:
  chem: [alice, bob]
queues:
  - {name: normal, policy: firstfit, hosts: [pair]}
limits:
  - {name: chem_slots, users: [chem], slots: 2}
`

// TestCoreGroups: a live cluster's configuration with a host group (the
// queue's hosts) and a user group (a limit's users), worked by hand; then
// a reload that puts carol in chem and h3 in pair.
//   - Cycle 1: alice's job 1 and bob's job 2 take h1 and chem's 2 slots;
//     alice's job 3 pends on chem_slots, alice and bob counting together;
//     carol, not in chem, takes h2×2 with job 4; her job 5 finds h1 and h2
//     full, and h3 is not the queue's: NotEnoughSlots.
//   - The reload makes chem alice, bob and carol, now holding 4 slots of
//     2 (accepted: nothing new is admitted), and the queue's hosts h1, h2
//     and h3. Job 1 ends: chem holds 3. Carol's job 5 would fit h1 or h3
//     but is now under chem_slots: LimitReached, the only reason that
//     changes (job 3 still pends on chem_slots).
func TestCoreGroups(t *testing.T) {
	_, k := coreOf(t, groupsConfig, state.New())
	h := &harness{t: t, k: k}
	for _, host := range []string{"h1", "h2", "h3"} {
		h.apply(event.Event{Type: event.HostRegistered, Host: &event.Host{Name: host}})
	}
	for i, x := range []struct {
		user  string
		tasks int
	}{{"alice", 1}, {"bob", 1}, {"alice", 1}, {"carol", 2}, {"carol", 1}} {
		s := sub(event.JobID(i+1), x.tasks, "")
		s.User = x.user
		h.apply(event.Event{At: int64(i+1) * 1e9, Type: event.JobSubmitted, Submit: s})
	}
	c := h.cycle(10)
	want := &event.Cycle{Number: 1, Now: 10,
		Started: []event.Placement{
			{Job: 1, Attempt: 1, Hosts: []event.HostAlloc{{Host: "h1", Slots: 1}}},
			{Job: 2, Attempt: 1, Hosts: []event.HostAlloc{{Host: "h1", Slots: 1}}},
			{Job: 4, Attempt: 1, Hosts: []event.HostAlloc{{Host: "h2", Slots: 2}}}},
		Pending: []event.Pending{{Job: 3, Reason: "LimitReached", Detail: "chem_slots"}, {Job: 5, Reason: "NotEnoughSlots"}}}
	if !reflect.DeepEqual(c, want) {
		t.Fatalf("cycle 1:\n got %+v\nwant %+v", c, want)
	}
	reloaded := strings.Replace(strings.Replace(groupsConfig, "[alice, bob]", "[alice, bob, carol]", 1), "[h1, h2]", "[h1, h2, h3]", 1)
	h.apply(event.Event{At: 11e9, Type: event.ConfigReloaded, Config: &event.Config{Text: reloaded}})
	h.apply(event.Event{At: 12e9, Type: event.JobFinished, Finished: &event.Finished{Job: 1, Attempt: 1}})
	c = h.cycle(12)
	want = &event.Cycle{Number: 2, Now: 12, Pending: []event.Pending{{Job: 5, Reason: "LimitReached", Detail: "chem_slots"}}}
	if !reflect.DeepEqual(c, want) {
		t.Fatalf("cycle 2 (after the reload):\n got %+v\nwant %+v", c, want)
	}
}
