package topologies

import (
	"fmt"
	"slices"
	"strconv"

	"gopkg.in/yaml.v3"
)

// Finding is one claim of the study a lab reproduces, with the check that
// decides whether the emulation reproduces it: the change from a baseline
// (another measured point, or a hardware figure) to a measured point must
// fall in a range. The report shows both numbers, the verdict and why.
type Finding struct {
	Line     int
	Claim    string    // the study's finding, in a sentence
	Study    string    // the study's figures, as it gives them
	Measured Selector  // the emulated figure the claim is about
	Against  *Selector // the emulated baseline, or
	Hardware *Reference
	Change   [2]float64 // (measured − baseline) / baseline, in percent: [low, high]
	Why      string     // what the emulator models and does not, for this claim
	// RealHost, if set, says why the claim's figure rests on real-host
	// behaviour virtual hosts lack (Linux's TCP, a kernel's loopback): the
	// report names the claim's virtual-time verdict as such.
	RealHost string
}

// Selector picks results: the mean over repetitions of one point, or, with
// no size, the largest mean over the sizes (a "maximum" in the study).
type Selector struct {
	Variant    string // "base" unless given
	Experiment string
	Test       string
	Tool       string // "atmlab" unless given
	Size       int    // 0: the best size
	SockBuf    int    // -1: any
}

func (d *decoder) findings(n *yaml.Node, lab *Lab) {
	if n.Kind != yaml.SequenceNode {
		d.errorf(n, "findings", "want a list of claims, each with claim:, measured:, against: (or hardware:) and change:")
		return
	}
	for i, v := range n.Content {
		path := fmt.Sprintf("findings[%d]", i)
		f := &Finding{Line: v.Line}
		text := func(into *string) func(string, *yaml.Node) {
			return func(key string, v *yaml.Node) {
				if s, ok := d.scalar(key, v); ok {
					*into = s
				}
			}
		}
		d.mapping(v, path, []field{
			{"claim", true, text(&f.Claim)},
			{"study", false, text(&f.Study)},
			{"why", true, text(&f.Why)},
			{"real_host", false, text(&f.RealHost)},
			{"measured", true, func(key string, v *yaml.Node) { f.Measured = d.selector(key, v, lab) }},
			{"against", false, func(key string, v *yaml.Node) { s := d.selector(key, v, lab); f.Against = &s }},
			{"hardware", false, func(key string, v *yaml.Node) {
				r := &Reference{Line: v.Line}
				f.Hardware = r
				d.mapping(v, key, []field{
					{"value", true, func(key string, v *yaml.Node) { r.Value = d.positive(key, v) }},
					{"unit", true, func(key string, v *yaml.Node) { d.unit(key, v, &r.Unit) }},
				})
			}},
			{"change", true, func(key string, v *yaml.Node) {
				if v.Kind != yaml.SequenceNode || len(v.Content) != 2 {
					d.errorf(v, key, "want [low, high] in percent, such as [-19, -13]")
					return
				}
				for j, x := range v.Content {
					c, err := strconv.ParseFloat(x.Value, 64)
					if err != nil {
						d.errorf(x, key, "want a number of percent, got %q", x.Value)
					}
					f.Change[j] = c
				}
				if f.Change[0] > f.Change[1] {
					d.errorf(v, key, "low %g is above high %g", f.Change[0], f.Change[1])
				}
			}},
		})
		if (f.Against == nil) == (f.Hardware == nil) {
			d.errorf(v, path, "give against: (an emulated point) or hardware: (a figure), one of them")
		}
		lab.Findings = append(lab.Findings, f)
	}
}

// selector decodes {variant, experiment, test, tool, size, sockbuf}.
func (d *decoder) selector(key string, v *yaml.Node, lab *Lab) Selector {
	s := Selector{Variant: "base", Tool: "atmlab", SockBuf: -1}
	d.mapping(v, key, []field{
		{"variant", false, func(key string, v *yaml.Node) {
			if name, ok := d.scalar(key, v); ok {
				d.variantRef(key, v, name, lab)
				s.Variant = name
			}
		}},
		{"experiment", true, func(key string, v *yaml.Node) {
			if name, ok := d.scalar(key, v); ok {
				d.experimentRef(key, v, name, lab)
				s.Experiment = name
			}
		}},
		{"test", true, func(key string, v *yaml.Node) {
			if t := d.testList(key, &yaml.Node{Kind: yaml.SequenceNode, Content: []*yaml.Node{v}}); len(t) == 1 {
				s.Test = t[0]
			}
		}},
		{"tool", false, func(key string, v *yaml.Node) { d.oneOf(key, v, &s.Tool, experimentTools...) }},
		{"size", false, func(key string, v *yaml.Node) { d.intIn(key, v, 1, 1<<20, &s.Size) }},
		{"sockbuf", false, func(key string, v *yaml.Node) { d.intIn(key, v, 0, 64<<20, &s.SockBuf) }},
	})
	return s
}

// experimentRef checks that an experiment of the lab has the name.
func (d *decoder) experimentRef(key string, v *yaml.Node, name string, lab *Lab) {
	if !slices.ContainsFunc(lab.Experiments, func(e *Experiment) bool { return e.Name == name }) {
		d.errorf(v, key, "no experiment named %q", name)
	}
}

