package cli

import (
	"fmt"
	"path/filepath"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/xce-sched/xce/sim"
)

// plotBins is the number of time bins of a plot: each point is the
// time-weighted mean of the series over its bin.
const plotBins = 500

// writePlots draws utilization (busy slots / total) and queue length
// (pending jobs) over time, in hours, as PNG files in dir. Each is
// averaged over plotBins equal time bins, weighting each sample by how long
// it held (until the next cycle).
func writePlots(dir string, series []sim.Point, totalSlots int) error {
	if len(series) < 2 {
		return nil
	}
	busy := binned(series, func(p sim.Point) float64 { return float64(p.Busy) / float64(max(totalSlots, 1)) })
	queue := binned(series, func(p sim.Point) float64 { return float64(p.Pending) })
	if err := linePlot(filepath.Join(dir, "utilization.png"), "Utilization", "busy slots / total", busy); err != nil {
		return err
	}
	return linePlot(filepath.Join(dir, "queue.png"), "Queue length", "pending jobs", queue)
}

// binned returns the time-weighted mean of value over plotBins bins
// between the first and last sample; x is the bin's middle, in hours.
func binned(series []sim.Point, value func(sim.Point) float64) plotter.XYs {
	t0, t1 := series[0].T, series[len(series)-1].T
	width := float64(t1-t0) / plotBins
	if width <= 0 {
		return plotter.XYs{{X: 0, Y: value(series[0])}}
	}
	sum := make([]float64, plotBins)
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
				a = end
			}
		}
	}
	pts := make(plotter.XYs, plotBins)
	for k := range pts {
		pts[k] = plotter.XY{X: (float64(k) + 0.5) * width / 3600, Y: sum[k] / width}
	}
	return pts
}

func linePlot(path, title, ylabel string, pts plotter.XYs) error {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "time since first event (h)"
	p.Y.Label.Text = ylabel
	line, err := plotter.NewLine(pts)
	if err != nil {
		return fmt.Errorf("plot %s: %w", path, err)
	}
	p.Add(line)
	if err := p.Save(10*vg.Inch, 4*vg.Inch, path); err != nil {
		return fmt.Errorf("plot %s: %w", path, err)
	}
	return nil
}
