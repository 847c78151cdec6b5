// Package report renders a results folder as report.md and a
// self-contained report.html: tables, plots (gonum plot, the only package
// of atmlab that imports it), the lab's findings and grades, the sweep grid
// and the comparison by clock.
package report

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"html"
	"io/fs"
	"math"
	"path/filepath"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"

	"github.com/atmlab/atmlab/emulator/hist"
	"github.com/atmlab/atmlab/harness/labrun"
	"github.com/atmlab/atmlab/harness/perf"
	"github.com/atmlab/atmlab/harness/results"
	"github.com/atmlab/atmlab/topologies"
)

// series is one line of a plot: a test of an experiment with one tool and
// socket buffer, over message sizes.
type series struct {
	Key        string // experiment · test · tool · sockbuf
	Experiment string
	Test       string
	Tool       string
	Points     []agg // by size, ascending
	Ceiling    bool  // whether points carry a ceiling
	// The first record's path, for the theory line.
	Variant, From, To string
	Path              string      // the hosts and links between them (theory.PathName), if known
	Theory            plotter.XYs // the ceiling at every byte between the points (ceilingLine), if known
}

// agg is the repetitions of one point.
type agg struct {
	Size           int
	N              int
	Mean, Min, Max float64 // the main figure: Mbit/s or transactions/s
	Ceiling        float64 // Mbit/s
	Errors         []string
	Flags          []string
	Confidence     []string // each record's confidence reached, when its experiment asked for one
	// Late is the emulator's release lateness, the worst of the
	// repetitions' at each quantile; Count 0 if none was recorded.
	Late hist.Summary
}

func group(recs []labrun.Record) []*series {
	byKey := map[string]*series{}
	var order []string
	for _, r := range recs {
		key := fmt.Sprintf("%s · %s · %s", r.Experiment, r.Test, r.Tool)
		if r.Variant != "" && r.Variant != "base" {
			key = r.Variant + " · " + key
		}
		if r.SockBuf > 0 {
			key += fmt.Sprintf(" · sockbuf %d", r.SockBuf)
		}
		if r.Clock != "" { // a virtual-time series beside its real-time one
			key += " · " + r.Clock + " time"
		}
		s := byKey[key]
		if s == nil {
			s = &series{Key: key, Experiment: r.Experiment, Test: r.Test, Tool: r.Tool, Variant: r.Variant, From: r.From, To: r.To}
			byKey[key] = s
			order = append(order, key)
		}
		size := r.Size
		if size == 0 {
			size = max(r.Result.Spec.Message, r.Result.Spec.Request)
		}
		i := slices.IndexFunc(s.Points, func(a agg) bool { return a.Size == size })
		if i < 0 {
			s.Points = append(s.Points, agg{Size: size, Min: math.Inf(1), Max: math.Inf(-1)})
			i = len(s.Points) - 1
		}
		a := &s.Points[i]
		if l := r.Lateness; l != nil && l.Count > 0 {
			a.Late = hist.Summary{Count: a.Late.Count + l.Count, P50: max(a.Late.P50, l.P50), P99: max(a.Late.P99, l.P99), Max: max(a.Late.Max, l.Max)}
		}
		if e := firstNonEmpty(r.Error, r.Result.Error); e != "" {
			a.Errors = append(a.Errors, e)
			continue
		}
		v := r.Result.Figure()
		if !isRR(r.Test) {
			v /= 1e6
		}
		a.Mean = (a.Mean*float64(a.N) + v) / float64(a.N+1)
		a.N++
		a.Min, a.Max = math.Min(a.Min, v), math.Max(a.Max, v)
		if r.Ceiling > 0 {
			a.Ceiling = r.Ceiling / 1e6
			s.Ceiling = true
		}
		if r.Flag != "" {
			a.Flags = append(a.Flags, r.Flag)
		}
		if why := aboveCeiling(r); why != "" {
			a.Flags = append(a.Flags, why)
		}
		if c := r.Result.Confidence; c != nil {
			a.Confidence = append(a.Confidence, confidenceNote(c, isRR(r.Test)))
		}
	}
	var out []*series
	for _, k := range order {
		s := byKey[k]
		slices.SortFunc(s.Points, func(a, b agg) int { return a.Size - b.Size })
		out = append(out, s)
	}
	return out
}

