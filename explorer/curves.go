package explorer

import (
	"cmp"
	"math"
	"os"
	"path/filepath"
	"strconv"

	"github.com/atmlab/atmlab/harness/labrun"
	"github.com/atmlab/atmlab/harness/theory"
	"github.com/atmlab/atmlab/topologies"
	"github.com/atmlab/atmlab/topologies/labfile"
)

// Curve is one measured path's ceiling over the window: a variant's hosts
// and links as its run was built (spec.json, else lab.yaml), so that each
// variant's points sit against their own ceiling, not the chosen path's
// (VC-mux carries 8 octets less a packet than LLC/SNAP, and reads 3 %
// above LLC's line at small sizes).
type Curve struct {
	Variant string  `json:"variant"`
	Test    string  `json:"test"`
	Path    string  `json:"path"` // theory.PathName: "h1 → h2 over OC-3c, AAL5, VC-mux"
	Line    []Point `json:"line"`
}

// Axis is the sawtooth chart's scale: the goodput range and round ticks
// (Ticks) on both axes, so that the page only maps them to pixels.
type Axis struct {
	YMin   float64 `json:"y_min_bps"`
	YMax   float64 `json:"y_max_bps"`
	YTicks []Tick  `json:"y_ticks"` // in bit/s, labelled in Mbit/s
	XTicks []Tick  `json:"x_ticks"` // in bytes
}

// Tick is an axis tick: its value and its label.
type Tick struct {
	Value float64 `json:"value"`
	Label string  `json:"label"`
}

// folderLab returns a results folder's lab for a variant: from spec.json
// (the labs the runs were built from), else its lab.yaml with the variant
// applied; nil if neither reads.
func folderLab(dir string) func(variant string) *topologies.Lab {
	if b, err := os.ReadFile(filepath.Join(dir, topologies.SpecFile)); err == nil {
		if spec, err := topologies.ReadSpec(b); err == nil {
			return func(v string) *topologies.Lab { return spec.Lab(cmp.Or(v, "base")) }
		}
	}
	lab, err := labfile.Load(filepath.Join(dir, "lab.yaml"))
	return func(v string) *topologies.Lab {
		if err != nil {
			return nil
		}
		l, err := lab.WithVariant(cmp.Or(v, "base"))
		if err != nil {
			return nil
		}
		return l
	}
}

// curves gives each measured point the curve of its variant's path and
// test over the window from..to (Measured.Curve; -1 when its lab is not
// in the folder).
func curves(dir string, recs []labrun.Record, ms []Measured, from, to int) []Curve {
	labOf := folderLab(dir)
	type key struct{ variant, from, to, test string }
	index := map[key]int{}
	out := []Curve{}
	for i := range ms {
		r := recs[ms[i].rec]
		k := key{r.Variant, r.From, r.To, r.Test}
		n, ok := index[k]
		if !ok {
			n = -1
			if lab := labOf(r.Variant); lab != nil {
				c := Curve{Variant: cmp.Or(r.Variant, "base"), Test: r.Test, Path: theory.PathName(lab, r.From, r.To)}
				for size := from; size <= to; size++ {
					if g, ok := theory.PathCeiling(lab, r.From, r.To, r.Test, size); ok {
						c.Line = append(c.Line, Point{Size: size, Goodput: g})
					}
				}
				if len(c.Line) > 0 {
					n = len(out)
					out = append(out, c)
				}
			}
			index[k] = n
		}
		ms[i].Curve = n
	}
	return out
}

// axis scales the chart to the chosen path's line, the curves and the
// measured points in the window, with round ticks.
func axis(f *Figures) Axis {
	lo, hi := math.Inf(1), math.Inf(-1)
	see := func(g float64) { lo, hi = math.Min(lo, g), math.Max(hi, g) }
	for _, p := range f.Detail.Line {
		see(p.Goodput)
	}
	for _, c := range f.Detail.Curves {
		for _, p := range c.Line {
			see(p.Goodput)
		}
	}
	for _, m := range f.Detail.Measured {
		if m.Size >= f.From && m.Size <= f.To {
			see(m.Throughput)
		}
	}
	if hi <= lo {
		lo, hi = lo-1e6, hi+1e6
	}
	pad := (hi - lo) * 0.05
	a := Axis{YMin: lo - pad, YMax: hi + pad}
	for _, v := range NiceTicks(a.YMin/1e6, a.YMax/1e6, 5) {
		a.YTicks = append(a.YTicks, Tick{Value: v.Value * 1e6, Label: v.Label})
	}
	a.XTicks = NiceTicks(float64(f.From), float64(f.To), 6)
	return a
}

// NiceTicks are about n ticks between lo and hi at a round step (1, 2 or
// 5 times a power of ten), each labelled with the step's decimals and no
// more: 120, 125, 130 or 0.5, 1, 1.5, never 132.465.
func NiceTicks(lo, hi float64, n int) []Tick {
	if !(hi > lo) || n < 1 || math.IsInf(lo, 0) || math.IsInf(hi, 0) {
		return nil
	}
	raw := (hi - lo) / float64(n)
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := mag // the round step nearest raw, on a log scale
	for _, m := range []float64{2, 5, 10} {
		if math.Abs(math.Log(m*mag/raw)) < math.Abs(math.Log(step/raw)) {
			step = m * mag
		}
	}
	decimals := max(0, -int(math.Floor(math.Log10(step)+1e-9)))
	var out []Tick
	for k := math.Ceil(lo/step - 1e-9); k*step <= hi+step*1e-9; k++ {
		v := k * step
		if v == 0 {
			v = 0 // no "-0"
		}
		out = append(out, Tick{Value: v, Label: strconv.FormatFloat(v, 'f', decimals, 64)})
	}
	return out
}
