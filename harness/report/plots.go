package report

import (
	"bytes"
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"

	"github.com/atmlab/atmlab/harness/labrun"
	"github.com/atmlab/atmlab/harness/results"
)

// yerr adapts points to gonum's error bars.
type yerr struct {
	plotter.XYs
	plotter.YErrors
}

// plotByExperiment draws the series in one figure, NAME, when they come
// from one experiment, else one figure per experiment, NAME-EXPERIMENT, so
// that a loopback at tens of Gbit/s does not flatten a 100M link's curves.
// It returns the figures' names.
func plotByExperiment(dir *results.Folder, name, title, ylabel string, ss []*series) ([]string, error) {
	var exps []string
	for _, s := range ss {
		if !slices.Contains(exps, s.Experiment) {
			exps = append(exps, s.Experiment)
		}
	}
	if len(exps) == 1 {
		return []string{name}, plotSeries(dir, name, figureTitle(strings.ToUpper(title[:1])+title[1:], ss), ylabel, ss)
	}
	var names []string
	for _, e := range exps {
		var sub []*series
		for _, s := range ss {
			if s.Experiment == e {
				sub = append(sub, s)
			}
		}
		n := name + "-" + e
		if err := plotSeries(dir, n, figureTitle(strings.ToUpper(title[:1])+title[1:], sub), ylabel, sub); err != nil {
			return nil, err
		}
		names = append(names, n)
	}
	return names, nil
}

// plotSeries draws each series (mean with min–max bars) against message
// size, with its ceiling dashed, to NAME.png and NAME.svg. A series with a
// ceiling is drawn as points on it, not joined: between two sizes
// measured the ceiling line says what the path carries, and a line joining
// the points would cut across its steps.
func plotSeries(dir *results.Folder, name, title, ylabel string, ss []*series) error {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "message size (bytes)"
	p.Y.Label.Text = ylabel
	// Throughput rises to the top right, transactions fall to the bottom
	// right: keep the legend off the data.
	p.Legend.Top = ylabel != "transactions/s"
	p.Legend.Left = p.Legend.Top
	labels := withPaths(legendLabels(ss), ss)
	entries := 0
	var drawn []plotter.XYs // ceilings already drawn: paths that share one share its line
	minSize, maxSize := math.Inf(1), 0.0
	for _, s := range ss {
		for _, a := range s.Points {
			if a.N > 0 {
				minSize, maxSize = math.Min(minSize, float64(a.Size)), math.Max(maxSize, float64(a.Size))
			}
		}
	}
	if minSize >= 1 && maxSize/minSize >= 20 {
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = plot.LogTicks{Prec: -1}
	}
	for i, s := range ss {
		var xys plotter.XYs
		var errs plotter.YErrors
		var ceil plotter.XYs
		for _, a := range s.Points {
			if a.N == 0 {
				continue
			}
			xys = append(xys, plotter.XY{X: float64(a.Size), Y: a.Mean})
			errs = append(errs, struct{ Low, High float64 }{a.Mean - a.Min, a.Max - a.Mean})
			if a.Ceiling > 0 {
				ceil = append(ceil, plotter.XY{X: float64(a.Size), Y: a.Ceiling})
			}
		}
		if len(xys) == 0 {
			continue
		}
		c := plotutil.Color(i)
		points, err := plotter.NewScatter(xys)
		if err != nil {
			return err
		}
		points.Color = c
		points.Shape = plotutil.Shape(i)
		points.Radius = vg.Points(3.5)
		bars, err := plotter.NewYErrorBars(yerr{xys, errs})
		if err != nil {
			return err
		}
		bars.Color = c
		p.Add(points, bars)
		if len(ceil) == 0 && len(s.Theory) == 0 {
			line, err := plotter.NewLine(xys)
			if err != nil {
				return err
			}
			line.Color = c
			p.Add(line)
			p.Legend.Add(labels[i], line, points)
		} else {
			label := "measured: " + labels[i]
			if len(ss) == 1 {
				label = "measured (mean of the runs; bars: lowest to highest)"
			}
			p.Legend.Add(label, points)
		}
		entries++
		if len(s.Theory) > 0 {
			ceil = s.Theory
		}
		if slices.ContainsFunc(drawn, func(d plotter.XYs) bool { return slices.Equal(d, ceil) }) {
			continue
		}
		drawn = append(drawn, ceil)
		if len(ceil) > 0 {
			cl, err := plotter.NewLine(ceil)
			if err != nil {
				return err
			}
			cl.Color = c
			cl.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
			p.Add(cl)
			label := "theoretical ceiling: " + labels[i]
			if shared(ss, i) || len(ss) == 1 {
				label = "theoretical ceiling"
			}
			p.Legend.Add(label, cl)
			entries++
		}
	}
	return save(p, dir, name, entries)
}

// shared reports whether another series of the figure has series i's
// theory line.
func shared(ss []*series, i int) bool {
	for j, s := range ss {
		if j != i && len(s.Theory) > 0 && slices.Equal(s.Theory, ss[i].Theory) {
			return true
		}
	}
	return false
}