// confidenceNote says what a point's confidence: reached, for the notes
// column: met or not, after how many runs, the width and the interval.
func confidenceNote(c *perf.ConfidenceResult, rr bool) string {
	met := "met"
	if !c.Met {
		met = "**not met**"
	}
	interval := ""
	if c.Interval != nil {
		lo, hi := c.Interval[0], c.Interval[1]
		if !rr { // bit/s: Mbit/s as the table
			lo, hi = lo/1e6, hi/1e6
		}
		interval = fmt.Sprintf(", interval %.2f–%.2f", lo, hi)
	}
	return fmt.Sprintf("%d %% confidence within ±%.2g %%: %s after %d runs (±%.2f %%%s)", c.Level, 50*c.Width, met, c.Iterations, 50*c.Achieved, interval)
}

func isRR(test string) bool { return strings.HasSuffix(test, "_RR") || test == perf.TCPCRR }

func firstNonEmpty(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}

// Write renders report.md and a self-contained report.html with
// plots (PNG and SVG) from a results folder, which must be the caller's
// own (results.Open): its files are read only if regular and bounded, and
// written only by replacing them, never through a link. It stops reading
// when ctx ends.
func Write(ctx context.Context, path string) error {
	dir, err := results.Open(path)
	if err != nil {
		return err
	}
	defer dir.Close()
	recs, err := labrun.Records(ctx, dir)
	if err != nil {
		return err
	}
	all := group(recs)
	// The labs the runs were built from, for findings, grades, figures and
	// theory.
	labs, err := readLabs(dir)
	if err != nil {
		return err
	}
	lab := labs.lab
	theoryLinesOf(labs.variant, all)
	var stream, rr []*series
	for _, s := range all {
		if isRR(s.Test) {
			rr = append(rr, s)
		} else {
			stream = append(stream, s)
		}
	}
	title := filepath.Base(dir.Path())
	var figs []string
	streamFigs, err := plotByExperiment(dir, "throughput", "throughput against message size", "Mbit/s", stream)
	if err != nil {
		return err
	}
	figs = append(figs, streamFigs...)
	if ok, err := plotIntervals(dir, recs); err != nil {
		return err
	} else if ok {
		figs = append(figs, "intervals")
	}
	rrFigs, err := plotByExperiment(dir, "transactions", "transactions per second against request/response size", "transactions/s", rr)
	if err != nil {
		return err
	}
	figs = append(figs, rrFigs...)
	labFigs, err := plotLabFigures(dir, lab, all)
	if err != nil {
		return err
	}
	figs = append(labFigs, figs...) // the lab's own figures first: they are its main ones
	gridFigs, gridTable, err := gridReport(dir, lab, recs)
	if err != nil {
		return err
	}
	figs = append(gridFigs, figs...) // a sweep's figures are its main ones

	notes, study := studySections(lab, recs)
	var md strings.Builder
	fmt.Fprintf(&md, "# atmlab report: %s\n\n%d results. Each figure is the mean of its repetitions; the plots show min–max as error bars and the path's theoretical ceiling as a dashed line.\n\n", title, len(recs))
	if dir.Exists(labrun.QuickMarker) {
		md.WriteString("This was a quick run (`--quick`): one short repetition of each point, so differences of a few per cent, and more for request/response rates, are within this machine's noise. A run without `--quick` repeats each point as the lab file says.\n\n")
	}
	md.WriteString(labs.note)
	missing, err := missingSection(dir)
	if err != nil {
		return err
	}
	md.WriteString(missing)
	md.WriteString(notes)
	for _, f := range figs {
		fmt.Fprintf(&md, "![%s](%s.png)\n\n", f, f)
	}
	md.WriteString(gridTable)
	md.WriteString(pointTables(all))
	md.WriteString(study)
	md.WriteString(pingSection(recs))
	md.WriteString(clocksSection(recs))
	md.WriteString(byClock(recs, compareVariants))
	hw, err := labrun.ReadFigures(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) { // a folder without reference figures has no comparison
		return fmt.Errorf("the report would lack its comparison with the reference figures: %w", err)
	}
	if len(hw) > 0 {
		md.WriteString(byClock(recs, func(recs []labrun.Record) string { return compare(hw, recs) }))
	}
	if err := dir.WriteFile("report.md", []byte(md.String()), 0o644); err != nil {
		return err
	}
	return writeHTML(dir, title, md.String(), figs)
}

func uniq(s []string) []string {
	slices.Sort(s)
	return slices.Compact(s)
}

