package study

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/atmlab/atmlab/topologies/labyaml"
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
	dir        string // the lab file's directory, which File must be under
	given      string // File as the lab file writes it
	fileLine   int    // the line of its file: key
}

// FileErrors is the step after decoding that reads the file system: each
// reference's result file (refs, of the lab file named file) must be a
// regular file under the lab file's directory, of at most
// MaxReferenceBytes. Each problem is an *labyaml.Error.
func FileErrors(file string, refs []*Reference) []error {
	var errs []error
	for i, r := range refs {
		if r.given == "" {
			continue
		}
		if _, err := referenceFile(r.dir, r.given); err != nil {
			errs = append(errs, &labyaml.Error{File: file, Line: r.fileLine, Key: fmt.Sprintf("reference[%d].file", i), Msg: err.Error()})
		}
	}
	return errs
}

// MaxReferenceBytes bounds a reference's result file: iperf3 -J output of
// a long run with interval reports is a few MB.
const MaxReferenceBytes = 16 << 20

// referenceFile resolves a reference's file: a regular file under dir
// (symbolic links followed, then checked), of at most MaxReferenceBytes.
// It returns the path as given, joined to dir when relative.
func referenceFile(dir, name string) (string, error) {
	path := name
	if !filepath.IsAbs(path) {
		path = filepath.Join(dir, name)
	}
	realDir, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return path, fmt.Errorf("cannot read the lab file's directory %s: %v", dir, err)
	}
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return path, fmt.Errorf("cannot read %s: %v", path, errors.Unwrap(err))
	}
	if rel, err := filepath.Rel(realDir, real); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return path, fmt.Errorf("%s is outside the lab file's directory %s: copy the result file next to the lab file", name, dir)
	}
	st, err := os.Stat(real)
	switch {
	case err != nil:
		return path, fmt.Errorf("cannot read %s: %v", path, err)
	case !st.Mode().IsRegular():
		return path, fmt.Errorf("%s is not a regular file: give a result file (iperf3 -J or netperf output)", name)
	case st.Size() > MaxReferenceBytes:
		return path, fmt.Errorf("%s is %d bytes: a result file holds at most %d (16 MiB)", name, st.Size(), MaxReferenceBytes)
	}
	return path, nil
}

// Read returns the contents of the reference's result file, checked again
// as validation checked it (it may have changed since), read no further
// than MaxReferenceBytes.
func (r *Reference) Read() ([]byte, error) {
	dir := r.dir
	if dir == "" { // a Reference not from a lab file
		dir = filepath.Dir(r.File)
	}
	if _, err := referenceFile(dir, r.File); err != nil {
		return nil, err
	}
	f, err := os.Open(r.File)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", r.File)
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxReferenceBytes+1))
	if err == nil && len(data) > MaxReferenceBytes {
		err = fmt.Errorf("%s is larger than %d bytes", r.File, MaxReferenceBytes)
	}
	return data, err
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

func (d *decoder) references(n *yaml.Node, lab *Sections) {
	if n.Kind != yaml.SequenceNode {
		d.Errorf(n, "reference", "want a list of hardware figures, each with test:, value: and unit: (or file:)")
		return
	}
	dir := filepath.Dir(lab.File)
	for i, v := range n.Content {
		path := fmt.Sprintf("reference[%d]", i)
		r := &Reference{Line: v.Line, Tool: DefaultTool, dir: dir}
		d.Mapping(v, path, []labyaml.Field{
			{Name: "experiment", Required: false, Decode: func(key string, v *yaml.Node) {
				if s, ok := d.Scalar(key, v); ok {
					d.experimentRef(key, v, s, lab)
					r.Experiment = s
				}
			}},
			{Name: "test", Required: true, Decode: func(key string, v *yaml.Node) {
				if t := d.testList(key, &yaml.Node{Kind: yaml.SequenceNode, Content: []*yaml.Node{v}}); len(t) == 1 {
					r.Test = t[0]
				}
			}},
			{Name: "size", Required: false, Decode: func(key string, v *yaml.Node) { d.IntIn(key, v, 0, 1<<20, &r.Size) }},
			{Name: "tool", Required: false, Decode: func(key string, v *yaml.Node) { d.tool(key, v, lab, &r.Tool) }},
			{Name: "value", Required: false, Decode: func(key string, v *yaml.Node) { r.Value = d.positive(key, v) }},
			{Name: "unit", Required: false, Decode: func(key string, v *yaml.Node) { d.unit(key, v, &r.Unit) }},
			{Name: "file", Required: false, Decode: func(key string, v *yaml.Node) {
				if s, ok := d.Scalar(key, v); ok {
					r.File, r.fileLine, r.given = s, v.Line, s // checked on disk by CheckReferences
					if !filepath.IsAbs(s) {
						r.File = filepath.Join(dir, s)
					}
				}
			}},
			{Name: "format", Required: false, Decode: func(key string, v *yaml.Node) {
				if s, ok := d.Scalar(key, v); ok {
					if s != "iperf3" && s != "netperf" {
						d.Errorf(v, key, "%q: use iperf3 (-J output) or netperf (classic output)", s)
					}
					r.Format = s
				}
			}},
			{Name: "source", Required: true, Decode: func(key string, v *yaml.Node) {
				if s, ok := d.Scalar(key, v); ok {
					r.Source = s
				}
			}},
		})
		switch {
		case r.Value > 0 && r.Unit != "" && r.Normalized() > maxReference(r.Unit):
			d.Errorf(v, path+".value", "%g %s is beyond any measured figure: a reference is at most %s; check the value and its unit", r.Value, r.Unit, maxReferenceLabel(r.Unit))
		case r.File == "" && (r.Value == 0 && !labyaml.HasKey(v, "value") || r.Unit == "" && !labyaml.HasKey(v, "unit")):
			d.Errorf(v, path, "give value: and unit:, or file: with format:")
		case r.File != "" && r.Format == "":
			d.Errorf(v, path+".format", "missing: say iperf3 or netperf for %s", r.File)
		}
		lab.References = append(lab.References, r)
	}
}

// Bounds of a reference figure: 1 Tbit/s, the fastest rate a lab's link
// takes (units.MaxRate) and past any host's loopback, or a billion
// transactions a second, a nanosecond a round trip, where no network or
// loopback comes near. A figure beyond them is a typo or a wrong unit.
const (
	maxReferenceBits         = 1e12
	maxReferenceTransactions = 1e9
)

func maxReference(unit string) float64 {
	if unit == "transactions/s" {
		return maxReferenceTransactions
	}
	return maxReferenceBits
}

func maxReferenceLabel(unit string) string {
	if unit == "transactions/s" {
		return "1e9 transactions/s"
	}
	return "1 Tbit/s (1000 Gbit/s)"
}

// positive decodes a finite number above zero.
func (d *decoder) positive(key string, v *yaml.Node) float64 {
	s, ok := d.Scalar(key, v)
	if !ok {
		return 0
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || !(f > 0) || math.IsInf(f, 0) { // NaN fails f > 0
		d.Errorf(v, key, "want a positive number, got %q", s)
		return 0
	}
	return f
}

// unit decodes a reference unit (refUnits).
func (d *decoder) unit(key string, v *yaml.Node, into *string) {
	s, ok := d.Scalar(key, v)
	if !ok {
		return
	}
	if _, known := refUnits[s]; !known {
		var units []string
		for u := range refUnits {
			units = append(units, u)
		}
		slices.Sort(units)
		d.Errorf(v, key, "unknown unit %q: use %s (netperf -f M is MiB/s)", s, strings.Join(units, ", "))
		return
	}
	*into = s
}
