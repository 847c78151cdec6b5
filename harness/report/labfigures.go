package report

import (
	"cmp"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"

	"github.com/atmlab/atmlab/harness/results"
	"github.com/atmlab/atmlab/topologies"
)

// labFigures draws the figures a lab file asks for: the series of its
// experiments, tests and variants.
func labFigures(p *page) ([]string, error) {
	dir, lab, all := p.dir, p.lab, p.all
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