// writeHTML renders the Markdown tables as HTML with the SVG figures inlined,
// so the page is one self-contained file.
func writeHTML(dir *results.Folder, title, md string, figs []string) error {
	var b strings.Builder
	fmt.Fprintf(&b, "<!doctype html><html><head><meta charset=\"utf-8\"><title>atmlab report: %s</title>\n<style>body{font-family:sans-serif;max-width:60em;margin:2em auto}table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:.2em .5em;text-align:right}td:last-child{text-align:left}</style></head><body>\n", html.EscapeString(title))
	inTable := false
	for _, line := range strings.Split(md, "\n") {
		switch {
		case strings.HasPrefix(line, "# "):
			fmt.Fprintf(&b, "<h1>%s</h1>\n", html.EscapeString(line[2:]))
		case strings.HasPrefix(line, "## "):
			fmt.Fprintf(&b, "<h2>%s</h2>\n", html.EscapeString(line[3:]))
		case strings.HasPrefix(line, "!["):
			name := line[2:strings.Index(line, "]")]
			svg, err := dir.ReadFile(name+".svg", 0)
			if err != nil {
				return err
			}
			s := string(svg)
			if i := strings.Index(s, "<svg"); i >= 0 {
				s = s[i:]
			}
			b.WriteString("<figure>" + s + "</figure>\n")
		case strings.HasPrefix(line, "|"):
			cells := strings.Split(strings.Trim(line, "|"), "|")
			if strings.HasPrefix(strings.TrimSpace(cells[0]), "---") || strings.HasPrefix(strings.TrimSpace(cells[0]), "--:") {
				continue
			}
			tag := "td"
			if !inTable {
				b.WriteString("<table>\n")
				inTable, tag = true, "th"
			}
			b.WriteString("<tr>")
			for _, c := range cells {
				fmt.Fprintf(&b, "<%s>%s</%s>", tag, html.EscapeString(strings.TrimSpace(c)), tag)
			}
			b.WriteString("</tr>\n")
		default:
			if inTable {
				b.WriteString("</table>\n")
				inTable = false
			}
			if line != "" {
				fmt.Fprintf(&b, "<p>%s</p>\n", html.EscapeString(line))
			}
		}
	}
	b.WriteString("</body></html>\n")
	return dir.WriteFile("report.html", []byte(b.String()), 0o644)
}

// yerr adapts points to gonum's error bars.
type yerr struct {
	plotter.XYs
	plotter.YErrors
}

// plotLabFigures draws the figures a lab file asks for: the series of its
// experiments, tests and variants.
func plotLabFigures(dir *results.Folder, lab *topologies.Lab, all []*series) ([]string, error) {
	if lab == nil {
		return nil, nil
	}
	var names []string
	for _, f := range lab.Figures {
		var sub []*series
		rr := false
		for _, s := range all {
			if slices.Contains(f.Experiments, s.Experiment) && (len(f.Tests) == 0 || slices.Contains(f.Tests, s.Test)) &&
				(len(f.Variants) == 0 || slices.Contains(f.Variants, cmp.Or(s.Variant, "base"))) {
				sub = append(sub, s)
				rr = rr || isRR(s.Test)
			}
		}
		if len(sub) == 0 {
			continue
		}
		ylabel := "Mbit/s"
		if rr {
			ylabel = "transactions/s"
		}
		plotFn := plotSeries
		if f.ByVariant {
			plotFn = plotVariants(lab, f.Variants)
		}
		if err := plotFn(dir, f.Name, figureTitle(f.Title, sub), ylabel, sub); err != nil {
			return nil, err
		}
		names = append(names, f.Name)
	}
	return names, nil
}

