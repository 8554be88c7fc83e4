package sim_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/xce-sched/xce/cluster"
	"github.com/xce-sched/xce/framework/plugins"
	"github.com/xce-sched/xce/sim"
)

// replayKTH replays the filtered KTH log under policy and returns the
// summary (the trace is read once per call, outside the timer when b is set).
func replayKTH(tb testing.TB, b *testing.B, policy cluster.Policy) sim.Summary {
	return replayKTHOn(tb, b, sim.Setup{Policy: policy, Clean: true}, nil)
}

// replayKTHOn replays the KTH log with setup; observe, when set, sees
// every cycle.
func replayKTHOn(tb testing.TB, b *testing.B, setup sim.Setup, observe sim.Observe) sim.Summary {
	w, _, err := sim.ReadSWF(filepath.Join(traceDir(tb), "KTH-SP2-1996-2.1-cln.filtered.swf"), false)
	if err != nil {
		tb.Fatal(err)
	}
	var sum sim.Summary
	run := func() {
		prep, err := sim.Prepare(w, setup)
		if err != nil {
			tb.Fatal(err)
		}
		if _, _, sum, err = sim.Replay(context.Background(), prep, plugins.NewInTreeRegistry(), observe); err != nil {
			tb.Fatal(err)
		}
	}
	if b == nil {
		run()
		return sum
	}
	b.ReportAllocs()
	for b.Loop() {
		run()
	}
	return sum
}

// BenchmarkKTHFCFS, BenchmarkKTHEASY and BenchmarkKTHConservative time a
// whole replay of the 28,481-job KTH log (issue 6 targets: EASY < 0.5 s,
// conservative < 2 s).
func BenchmarkKTHFCFS(b *testing.B)         { replayKTH(b, b, cluster.PolicyFCFS) }
func BenchmarkKTHEASY(b *testing.B)         { replayKTH(b, b, cluster.PolicyEASY) }
func BenchmarkKTHConservative(b *testing.B) { replayKTH(b, b, cluster.PolicyConservative) }
