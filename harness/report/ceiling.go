package report

import (
	"math"

	"gonum.org/v1/plot/plotter"

	"github.com/atmlab/atmlab/harness/labrun"
	"github.com/atmlab/atmlab/harness/theory"
	"github.com/atmlab/atmlab/topologies"
)

// theoryLinesOf fills each stream series' ceiling line and each series'
// path name from its variant's lab: the ceiling computed at every byte
// between its smallest and largest size (ceilingLine), so that the AAL5
// sawtooth's steps show where they are, not only at the sizes measured.
func theoryLinesOf(variant func(name string) *topologies.Lab, ss []*series) {
	for _, s := range ss {
		lab := variant(s.Variant)
		if lab == nil {
			continue
		}
		s.Path = theory.PathName(lab, s.From, s.To)
		if !s.Ceiling || len(s.Points) < 2 {
			continue
		}
		s.Theory = ceilingLine(func(size int) (float64, bool) {
			c, ok := theory.PathCeiling(lab, s.From, s.To, s.Test, size)
			return c / 1e6, ok
		}, s.Points[0].Size, s.Points[len(s.Points)-1].Size)
	}
}

// ceilingLine is the ceiling (Mbit/s) of every byte from lo to hi as a
// line whose value at each byte is the ceiling's there: between two
// bytes it is straight, so a step of the sawtooth falls within one byte.
// A point on a straight run is left out (a UDP message's ceiling grows
// linearly with its size between two steps), except every 5 % of size, so
// that the line stays true on a logarithmic axis as well.
func ceilingLine(at func(size int) (float64, bool), lo, hi int) plotter.XYs {
	var all plotter.XYs
	for size := lo; size <= hi; size++ {
		if c, ok := at(size); ok {
			all = append(all, plotter.XY{X: float64(size), Y: c})
		}
	}
	if len(all) < 3 {
		return all
	}
	line := plotter.XYs{all[0]}
	for i := 1; i < len(all)-1; i++ {
		a, b, c := line[len(line)-1], all[i], all[i+1]
		straight := b.X-a.X > 0 && c.X-b.X == 1 &&
			math.Abs((b.Y-a.Y)/(b.X-a.X)-(c.Y-b.Y)) <= 1e-9*math.Abs(b.Y)
		if !straight || b.X >= 1.05*a.X {
			line = append(line, b)
		}
	}
	return append(line, all[len(all)-1])
}

// aboveCeiling is why a point read above its theoretical ceiling, unless
// the run's flag says so already: for a record the run flagged for
// something else (its TAPs dropped frames), or one from a folder written
// before every such point was flagged.
func aboveCeiling(r labrun.Record) string {
	why := r.AboveCeilingReason()
	if why == r.Flag {
		return ""
	}
	return why
}

// figureTitle names what a figure shows: its experiment, the test and
// tool, and the path (hosts, PHY, AAL and encapsulation, or Ethernet's
// rate) its series share, then what is plotted against what.
func figureTitle(what string, ss []*series) string {
	common := func(f func(*series) string) string {
		v := f(ss[0])
		for _, s := range ss[1:] {
			if f(s) != v {
				return ""
			}
		}
		return v
	}
	head := ""
	if e := common(func(s *series) string { return s.Experiment }); e != "" {
		head = e + ": "
	}
	if t := common(func(s *series) string { return s.Test }); t != "" {
		head += t + " test"
		if tool := common(func(s *series) string { return s.Tool }); tool != "" {
			head += " by " + tool
		}
		head += ", "
	}
	if p := common(func(s *series) string { return s.Path }); p != "" {
		head += p
	} else {
		head += "each series' path in the legend"
	}
	return head + "\n" + what
}

// withPaths adds each series' path to its legend label when the series
// of a figure cross different paths (variants of a lab).
func withPaths(labels []string, ss []*series) []string {
	for _, s := range ss[1:] {
		if s.Path != ss[0].Path {
			out := make([]string, len(labels))
			for i, l := range labels {
				out[i] = l
				if p := ss[i].Path; p != "" {
					out[i] += " (" + p + ")"
				}
			}
			return out
		}
	}
	return labels
}
