package study

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"

	"gopkg.in/yaml.v3"

	"github.com/atmlab/atmlab/topologies/labyaml"
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

func (d *decoder) findings(n *yaml.Node, lab *Sections) {
	if n.Kind != yaml.SequenceNode {
		d.Errorf(n, "findings", "want a list of claims, each with claim:, measured:, against: (or hardware:) and change:")
		return
	}
	for i, v := range n.Content {
		path := fmt.Sprintf("findings[%d]", i)
		f := &Finding{Line: v.Line}
		text := func(into *string) func(string, *yaml.Node) {
			return func(key string, v *yaml.Node) {
				if s, ok := d.Scalar(key, v); ok {
					*into = s
				}
			}
		}
		d.Mapping(v, path, []labyaml.Field{
			{Name: "claim", Required: true, Decode: text(&f.Claim)},
			{Name: "study", Required: false, Decode: text(&f.Study)},
			{Name: "why", Required: true, Decode: text(&f.Why)},
			{Name: "real_host", Required: false, Decode: text(&f.RealHost)},
			{Name: "measured", Required: true, Decode: func(key string, v *yaml.Node) { f.Measured = d.selector(key, v, lab) }},
			{Name: "against", Required: false, Decode: func(key string, v *yaml.Node) { s := d.selector(key, v, lab); f.Against = &s }},
			{Name: "hardware", Required: false, Decode: func(key string, v *yaml.Node) {
				r := &Reference{Line: v.Line}
				f.Hardware = r
				d.Mapping(v, key, []labyaml.Field{
					{Name: "value", Required: true, Decode: func(key string, v *yaml.Node) { r.Value = d.positive(key, v) }},
					{Name: "unit", Required: true, Decode: func(key string, v *yaml.Node) { d.unit(key, v, &r.Unit) }},
				})
			}},
			{Name: "change", Required: true, Decode: func(key string, v *yaml.Node) {
				if v.Kind != yaml.SequenceNode || len(v.Content) != 2 {
					d.Errorf(v, key, "want [low, high] in percent, such as [-19, -13]")
					return
				}
				for j, x := range v.Content {
					c, err := strconv.ParseFloat(x.Value, 64)
					if err != nil {
						d.Errorf(x, key, "want a number of percent, got %q", x.Value)
					}
					f.Change[j] = c
				}
				if f.Change[0] > f.Change[1] {
					d.Errorf(v, key, "low %g is above high %g", f.Change[0], f.Change[1])
				}
			}},
		})
		if (f.Against == nil) == (f.Hardware == nil) {
			d.Errorf(v, path, "give against: (an emulated point) or hardware: (a figure), one of them")
		}
		lab.Findings = append(lab.Findings, f)
	}
}

// selector decodes {variant, experiment, test, tool, size, sockbuf}.
func (d *decoder) selector(key string, v *yaml.Node, lab *Sections) Selector {
	s := Selector{Variant: "base", Tool: DefaultTool, SockBuf: -1}
	d.Mapping(v, key, []labyaml.Field{
		{Name: "variant", Required: false, Decode: func(key string, v *yaml.Node) {
			if name, ok := d.Scalar(key, v); ok {
				d.variantRef(key, v, name, lab)
				s.Variant = name
			}
		}},
		{Name: "experiment", Required: true, Decode: func(key string, v *yaml.Node) {
			if name, ok := d.Scalar(key, v); ok {
				d.experimentRef(key, v, name, lab)
				s.Experiment = name
			}
		}},
		{Name: "test", Required: true, Decode: func(key string, v *yaml.Node) {
			if t := d.testList(key, &yaml.Node{Kind: yaml.SequenceNode, Content: []*yaml.Node{v}}); len(t) == 1 {
				s.Test = t[0]
			}
		}},
		{Name: "tool", Required: false, Decode: func(key string, v *yaml.Node) { d.tool(key, v, lab, &s.Tool) }},
		{Name: "size", Required: false, Decode: func(key string, v *yaml.Node) { d.IntIn(key, v, 1, 1<<20, &s.Size) }},
		{Name: "sockbuf", Required: false, Decode: func(key string, v *yaml.Node) { d.IntIn(key, v, 0, 64<<20, &s.SockBuf) }},
	})
	return s
}

