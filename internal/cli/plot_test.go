package cli

import (
	"testing"

	"github.com/xce-sched/xce/sim"
)

// TestBinned works two bins' worth by hand: the series holds 0 pending
// jobs from 0 to 250 s, 10 from 250 to 260 s and 2 from 260 to 1000 s.
// With 500 bins of 2 s, bin 125 ([250, 252)) holds 10 throughout; bin
// 129 ([258, 260)) holds 10; bin 130 holds 2. Queue length keeps each
// bin's largest, so the 10 s peak shows at 10; utilization means over the
// bin.
func TestBinned(t *testing.T) {
	series := []sim.Point{{T: 0, Pending: 0}, {T: 250, Pending: 10}, {T: 260, Pending: 2}, {T: 1000, Pending: 2}}
	unit := timeUnitFor(1000)
	if unit.name != "min" {
		t.Fatalf("unit for 1000 s: %s, want min", unit.name)
	}
	v := func(p sim.Point) float64 { return float64(p.Pending) }
	sp := spanOf([][]sim.Point{series})
	if sp != (plotSpan{0, 1000}) {
		t.Fatalf("span %v, want [0, 1000]", sp)
	}
	most := binned(series, sp, unit, v, true)
	mean := binned(series, sp, unit, v, false)
	for _, c := range []struct {
		bin        int
		most, mean float64
		x          float64 // most's x: the bin's start, in minutes
	}{{124, 0, 0, 248.0 / 60}, {125, 10, 10, 250.0 / 60}, {129, 10, 10, 258.0 / 60}, {130, 2, 2, 260.0 / 60}} {
		if most[c.bin].Y != c.most || mean[c.bin].Y != c.mean || most[c.bin].X != c.x {
			t.Errorf("bin %d: most %v at %v, mean %v; want %v at %v, %v", c.bin, most[c.bin].Y, most[c.bin].X, mean[c.bin].Y, c.most, c.x, c.mean)
		}
	}
	// A peak shorter than a bin: 7 jobs for 1 s of the bin [250, 252).
	short := []sim.Point{{T: 0, Pending: 0}, {T: 250, Pending: 7}, {T: 251, Pending: 0}, {T: 1000, Pending: 0}}
	if got := binned(short, sp, unit, v, true)[125].Y; got != 7 {
		t.Errorf("a 1 s peak of 7: most %v, want 7", got)
	}
	if got := binned(short, sp, unit, v, false)[125].Y; got != 3.5 {
		t.Errorf("a 1 s peak of 7: mean %v, want 3.5", got)
	}
}

// TestBinnedCommonSpan: runs plotted together are binned over the span of
// all of them. A run from 100 s to 599 s, in the span [0, 1000] of 2 s
// bins, covers bins 50 to 299 only: its line starts at bin 50 (x = 100 s)
// and stops at bin 299 (x = 598 s), where the run ends. A bin it covers in
// part is the mean over that part: bin 299 is [598, 600) and the run holds
// 8 jobs from 598 s to its end at 599 s, a mean of 8 (not 4 over the
// whole bin).
func TestBinnedCommonSpan(t *testing.T) {
	long := []sim.Point{{T: 0, Pending: 1}, {T: 1000, Pending: 0}}
	short := []sim.Point{{T: 100, Pending: 4}, {T: 598, Pending: 8}, {T: 599, Pending: 0}}
	sp := spanOf([][]sim.Point{short, nil, long})
	if sp != (plotSpan{0, 1000}) {
		t.Fatalf("span %v, want [0, 1000]", sp)
	}
	unit := timeUnitFor(sp.t1 - sp.t0)
	v := func(p sim.Point) float64 { return float64(p.Pending) }
	if n := len(binned(long, sp, unit, v, true)); n != plotBins {
		t.Errorf("the run spanning the plot: %d bins, want %d", n, plotBins)
	}
	for _, most := range []bool{true, false} {
		pts := binned(short, sp, unit, v, most)
		if len(pts) != 250 {
			t.Fatalf("most %v: %d bins, want 250 (bins 50 to 299)", most, len(pts))
		}
		first, last := pts[0], pts[len(pts)-1]
		if most && (first.X != 100.0/60 || last.X != 598.0/60 || last.Y != 8) {
			t.Errorf("most: first bin at %v, last at %v holding %v; want %v, %v, 8", first.X, last.X, last.Y, 100.0/60, 598.0/60)
		}
		if !most && (first.X != 101.0/60 || last.X != 599.0/60 || last.Y != 8) {
			t.Errorf("mean: first bin at %v, last at %v holding %v; want %v, %v, 8", first.X, last.X, last.Y, 101.0/60, 599.0/60)
		}
	}
	// A run of one sample is that sample, placed in the common span.
	one := binned([]sim.Point{{T: 300, Pending: 5}}, sp, unit, v, true)
	if len(one) != 1 || one[0].X != 5 || one[0].Y != 5 {
		t.Errorf("one sample at 300 s: %v, want 5 at 5 min", one)
	}
}

// TestTimeUnitAndTicks: the unit follows the span; count ticks are whole
// numbers, labelled as such.
func TestTimeUnitAndTicks(t *testing.T) {
	for _, c := range []struct {
		span int64
		want string
	}{{7200, "min"}, {7201, "h"}, {3 * 86400, "h"}, {3*86400 + 1, "days"}} {
		if got := timeUnitFor(c.span).name; got != c.want {
			t.Errorf("span %d s: %s, want %s", c.span, got, c.want)
		}
	}
	ticks := integerTicks(0, 3)
	labels := map[string]bool{}
	for _, tk := range ticks {
		if tk.Value != float64(int(tk.Value)) {
			t.Errorf("tick at %v is not a whole number", tk.Value)
		}
		if tk.Label != "" {
			labels[tk.Label] = true
		}
	}
	if !labels["0"] || !labels["1"] || !labels["2"] || !labels["3"] || labels["0.5"] || labels["1.0"] {
		t.Errorf("ticks over [0, 3]: labels %v, want 0, 1, 2, 3", labels)
	}
}
