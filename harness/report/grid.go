package report

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"

	"github.com/atmlab/atmlab/harness/labrun"
	"github.com/atmlab/atmlab/harness/results"
	"github.com/atmlab/atmlab/topologies"
)

// gridMeasure is one figure a grid point has: an experiment's test by a
// tool at a socket buffer and clock, its repetitions' mean at the size
// where that mean is highest.
type gridMeasure struct {
	Key string // experiment · test · tool [· sockbuf N] [· virtual time]
	RR  bool
}

// gridValues is every grid point's figure of each measure: variant →
// measure key → value (NaN: measured, but every repetition failed).
func gridValues(recs []labrun.Record) (map[string]map[string]float64, []gridMeasure) {
	type acc struct{ sum, n float64 }
	sums := map[string]map[string]map[int]*acc{} // variant → measure → size
	var measures []gridMeasure
	for _, r := range recs {
		key := fmt.Sprintf("%s · %s · %s", r.Experiment, r.Test, r.Tool)
		if r.SockBuf > 0 {
			key += fmt.Sprintf(" · sockbuf %d", r.SockBuf)
		}
		if r.Clock != "" {
			key += " · " + r.Clock + " time"
		}
		if !slices.ContainsFunc(measures, func(m gridMeasure) bool { return m.Key == key }) {
			measures = append(measures, gridMeasure{key, isRR(r.Test)})
		}
		v := cmp.Or(r.Variant, "base")
		if sums[v] == nil {
			sums[v] = map[string]map[int]*acc{}
		}
		if sums[v][key] == nil {
			sums[v][key] = map[int]*acc{}
		}
		a := sums[v][key][r.Size]
		if a == nil {
			a = &acc{}
			sums[v][key][r.Size] = a
		}
		if firstNonEmpty(r.Error, r.Result.Error) != "" {
			continue
		}
		f := r.Result.Figure()
		if !isRR(r.Test) {
			f /= 1e6
		}
		a.sum, a.n = a.sum+f, a.n+1
	}
	vals := map[string]map[string]float64{}
	for v, byKey := range sums {
		vals[v] = map[string]float64{}
		for k, bySize := range byKey {
			best := math.NaN()
			for _, a := range bySize {
				if a.n > 0 && !(a.sum/a.n <= best) {
					best = a.sum / a.n
				}
			}
			vals[v][k] = best
		}
	}
	return vals, measures
}

// grid is a swept lab's points measured and their figures, for its
// figures and its table.
type grid struct {
	params   []*topologies.Param
	points   []*topologies.Variant // the grid's points measured, in grid order
	vals     map[string]map[string]float64
	measures []gridMeasure
}

// gridOf is a lab's grid as measured; nil for a lab without a sweep or
// with none of its points measured.
func gridOf(lab *topologies.Lab, recs []labrun.Record) *grid {
	if lab == nil || lab.Sweep == nil {
		return nil
	}
	g := &grid{params: lab.Sweep.Params}
	g.vals, g.measures = gridValues(recs)
	for _, v := range lab.Variants {
		if v.Grid != nil && g.vals[v.Name] != nil {
			g.points = append(g.points, v)
		}
	}
	if len(g.points) == 0 {
		return nil
	}
	return g
}

// gridFigures draws, for a lab with a sweep, a figure of each measure's
// kind (Mbit/s, transactions/s) against each swept parameter, one line
// per value of the other parameters (and per measure). It returns the
// figures' names.
func gridFigures(p *page) ([]string, error) {
	g := gridOf(p.lab, p.recs)
	if g == nil {
		return nil, nil
	}
	var figs []string
	for _, rr := range []bool{false, true} {
		var ms []gridMeasure
		for _, m := range g.measures {
			if m.RR == rr {
				ms = append(ms, m)
			}
		}
		if len(ms) == 0 {
			continue
		}
		unit, suffix := "Mbit/s", ""
		if rr {
			unit, suffix = "transactions/s", "-rr"
		}
		for i, param := range g.params {
			name := "grid-" + param.Name + suffix
			if err := plotGrid(p.dir, name, g.params, i, g.points, ms, g.vals, unit); err != nil {
				return nil, err
			}
			figs = append(figs, name)
		}
	}
	return figs, nil
}