// experimentRef checks that an experiment of the lab has the name.
func (d *decoder) experimentRef(key string, v *yaml.Node, name string, lab *Sections) {
	if !slices.ContainsFunc(lab.Experiments, func(e *Experiment) bool { return e.Name == name }) {
		d.Errorf(v, key, "no experiment named %q", name)
	}
}

// variantRef checks that a variant of the lab, or base, has the name.
func (d *decoder) variantRef(key string, v *yaml.Node, name string, lab *Sections) {
	if name != "base" && !lab.Variant(name) {
		d.Errorf(v, key, "no variant named %q (base is the lab as written)", name)
	}
}

// String names a selection for people: "task2-hub UDP_STREAM 512 B (amsel1-nt)".
func (s Selector) String() string {
	out := s.Experiment + " " + s.Test
	if s.Tool != DefaultTool {
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

func (d *decoder) grades(n *yaml.Node, lab *Sections) {
	g := &Grades{Line: n.Line}
	lab.Grades = g
	scale := func(into *[4]float64, higher bool) func(string, *yaml.Node) {
		return func(key string, v *yaml.Node) {
			if v.Kind != yaml.SequenceNode || len(v.Content) != 4 {
				d.Errorf(v, key, "want the thresholds of A, B, C and D, such as [900, 800, 700, 600]")
				return
			}
			for i, x := range v.Content {
				into[i] = d.positive(key, x)
				if i > 0 && higher == (into[i] >= into[i-1]) {
					d.Errorf(x, key, "thresholds must run from A to D, each %s than the last", map[bool]string{true: "lower", false: "higher"}[higher])
				}
			}
		}
	}
	d.Mapping(n, "grades", []labyaml.Field{
		{Name: "bandwidth", Required: true, Decode: scale(&g.Bandwidth, true)},
		{Name: "cpu", Required: true, Decode: scale(&g.CPU, false)},
		{Name: "study", Required: false, Decode: func(key string, v *yaml.Node) {
			if v.Kind != yaml.SequenceNode {
				d.Errorf(v, key, "want a list of rows such as {name: \"iperf TCP\", bandwidth: 952, cpu: 32}")
				return
			}
			for _, row := range v.Content {
				var r Graded
				d.Mapping(row, key, []labyaml.Field{
					{Name: "name", Required: true, Decode: func(key string, v *yaml.Node) { r.Name, _ = d.Scalar(key, v) }},
					{Name: "bandwidth", Required: true, Decode: func(key string, v *yaml.Node) { r.Bandwidth = d.positive(key, v) }},
					{Name: "cpu", Required: true, Decode: func(key string, v *yaml.Node) { r.CPU = d.positive(key, v) }},
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

func (d *decoder) figures(n *yaml.Node, lab *Sections) {
	if n.Kind != yaml.SequenceNode {
		d.Errorf(n, "figures", "want a list of figures, each with name:, title: and experiments:")
		return
	}
	for i, v := range n.Content {
		path := fmt.Sprintf("figures[%d]", i)
		f := &Figure{}
		d.Mapping(v, path, []labyaml.Field{
			{Name: "name", Required: true, Decode: func(key string, v *yaml.Node) {
				if s, ok := d.Scalar(key, v); ok {
					if !figureNameRE.MatchString(s) {
						d.Errorf(v, key, "%q: use lowercase letters, digits and '-' (it names the image files)", s)
					}
					f.Name = s
				}
			}},
			{Name: "title", Required: true, Decode: func(key string, v *yaml.Node) { f.Title, _ = d.Scalar(key, v) }},
			{Name: "experiments", Required: true, Decode: func(key string, v *yaml.Node) {
				f.Experiments = d.nameList(key, v)
				for _, e := range f.Experiments {
					d.experimentRef(key, v, e, lab)
				}
			}},
			{Name: "tests", Required: false, Decode: func(key string, v *yaml.Node) { f.Tests = d.testList(key, v) }},
			{Name: "x", Required: false, Decode: func(key string, v *yaml.Node) {
				var x string
				labyaml.OneOf(d.Decoder, key, v, &x, "size", "variant")
				f.ByVariant = x == "variant"
			}},
			{Name: "variants", Required: false, Decode: func(key string, v *yaml.Node) {
				f.Variants = d.nameList(key, v)
				for _, name := range f.Variants {
					d.variantRef(key, v, name, lab)
				}
			}},
		})
		lab.Figures = append(lab.Figures, f)
	}
}

// figureNameRE is a figure's name, which names its image files: a lab's
// name's form.
var figureNameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,23}$`)
