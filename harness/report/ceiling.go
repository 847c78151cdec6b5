package report

import (
	"cmp"
	"fmt"
	"math"
	"strings"

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

// aboveCeiling is why a point read above its theoretical ceiling, for a
// record the run did not flag: nothing can carry more than its link, so
// the excess is the measurement's, and the report says whose.
func aboveCeiling(r labrun.Record) string {
	v := r.Result.Figure()
	if r.Ceiling <= 0 || v <= r.Ceiling || r.Flag != "" {
		return ""
	}
	why := "the tool's timing: it divides what arrived by a time window that is a little shorter than the time the data took to arrive"
	if r.Tool == "iperf3" && r.Test == "UDP_STREAM" {
		why = "iperf3 counts the datagrams the receiver read in each of its one-second reports; a report's window is timed when the receiver wakes, and the datagrams read in it arrived over a slightly longer time, so a window reads a little more than the link carried"
	}
	return fmt.Sprintf("%.1f %% of the ceiling, above it: no link carries more than its ceiling; the excess (%.2f %%) is %s", 100*v/r.Ceiling, 100*(v/r.Ceiling-1), why)
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
	var head []string
	if e := common(func(s *series) string { return s.Experiment }); e != "" {
		head = append(head, e+":")
	}
	if t := common(func(s *series) string { return s.Test }); t != "" {
		tool := common(func(s *series) string { return s.Tool })
		head = append(head, strings.TrimSpace(t+" test "+cmp.Or(tool, "")))
	}
	if p := common(func(s *series) string { return s.Path }); p != "" {
		head = append(head, p)
	} else {
		head = append(head, "each series' path in the legend")
	}
	return strings.Join(head, " ") + "\n" + what
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