// gridSection tabulates a swept lab's grid: each point's figure of each
// measure.
func gridSection(p *page) (string, error) {
	g := gridOf(p.lab, p.recs)
	if g == nil {
		return "", nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "## The grid\n\n%d points of %d; each figure is the mean of its repetitions at the size where it is highest.\n\n|", len(g.points), gridSize(g.params))
	for _, param := range g.params {
		b.WriteString(" " + param.Name + " |")
	}
	for _, m := range g.measures {
		unit := "Mbit/s"
		if m.RR {
			unit = "transactions/s"
		}
		fmt.Fprintf(&b, " %s (%s) |", m.Key, unit)
	}
	b.WriteString("\n|" + strings.Repeat("---|", len(g.params)) + strings.Repeat("---:|", len(g.measures)) + "\n")
	for _, v := range g.points {
		b.WriteString("|")
		for _, x := range v.Grid {
			b.WriteString(" " + x + " |")
		}
		for _, m := range g.measures {
			x, ok := g.vals[v.Name][m.Key]
			switch {
			case !ok:
				b.WriteString(" |")
			case math.IsNaN(x):
				b.WriteString(" error |")
			default:
				fmt.Fprintf(&b, " %.2f |", x)
			}
		}
		b.WriteString("\n")
	}
	b.WriteString("\n")
	return b.String(), nil
}

func gridSize(params []*topologies.Param) int {
	n := 1
	for _, p := range params {
		n *= len(p.Values)
	}
	return n
}

// plotGrid draws measures against parameter x: its values along the axis,
// a line for each combination of the other parameters' values and measure.
func plotGrid(dir *results.Folder, name string, params []*topologies.Param, x int, points []*topologies.Variant, ms []gridMeasure, vals map[string]map[string]float64, unit string) error {
	p := plot.New()
	p.Title.Text = unit + " against " + params[x].Name
	p.X.Label.Text = params[x].Name
	p.Y.Label.Text = unit
	p.Legend.Top = true // save gives it headroom above the data
	p.NominalX(params[x].Values...)
	lines := map[string]plotter.XYs{}
	var keys []string
	for _, v := range points {
		var others []string
		for i, g := range v.Grid {
			if i != x {
				others = append(others, params[i].Name+"="+g)
			}
		}
		for _, m := range ms {
			y, ok := vals[v.Name][m.Key]
			if !ok || math.IsNaN(y) {
				continue
			}
			k := strings.Join(others, ",")
			if len(ms) > 1 {
				k = strings.TrimPrefix(k+" · "+m.Key, " · ")
			}
			if _, seen := lines[k]; !seen {
				keys = append(keys, k)
			}
			lines[k] = append(lines[k], plotter.XY{X: float64(slices.Index(params[x].Values, v.Grid[x])), Y: y})
		}
	}
	lo, hi := math.Inf(1), 0.0
	for _, xys := range lines {
		for _, xy := range xys {
			lo, hi = math.Min(lo, xy.Y), math.Max(hi, xy.Y)
		}
	}
	if lo > 0 && hi/lo >= 100 { // decades apart (transactions/s over delays): a log axis shows them all
		p.Y.Scale, p.Y.Tick.Marker = plot.LogScale{}, plot.LogTicks{Prec: -1}
		p.Y.Label.Text += " (log scale)"
	}
	for i, k := range keys {
		xys := lines[k]
		slices.SortFunc(xys, func(a, b plotter.XY) int { return cmp.Compare(a.X, b.X) })
		line, pts, err := plotter.NewLinePoints(xys)
		if err != nil {
			return err
		}
		c := plotutil.Color(i)
		line.Color, pts.Color = c, c
		line.Dashes = plotutil.Dashes(i / len(plotutil.SoftColors))
		p.Add(line, pts)
		if k != "" {
			p.Legend.Add(k, line, pts)
		}
	}
	return save(p, dir, name, len(keys))
}
