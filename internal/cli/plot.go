package cli

import (
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

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
	return drawRuns(dir, "", []string{""}, [][]sim.Point{series}, totalSlots, caption)
}

// drawRuns draws dir/<prefix>utilization.png and dir/<prefix>queue.png
// with one line per run (runs[i], named names[i]; with more than one run,
// in a legend), each binned as writePlots says over the span of all the
// runs, in one time unit, so that the lines share their bins and x-axis.
// Each run's line stops where its own samples do.
func drawRuns(dir, prefix string, names []string, runs [][]sim.Point, totalSlots int, caption string) error {
	sp := spanOf(runs)
	unit := timeUnitFor(sp.t1 - sp.t0)
	busy := make([]plotLine, 0, len(runs))
	queue := make([]plotLine, 0, len(runs))
	for i, s := range runs {
		if len(s) == 0 {
			continue
		}
		busy = append(busy, plotLine{names[i], binned(s, sp, unit, func(p sim.Point) float64 { return float64(p.Busy) / float64(max(totalSlots, 1)) }, false)})
		queue = append(queue, plotLine{names[i], binned(s, sp, unit, func(p sim.Point) float64 { return float64(p.Pending) }, true)})
	}
	if len(busy) == 0 {
		return nil
	}
	if err := linePlot(filepath.Join(dir, prefix+"utilization.png"), "Utilization — "+caption, "busy slots / total (mean per bin)", unit, busy, false, 1); err != nil {
		return err
	}
	return linePlot(filepath.Join(dir, prefix+"queue.png"), "Queue length — "+caption, "pending jobs (most per bin)", unit, queue, true, 0)
}

// plotLine is one named line of a plot.
type plotLine struct {
	name string
	pts  plotter.XYs
}

// plotSpan is the time range (seconds) a plot's bins divide.
type plotSpan struct{ t0, t1 int64 }

// spanOf returns the span from the earliest first sample of the runs to
// the latest last one (runs without samples do not count).
func spanOf(runs [][]sim.Point) plotSpan {
	var sp plotSpan
	seen := false
	for _, s := range runs {
		if len(s) == 0 {
			continue
		}
		if !seen {
			sp, seen = plotSpan{s[0].T, s[len(s)-1].T}, true
			continue
		}
		sp.t0, sp.t1 = min(sp.t0, s[0].T), max(sp.t1, s[len(s)-1].T)
	}
	return sp
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

// binned reduces the series to plotBins equal time bins dividing sp: each
// bin's time-weighted mean of value over the part of the bin the series
// covers (each sample holds until the next), or, with most, the largest
// value held during the bin. Bins the series does not reach (before its
// first sample or after its last, when sp is wider than the series) are
// left out, so that its line stops where the series does. x is the bin's
// start (most: for steps) or middle, in unit, from sp.t0. A series of one
// sample, or an empty span, gives that sample alone.
func binned(series []sim.Point, sp plotSpan, unit timeUnit, value func(sim.Point) float64, most bool) plotter.XYs {
	width := float64(sp.t1-sp.t0) / plotBins
	alone := plotter.XYs{{X: float64(series[0].T-sp.t0) / unit.seconds, Y: value(series[0])}}
	if width <= 0 || len(series) < 2 {
		return alone
	}
	sum := make([]float64, plotBins)
	top := make([]float64, plotBins)
	held := make([]float64, plotBins) // seconds of the bin the series covers
	for i := 0; i+1 < len(series); i++ {
		v := value(series[i])
		a, b := float64(series[i].T-sp.t0), float64(series[i+1].T-sp.t0)
		for k := min(int(a/width), plotBins-1); a < b; k++ {
			end := b
			if k < plotBins-1 {
				end = min(b, float64(k+1)*width)
			}
			if end > a { // a/width may round down to the previous bin
				sum[k] += v * (end - a)
				held[k] += end - a
				top[k] = max(top[k], v)
				a = end
			}
		}
	}
	// A bin within the series is divided by its width, one it covers in
	// part by the part (the sum of the pieces, which may be off the width
	// by a rounding).
	s0, s1, end := float64(series[0].T-sp.t0), float64(series[len(series)-1].T-sp.t0), float64(sp.t1-sp.t0)
	pts := make(plotter.XYs, 0, plotBins)
	for k := range plotBins {
		switch {
		case held[k] == 0:
		case most:
			pts = append(pts, plotter.XY{X: float64(k) * width / unit.seconds, Y: top[k]})
		default:
			over := held[k]
			if s0 <= float64(k)*width && (k < plotBins-1 && s1 >= float64(k+1)*width || s1 >= end) {
				over = width
			}
			pts = append(pts, plotter.XY{X: (float64(k) + 0.5) * width / unit.seconds, Y: sum[k] / over})
		}
	}
	if len(pts) == 0 { // every sample at one instant
		return alone
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

// Plot sizes.
const (
	plotWidth  = 10 * vg.Inch
	plotHeight = 4 * vg.Inch
	legendGap  = vg.Length(12) // between the plot and its legend, and after the legend
)

// linePlot draws lines into a PNG at path. One line is drawn plain; more
// are told apart by colour and dashes and named in a legend, drawn to the
// right of the plot so that it never hides a line. Both axes start at 0
// (the time axis at the first event, so that a run's figures share their
// ticks); yMax, when above 0, is the y axis's least top (1 for a
// fraction).
func linePlot(path, title, ylabel string, unit timeUnit, lines []plotLine, steps bool, yMax float64) error {
	p := plot.New()
	p.Title.Text = title
	p.Title.Padding = vg.Points(6)
	p.X.Label.Text = "time since the first event (" + unit.name + ")"
	p.Y.Label.Text = ylabel
	p.X.Min, p.Y.Min = 0, 0
	if yMax > 0 {
		p.Y.Max = yMax
	}
	if steps {
		p.Y.Tick.Marker = plot.TickerFunc(integerTicks)
	}
	legend := plot.NewLegend()
	legend.Top, legend.Left = true, true
	for i, l := range lines {
		line, err := plotter.NewLine(l.pts)
		if err != nil {
			return fmt.Errorf("plot %s: %s: %w", path, l.name, err)
		}
		if steps {
			line.StepStyle = plotter.PostStep
		}
		if len(lines) > 1 {
			line.Color = plotutil.Color(i)
			line.Dashes = plotutil.Dashes(i)
			legend.Add(l.name, line)
		}
		p.Add(line)
	}
	c, err := draw.NewFormattedCanvas(plotWidth, plotHeight, "png")
	if err != nil {
		return fmt.Errorf("plot %s: %w", path, err)
	}
	dc := draw.New(c)
	if len(lines) > 1 {
		r := legend.Rectangle(dc)
		width := r.Max.X - r.Min.X + 2*legendGap
		// The legend's top is the plot area's: below the title.
		below := p.Title.TextStyle.Rectangle(title).Size().Y + p.Title.Padding
		legend.Draw(draw.Crop(dc, plotWidth-width+legendGap, -legendGap, 0, -below))
		dc = draw.Crop(dc, 0, -width, 0, 0)
	}
	p.Draw(dc)
	if err := writePNG(path, c); err != nil {
		return fmt.Errorf("plot %s: %w", path, err)
	}
	return nil
}

// writePNG writes a drawn canvas to path.
func writePNG(path string, c io.WriterTo) (err error) {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer func() {
		if e := f.Close(); err == nil {
			err = e
		}
	}()
	_, err = c.WriteTo(f)
	return err
}