// plotVariants returns a plotter that draws each series' best mean (over
// message sizes) against the variants, in the order the figure names them
// or else the lab file's, base first: an RTT sweep, MPLS on and off.
func plotVariants(lab *topologies.Lab, order []string) func(dir *results.Folder, name, title, ylabel string, ss []*series) error {
	if len(order) == 0 {
		order = []string{"base"}
		for _, v := range lab.Variants {
			order = append(order, v.Name)
		}
	}
	return func(dir *results.Folder, name, title, ylabel string, ss []*series) error {
		p := plot.New()
		p.Title.Text = title
		p.Y.Label.Text = ylabel
		p.Legend.Top, p.Legend.Left = false, true
		var xs []string // the variants measured, in order
		for _, v := range order {
			if slices.ContainsFunc(ss, func(s *series) bool { return cmp.Or(s.Variant, "base") == v }) {
				xs = append(xs, v)
			}
		}
		p.NominalX(xs...)
		lines := map[string]plotter.XYs{} // the key without its variant → (variant index, best mean)
		var keys []string
		for _, s := range ss {
			k := strings.TrimPrefix(s.Key, s.Variant+" · ")
			best := 0.0
			for _, a := range s.Points {
				best = max(best, a.Mean)
			}
			if best == 0 {
				continue
			}
			if _, ok := lines[k]; !ok {
				keys = append(keys, k)
			}
			lines[k] = append(lines[k], plotter.XY{X: float64(slices.Index(xs, cmp.Or(s.Variant, "base"))), Y: best})
		}
		for i, k := range keys {
			xys := lines[k]
			slices.SortFunc(xys, func(a, b plotter.XY) int { return cmp.Compare(a.X, b.X) })
			line, points, err := plotter.NewLinePoints(xys)
			if err != nil {
				return err
			}
			c := plotutil.Color(i)
			line.Color, points.Color = c, c
			p.Add(line, points)
			p.Legend.Add(k, line, points)
		}
		return save(p, dir, name, len(keys))
	}
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

// compare sets each hardware figure beside the emulated mean of the
// matching points (the same test, experiment if named, size if given,
// tool: atmlab's own unless named), with the difference in percent: (emulated − hardware)
// / hardware.
func compare(hw []labrun.HardwareFigure, recs []labrun.Record) string {
	var b strings.Builder
	b.WriteString("## Compared with hardware\n\n| test | experiment | size (B) | hardware | as given | emulated | difference | source |\n|---|---|---:|---:|---|---:|---:|---|\n")
	for _, h := range hw {
		unit, scale := "Mbit/s", 1e6
		if isRR(h.Test) {
			unit, scale = "transactions/s", 1
		}
		test := h.Test
		if h.Tool != "" && h.Tool != "atmlab" {
			test += " by " + h.Tool
		}
		if h.Error != "" {
			fmt.Fprintf(&b, "| %s | %s | %d | | %s | | | %s (%s) |\n", test, h.Experiment, h.Size, h.As, h.Source, h.Error)
			continue
		}
		var sum float64
		var n, size int
		for _, r := range recs {
			if r.Test != h.Test || r.Tool != cmp.Or(h.Tool, "atmlab") || (h.Experiment != "" && r.Experiment != h.Experiment) || r.Error != "" || r.Result.Error != "" {
				continue
			}
			if h.Size != 0 && r.Size != h.Size {
				continue
			}
			if h.Size == 0 && r.Size > size { // no size given: the largest measured
				sum, n, size = 0, 0, r.Size
			}
			if h.Size == 0 && r.Size != size {
				continue
			}
			sum += r.Result.Figure()
			n++
		}
		if n == 0 {
			fmt.Fprintf(&b, "| %s | %s | %d | %.2f %s | %s | not measured | | %s |\n", test, h.Experiment, h.Size, h.Value/scale, unit, h.As, h.Source)
			continue
		}
		emu := sum / float64(n)
		fmt.Fprintf(&b, "| %s | %s | %d | %.2f %s | %s | %.2f %s | %+.1f %% | %s |\n",
			test, h.Experiment, max(h.Size, size), h.Value/scale, unit, h.As, emu/scale, unit, 100*(emu-h.Value)/h.Value, h.Source)
	}
	b.WriteString("\n")
	return b.String()
}

// compareVariants sets each variant's points beside the base lab's: the
// same experiment, test, tool, size and socket buffer, as (B − A) / A.
func compareVariants(recs []labrun.Record) string {
	type key struct {
		exp, test, tool string
		size, buf       int
	}
	means := map[string]map[key][2]float64{} // variant → point → (sum, n)
	var variants []string
	var keys []key
	for _, r := range recs {
		if r.Error != "" || r.Result.Error != "" {
			continue
		}
		v := cmp.Or(r.Variant, "base")
		if means[v] == nil {
			means[v] = map[key][2]float64{}
			if v != "base" {
				variants = append(variants, v)
			}
		}
		k := key{r.Experiment, r.Test, r.Tool, r.Size, r.SockBuf}
		m := means[v][k]
		if v == "base" && m[1] == 0 {
			keys = append(keys, k)
		}
		means[v][k] = [2]float64{m[0] + r.Result.Figure(), m[1] + 1}
	}
	if len(variants) == 0 || means["base"] == nil {
		return ""
	}
	var b strings.Builder
	b.WriteString("## Variants compared with the lab as written\n\n| experiment | test | tool | size (B) | sockbuf | variant | base | variant's | (B − A) / A |\n|---|---|---|---:|---:|---|---:|---:|---:|\n")
	for _, v := range variants {
		for _, k := range keys {
			a, bv := means["base"][k], means[v][k]
			if a[1] == 0 || bv[1] == 0 {
				continue
			}
			scale, unit := 1e6, " Mbit/s"
			if isRR(k.test) {
				scale, unit = 1, "/s"
			}
			ma, mb := a[0]/a[1], bv[0]/bv[1]
			fmt.Fprintf(&b, "| %s | %s | %s | %d | %d | %s | %.2f%s | %.2f%s | %+.1f %% |\n", k.exp, k.test, k.tool, k.size, k.buf, v, ma/scale, unit, mb/scale, unit, 100*(mb-ma)/ma)
		}
	}
	b.WriteString("\n")
	return b.String()
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
