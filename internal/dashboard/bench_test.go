package dashboard

import (
	"fmt"
	"testing"

	"github.com/xce-sched/xce/cluster"
	"github.com/xce-sched/xce/internal/event"
	"github.com/xce-sched/xce/internal/live"
	"github.com/xce-sched/xce/internal/state"
)

// bigCore is a state of n jobs of 50 users in 4 queues on 1,000 hosts of
// 8 slots: one job in ten runs (on 2 slots of a host), one in ten has
// ended, the rest pend.
func bigCore(b *testing.B, n int) *live.Core {
	b.Helper()
	text := "hosts:\n"
	for i := range 1000 {
		text += fmt.Sprintf("  - {name: h%04d, slots: 8}\n", i)
	}
	text += "queues:\n  - {name: q0}\n  - {name: q1}\n  - {name: q2}\n  - {name: q3}\n"
	c, _, err := cluster.ParseConfig("config.yaml", []byte(text))
	if err != nil {
		b.Fatal(err)
	}
	st := state.New()
	apply := func(e event.Event) {
		e.Index = st.Index + 1
		if err := st.Apply(e); err != nil {
			b.Fatal(err)
		}
	}
	apply(event.Event{Type: event.ConfigReloaded, Config: &event.Config{Text: text}})
	for i := 1; i <= n; i++ {
		apply(event.Event{At: int64(i) * 1e9, Type: event.JobSubmitted, Submit: &event.Submit{Job: int64(i), User: fmt.Sprintf("user%02d", i%50),
			Queue: fmt.Sprintf("q%d", i%4), TasksMin: 2, TasksMax: 2, Command: []string{"sleep", "60"}, Cwd: "/", Name: fmt.Sprintf("job-%d", i)}})
	}
	cyc := &event.Cycle{Number: 1}
	var ended []int64
	for i := 1; i <= n; i++ {
		switch i % 10 {
		case 0:
			cyc.Started = append(cyc.Started, event.Placement{Job: int64(i), Attempt: 1, Hosts: []event.HostAlloc{{Host: fmt.Sprintf("h%04d", (i/10)%1000), Slots: 2}}})
		case 5:
			cyc.Started = append(cyc.Started, event.Placement{Job: int64(i), Attempt: 1, Hosts: []event.HostAlloc{{Host: fmt.Sprintf("h%04d", (i/10)%1000), Slots: 2}}})
			ended = append(ended, int64(i))
		default:
			cyc.Pending = append(cyc.Pending, event.Pending{Job: int64(i), Reason: "NotEnoughSlots"})
		}
	}
	apply(event.Event{At: int64(n+1) * 1e9, Type: event.CycleDecided, Cycle: cyc})
	for _, id := range ended {
		apply(event.Event{At: int64(n+2) * 1e9, Type: event.JobFinished, Finished: &event.Finished{Job: id, Attempt: 1}})
	}
	return &live.Core{Cluster: c, State: st}
}

// loaded returns an index copied from k.
func loaded(k *live.Core) *index {
	ix := &index{}
	ix.load(k)
	return ix
}

// BenchmarkLoad100k: the index's copy of 100,000 jobs, made under the
// loop's read lock once (and again only after announced events were
// dropped).
func BenchmarkLoad100k(b *testing.B) {
	k := bigCore(b, 100_000)
	b.ResetTimer()
	for b.Loop() {
		_ = loaded(k)
	}
}

// BenchmarkFold100k: what a change costs the index of 100,000 jobs (the
// loop pays nothing but a channel send): a submit, then a cycle that
// starts the job, then its finish.
func BenchmarkFold100k(b *testing.B) {
	ix := loaded(bigCore(b, 100_000))
	for b.Loop() {
		id := int64(len(ix.rows) + 1)
		for _, e := range []event.Event{
			{Type: event.JobSubmitted, Submit: &event.Submit{Job: id, User: "u", Queue: "q0", TasksMin: 1, TasksMax: 1}},
			{Type: event.CycleDecided, Cycle: &event.Cycle{Started: []event.Placement{{Job: id, Attempt: 1, Hosts: []event.HostAlloc{{Host: "h0001", Slots: 1}}}}}},
			{Type: event.JobFinished, Finished: &event.Finished{Job: id, Attempt: 1}},
		} {
			e.Index = ix.at + 1
			ix.apply(&e)
		}
	}
}

// BenchmarkJobsPage100k: a page of 50 of 100,000 jobs from the index
// (never under the loop's lock): the newest first (no sort), filtered by
// user and state, sorted by submit time (its order made once per
// change of the index, then reused), and the last page.
func BenchmarkJobsPage100k(b *testing.B) {
	d := loaded(bigCore(b, 100_000))
	for _, c := range []struct {
		name string
		q    JobsQuery
	}{
		{"newest", JobsQuery{Sort: "id", Desc: true, Limit: 50}},
		{"user+state", JobsQuery{User: "user07", State: "PEND", Sort: "id", Desc: true, Limit: 50}},
		{"sorted-by-user", JobsQuery{Sort: "user", Limit: 50}},
		{"last-page", JobsQuery{Sort: "id", Offset: 99_950, Limit: 50}},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				rows, total := d.page(c.q)
				if len(rows) == 0 || total == 0 {
					b.Fatal("an empty page")
				}
			}
		})
	}
	b.Run("sort-user-first-time", func(b *testing.B) {
		for b.Loop() {
			d.ordersMu.Lock()
			delete(d.orders, "user")
			d.ordersMu.Unlock()
			d.page(JobsQuery{Sort: "user", Limit: 50})
		}
	})
}