// variantRef checks that a variant of the lab, or base, has the name.
func (d *decoder) variantRef(key string, v *yaml.Node, name string, lab *Lab) {
	if name != "base" && !slices.ContainsFunc(lab.Variants, func(va *Variant) bool { return va.Name == name }) {
		d.errorf(v, key, "no variant named %q (base is the lab as written)", name)
	}
}

// String names a selection for people: "task2-hub UDP_STREAM 512 B (amsel1-nt)".
func (s Selector) String() string {
	out := s.Experiment + " " + s.Test
	if s.Tool != "atmlab" {
		out += " by " + s.Tool
	}
	if s.Size > 0 {
		out += fmt.Sprintf(" %d B", s.Size)
	} else {
		out += ", best size"
	}
	if s.SockBuf >= 0 {
		out += fmt.Sprintf(", sockbuf %d", s.SockBuf)
	}
	if s.Variant != "base" {
		out += " (" + s.Variant + ")"
	}
	return out
}

// Grades is a study's letter scale for tools (the Sandia study's): A to D
// by thresholds, F past the last. Bandwidth grades need at least the
// threshold (Mbit/s), CPU grades at most (percent of one core).
type Grades struct {
	Line      int
	Bandwidth [4]float64 // A, B, C, D: at least
	CPU       [4]float64 // A, B, C, D: at most
	Study     []Graded   // the study's own rows, graded beside atmlab's
}

// Graded is one of the study's measured rows: a tool with its bandwidth
// (Mbit/s) and CPU (percent).
type Graded struct {
	Name      string
	Bandwidth float64
	CPU       float64
}

// Letter grades v on a scale; higher reports whether more is better.
func Letter(v float64, scale [4]float64, higher bool) string {
	for i, t := range scale {
		if higher && v >= t || !higher && v <= t {
			return string(rune('A' + i))
		}
	}
	return "F"
}

func (d *decoder) grades(n *yaml.Node, lab *Lab) {
	g := &Grades{Line: n.Line}
	lab.Grades = g
	scale := func(into *[4]float64, higher bool) func(string, *yaml.Node) {
		return func(key string, v *yaml.Node) {
			if v.Kind != yaml.SequenceNode || len(v.Content) != 4 {
				d.errorf(v, key, "want the thresholds of A, B, C and D, such as [900, 800, 700, 600]")
				return
			}
			for i, x := range v.Content {
				into[i] = d.positive(key, x)
				if i > 0 && higher == (into[i] >= into[i-1]) {
					d.errorf(x, key, "thresholds must run from A to D, each %s than the last", map[bool]string{true: "lower", false: "higher"}[higher])
				}
			}
		}
	}
	d.mapping(n, "grades", []field{
		{"bandwidth", true, scale(&g.Bandwidth, true)},
		{"cpu", true, scale(&g.CPU, false)},
		{"study", false, func(key string, v *yaml.Node) {
			if v.Kind != yaml.SequenceNode {
				d.errorf(v, key, "want a list of rows such as {name: \"iperf TCP\", bandwidth: 952, cpu: 32}")
				return
			}
			for _, row := range v.Content {
				var r Graded
				d.mapping(row, key, []field{
					{"name", true, func(key string, v *yaml.Node) { r.Name, _ = d.scalar(key, v) }},
					{"bandwidth", true, func(key string, v *yaml.Node) { r.Bandwidth = d.positive(key, v) }},
					{"cpu", true, func(key string, v *yaml.Node) { r.CPU = d.positive(key, v) }},
				})
				g.Study = append(g.Study, r)
			}
		}},
	})
}

// Figure is a plot a lab file asks the report for beside its default ones:
// the series of some experiments, tests and variants on one pair of axes,
// such as a hub path against a switched one.
type Figure struct {
	Name        string // file name: NAME.png and NAME.svg
	Title       string
	Experiments []string
	Tests       []string // none: all
	Variants    []string // none: all
	ByVariant   bool     // x axis: the variants in order (an RTT sweep), not message size
}

func (d *decoder) figures(n *yaml.Node, lab *Lab) {
	if n.Kind != yaml.SequenceNode {
		d.errorf(n, "figures", "want a list of figures, each with name:, title: and experiments:")
		return
	}
	for i, v := range n.Content {
		path := fmt.Sprintf("figures[%d]", i)
		f := &Figure{}
		d.mapping(v, path, []field{
			{"name", true, func(key string, v *yaml.Node) {
				if s, ok := d.scalar(key, v); ok {
					if !labNameRE.MatchString(s) {
						d.errorf(v, key, "%q: use lowercase letters, digits and '-' (it names the image files)", s)
					}
					f.Name = s
				}
			}},
			{"title", true, func(key string, v *yaml.Node) { f.Title, _ = d.scalar(key, v) }},
			{"experiments", true, func(key string, v *yaml.Node) {
				f.Experiments = d.nameList(key, v)
				for _, e := range f.Experiments {
					d.experimentRef(key, v, e, lab)
				}
			}},
			{"tests", false, func(key string, v *yaml.Node) { f.Tests = d.testList(key, v) }},
			{"x", false, func(key string, v *yaml.Node) {
				var x string
				d.oneOf(key, v, &x, "size", "variant")
				f.ByVariant = x == "variant"
			}},
			{"variants", false, func(key string, v *yaml.Node) {
				f.Variants = d.nameList(key, v)
				for _, name := range f.Variants {
					d.variantRef(key, v, name, lab)
				}
			}},
		})
		lab.Figures = append(lab.Figures, f)
	}
}