// legendLabels names each series by what sets it apart in its figure: the
// parts of its key (variant, experiment, test, tool, socket buffer) that
// not every series shares.
func legendLabels(ss []*series) []string {
	parts := make([][]string, len(ss))
	count := map[string]int{}
	variants := slices.ContainsFunc(ss, func(s *series) bool { return cmp.Or(s.Variant, "base") != "base" })
	for i, s := range ss {
		parts[i] = strings.Split(s.Key, " · ")
		if variants && cmp.Or(s.Variant, "base") == "base" {
			parts[i] = append([]string{"base"}, parts[i]...)
		}
		for _, p := range parts[i] {
			count[p]++
		}
	}
	out := make([]string, len(ss))
	for i, ps := range parts {
		var keep []string
		for _, p := range ps {
			if count[p] < len(ss) {
				keep = append(keep, p)
			}
		}
		out[i] = ss[i].Key
		if len(keep) > 0 && len(ss) > 1 {
			out[i] = strings.Join(keep, " · ")
		}
	}
	return out
}

// save writes a plot as NAME.png and NAME.svg. Its y axis starts at 0,
// unless the data sit in a narrow band (the AAL5 sawtooth: steps of a few
// per cent near the ceiling), which an axis from zero would hide: then it
// zooms in and says so.
//
// A legend at the top gets headroom above the data, a line of it for each
// of its entries, so that it covers no point.
func save(p *plot.Plot, dir *results.Folder, name string, entries int) error {
	if math.IsInf(p.Y.Min, 0) || math.IsInf(p.Y.Max, 0) || math.IsNaN(p.Y.Min) || math.IsNaN(p.Y.Max) {
		p.Y.Min, p.Y.Max = 0, 1 // nothing plotted (every point failed or was skipped): gonum's tick search never ends on an empty range
	}
	if _, log := p.Y.Scale.(plot.LogScale); log {
		// a logarithmic axis (a grid's figures over decades) keeps its range
	} else if lo, hi := p.Y.Min, p.Y.Max; lo > 0.6*hi && hi > lo {
		p.Y.Min, p.Y.Max = lo-0.1*(hi-lo), hi+0.1*(hi-lo)
		p.Y.Label.Text += " (axis does not start at 0)"
	} else {
		p.Y.Min = 0
	}
	if _, log := p.Y.Scale.(plot.LogScale); log && p.Legend.Top {
		p.Y.Max *= math.Pow(p.Y.Max/p.Y.Min, 0.06*float64(entries))
	} else if p.Legend.Top {
		p.Y.Max += (p.Y.Max - p.Y.Min) * 0.06 * float64(entries)
	}
	for _, ext := range []string{"png", "svg"} {
		// Drawn in memory and written through the folder: a plot's file
		// is replaced, never written through a link.
		w, err := p.WriterTo(9*vg.Inch, 5.5*vg.Inch, ext)
		if err != nil {
			return err
		}
		var b bytes.Buffer
		if _, err := w.WriteTo(&b); err != nil {
			return err
		}
		if err := dir.WriteFile(name+"."+ext, b.Bytes(), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// plotIntervals draws the interval reports of every point that has them as
// time series (to intervals.png and .svg); it reports whether there were any.
func plotIntervals(dir *results.Folder, recs []labrun.Record) (bool, error) {
	p := plot.New()
	p.Title.Text = "Interval reports"
	p.X.Label.Text = "time (s)"
	p.Y.Label.Text = "Mbit/s or transactions/s"
	p.Legend.Top = false
	n := 0
	for _, r := range recs {
		if len(r.Result.Intervals) == 0 {
			continue
		}
		var xys plotter.XYs
		for _, iv := range r.Result.Intervals {
			v := iv.Bps / 1e6
			if iv.TransactionsPerSec > 0 {
				v = iv.TransactionsPerSec
			}
			xys = append(xys, plotter.XY{X: (iv.Start + iv.End) / 2, Y: v})
		}
		line, points, err := plotter.NewLinePoints(xys)
		if err != nil {
			return false, err
		}
		c := plotutil.Color(n)
		line.Color, points.Color = c, c
		p.Add(line, points)
		p.Legend.Add(fmt.Sprintf("%s · %s · %s %d #%d", cmp.Or(r.Variant, "base"), r.Experiment, r.Test, r.Size, r.Rep), line, points)
		n++
	}
	if n == 0 {
		return false, nil
	}
	return true, save(p, dir, "intervals", n)
}

// throughputFigures draws the stream series against message size.
func throughputFigures(p *page) ([]string, error) {
	return plotByExperiment(p.dir, "throughput", "throughput against message size", "Mbit/s", p.streams(false))
}

// transactionFigures draws the request/response series against size.
func transactionFigures(p *page) ([]string, error) {
	return plotByExperiment(p.dir, "transactions", "transactions per second against request/response size", "transactions/s", p.streams(true))
}

// streams is the page's series of request/response tests (rr) or of
// streams (!rr).
func (p *page) streams(rr bool) []*series {
	var out []*series
	for _, s := range p.all {
		if isRR(s.Test) == rr {
			out = append(out, s)
		}
	}
	return out
}

// intervalFigures draws every point's interval reports, if any has them.
func intervalFigures(p *page) ([]string, error) {
	if ok, err := plotIntervals(p.dir, p.recs); err != nil || !ok {
		return nil, err
	}
	return []string{"intervals"}, nil
}

// figuresSection shows the figures drawn, in the order figures lists them.
func figuresSection(p *page) (string, error) {
	var md strings.Builder
	for _, f := range p.figs {
		fmt.Fprintf(&md, "![%s](%s.png)\n\n", f, f)
	}
	return md.String(), nil
}
