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
	most := binned(series, unit, v, true)
	mean := binned(series, unit, v, false)
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
	if got := binned(short, unit, v, true)[125].Y; got != 7 {
		t.Errorf("a 1 s peak of 7: most %v, want 7", got)
	}
	if got := binned(short, unit, v, false)[125].Y; got != 3.5 {
		t.Errorf("a 1 s peak of 7: mean %v, want 3.5", got)
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
