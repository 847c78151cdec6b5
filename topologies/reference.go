package topologies

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// Reference is a hardware figure to set beside an emulated one: a value
// with its unit, or a result file measured on real hardware.
type Reference struct {
	Line       int
	Experiment string // optional: the experiment it compares with
	Test       string
	Tool       string // the tool whose results it is set beside: atmlab unless given
	Size       int    // message size; 0 = any
	Value      float64
	Unit       string
	File       string // iperf3 -J output or netperf's classic output
	Format     string // iperf3 or netperf
	Source     string
}

// refUnits converts reference units to bits/s or transactions/s. netperf's
// `-f M` prints 2^20 bytes/s: write MiB/s for it.
var refUnits = map[string]float64{
	"bit/s": 1, "kbit/s": 1e3, "Mbit/s": 1e6, "Gbit/s": 1e9,
	"KB/s": 8e3, "MB/s": 8e6, "KiB/s": 8 * 1024, "MiB/s": 8 * 1 << 20,
	"transactions/s": 1,
}

// Label is the figure as written: "11.41 MiB/s".
func (r *Reference) Label() string { return fmt.Sprintf("%g %s", r.Value, r.Unit) }

// Normalized returns the value in bits/s, or transactions/s for RR tests.
func (r *Reference) Normalized() float64 { return r.Value * refUnits[r.Unit] }

func (d *decoder) references(n *yaml.Node, lab *Lab) {
	if n.Kind != yaml.SequenceNode {
		d.errorf(n, "reference", "want a list of hardware figures, each with test:, value: and unit: (or file:)")
		return
	}
	dir := filepath.Dir(lab.File)
	for i, v := range n.Content {
		path := fmt.Sprintf("reference[%d]", i)
		r := &Reference{Line: v.Line, Tool: "atmlab"}
		d.mapping(v, path, []field{
			{"experiment", false, func(key string, v *yaml.Node) {
				if s, ok := d.scalar(key, v); ok {
					d.experimentRef(key, v, s, lab)
					r.Experiment = s
				}
			}},
			{"test", true, func(key string, v *yaml.Node) {
				if t := d.testList(key, &yaml.Node{Kind: yaml.SequenceNode, Content: []*yaml.Node{v}}); len(t) == 1 {
					r.Test = t[0]
				}
			}},
			{"size", false, func(key string, v *yaml.Node) { d.intIn(key, v, 0, 1<<20, &r.Size) }},
			{"tool", false, func(key string, v *yaml.Node) { d.oneOf(key, v, &r.Tool, experimentTools...) }},
			{"value", false, func(key string, v *yaml.Node) { r.Value = d.positive(key, v) }},
			{"unit", false, func(key string, v *yaml.Node) { d.unit(key, v, &r.Unit) }},
			{"file", false, func(key string, v *yaml.Node) {
				if s, ok := d.scalar(key, v); ok {
					if !filepath.IsAbs(s) {
						s = filepath.Join(dir, s)
					}
					if _, err := os.Stat(s); err != nil {
						d.errorf(v, key, "cannot read %s: %v", s, err)
					}
					r.File = s
				}
			}},
			{"format", false, func(key string, v *yaml.Node) {
				if s, ok := d.scalar(key, v); ok {
					if s != "iperf3" && s != "netperf" {
						d.errorf(v, key, "%q: use iperf3 (-J output) or netperf (classic output)", s)
					}
					r.Format = s
				}
			}},
			{"source", true, func(key string, v *yaml.Node) {
				if s, ok := d.scalar(key, v); ok {
					r.Source = s
				}
			}},
		})
		switch {
		case r.File == "" && (r.Value == 0 || r.Unit == ""):
			d.errorf(v, path, "give value: and unit:, or file: with format:")
		case r.File != "" && r.Format == "":
			d.errorf(v, path+".format", "missing: say iperf3 or netperf for %s", r.File)
		}
		lab.References = append(lab.References, r)
	}
}

// positive decodes a number above zero.
func (d *decoder) positive(key string, v *yaml.Node) float64 {
	s, ok := d.scalar(key, v)
	if !ok {
		return 0
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f <= 0 {
		d.errorf(v, key, "want a positive number, got %q", s)
		return 0
	}
	return f
}

// unit decodes a reference unit (refUnits).
func (d *decoder) unit(key string, v *yaml.Node, into *string) {
	s, ok := d.scalar(key, v)
	if !ok {
		return
	}
	if _, known := refUnits[s]; !known {
		var units []string
		for u := range refUnits {
			units = append(units, u)
		}
		slices.Sort(units)
		d.errorf(v, key, "unknown unit %q: use %s (netperf -f M is MiB/s)", s, strings.Join(units, ", "))
		return
	}
	*into = s
}
