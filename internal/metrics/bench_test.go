package metrics

import (
	"fmt"
	"testing"

	"github.com/xce-sched/xce/cluster"
	"github.com/xce-sched/xce/internal/event"
	"github.com/xce-sched/xce/internal/live"
	"github.com/xce-sched/xce/internal/state"
)

// BenchmarkScrape100k: the pass a scrape makes over 100,000 jobs (one in
// ten running) under the loop's read lock.
func BenchmarkScrape100k(b *testing.B) {
	text := "hosts:\n"
	for i := range 1000 {
		text += fmt.Sprintf("  - {name: h%04d, slots: 8}\n", i)
	}
	text += "queues:\n  - {name: q0}\n  - {name: q1}\n"
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
	const n = 100_000
	for i := 1; i <= n; i++ {
		apply(event.Event{Type: event.JobSubmitted, Submit: &event.Submit{Job: int64(i), User: "u", Queue: fmt.Sprintf("q%d", i%2), TasksMin: 1, TasksMax: 1}})
	}
	cyc := &event.Cycle{Number: 1}
	for i := 10; i <= n; i += 10 {
		cyc.Started = append(cyc.Started, event.Placement{Job: int64(i), Attempt: 1, Hosts: []event.HostAlloc{{Host: fmt.Sprintf("h%04d", i%1000), Slots: 1}}})
	}
	apply(event.Event{Type: event.CycleDecided, Cycle: cyc})
	k := &live.Core{Cluster: c, State: st}
	b.ResetTimer()
	for b.Loop() {
		_ = count(k)
	}
}
