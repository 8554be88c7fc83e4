package cli

import (
	"fmt"
	"math"
	"path/filepath"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/xce-sched/xce/sim"
)

// plotBins is the number of time bins of a plot.
const plotBins = 500

// writePlots draws, as PNG files in dir, utilization (busy slots / total:
// each bin's time-weighted mean) and queue length (pending jobs: each
// bin's largest, as steps, so that a peak is never averaged away) over
// time, in minutes, hours or days as the run's span suits. caption says
// what ran (the trace, the policy, the cluster) and goes in each title.
func writePlots(dir string, series []sim.Point, totalSlots int, caption string) error {
	if len(series) < 2 {
		return nil
	}
	unit := timeUnitFor(series[len(series)-1].T - series[0].T)
	busy := binned(series, unit, func(p sim.Point) float64 { return float64(p.Busy) / float64(max(totalSlots, 1)) }, false)
	queue := binned(series, unit, func(p sim.Point) float64 { return float64(p.Pending) }, true)
	if err := linePlot(filepath.Join(dir, "utilization.png"), "Utilization — "+caption, "busy slots / total (mean per bin)", unit, busy, false); err != nil {
		return err
	}
	return linePlot(filepath.Join(dir, "queue.png"), "Queue length — "+caption, "pending jobs (most per bin)", unit, queue, true)
}

// timeUnit is a plot's time axis unit.
type timeUnit struct {
	name    string
	seconds float64
}

// timeUnitFor picks the unit that shows a span of span seconds with
// readable numbers: minutes up to 2 hours, hours up to 3 days, else days.
func timeUnitFor(span int64) timeUnit {
	switch {
	case span <= 2*3600:
		return timeUnit{"min", 60}
	case span <= 3*86400:
		return timeUnit{"h", 3600}
	}
	return timeUnit{"days", 86400}
}

// binned reduces the series to plotBins equal time bins between the first
// and last sample: each bin's time-weighted mean of value (each sample
// holds until the next), or, with most, the largest value held during the
// bin. x is the bin's start (most: for steps) or middle, in unit.
func binned(series []sim.Point, unit timeUnit, value func(sim.Point) float64, most bool) plotter.XYs {
	t0, t1 := series[0].T, series[len(series)-1].T
	width := float64(t1-t0) / plotBins
	if width <= 0 {
		return plotter.XYs{{X: 0, Y: value(series[0])}}
	}
	sum := make([]float64, plotBins)
	top := make([]float64, plotBins)
	for i := 0; i+1 < len(series); i++ {
		v := value(series[i])
		a, b := float64(series[i].T-t0), float64(series[i+1].T-t0)
		for k := min(int(a/width), plotBins-1); a < b; k++ {
			end := b
			if k < plotBins-1 {
				end = min(b, float64(k+1)*width)
			}
			if end > a { // a/width may round down to the previous bin
				sum[k] += v * (end - a)
				top[k] = max(top[k], v)
				a = end
			}
		}
	}
	pts := make(plotter.XYs, plotBins)
	for k := range pts {
		if most {
			pts[k] = plotter.XY{X: float64(k) * width / unit.seconds, Y: top[k]}
		} else {
			pts[k] = plotter.XY{X: (float64(k) + 0.5) * width / unit.seconds, Y: sum[k] / width}
		}
	}
	return pts
}

// integerTicks keeps the default ticks that fall on whole numbers, labelled
// without a decimal point, and adds whole-number ticks when the range is
// too small to have any: a count is never labelled 2.5.
func integerTicks(lo, hi float64) []plot.Tick {
	var out []plot.Tick
	for _, t := range (plot.DefaultTicks{}).Ticks(lo, hi) {
		if t.Value == math.Trunc(t.Value) {
			if t.Label != "" {
				t.Label = strconv.FormatFloat(t.Value, 'f', 0, 64)
			}
			out = append(out, t)
		}
	}
	if len(out) == 0 {
		for v := math.Ceil(lo); v <= hi; v++ {
			out = append(out, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'f', 0, 64)})
		}
	}
	return out
}

func linePlot(path, title, ylabel string, unit timeUnit, pts plotter.XYs, steps bool) error {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "time since the first event (" + unit.name + ")"
	p.Y.Label.Text = ylabel
	p.Y.Min = 0
	if steps {
		p.Y.Tick.Marker = plot.TickerFunc(integerTicks)
	}
	line, err := plotter.NewLine(pts)
	if err != nil {
		return fmt.Errorf("plot %s: %w", path, err)
	}
	if steps {
		line.StepStyle = plotter.PostStep
	}
	p.Add(line)
	if err := p.Save(10*vg.Inch, 4*vg.Inch, path); err != nil {
		return fmt.Errorf("plot %s: %w", path, err)
	}
	return nil
}
