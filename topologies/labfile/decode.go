// Package labfile reads lab files (docs/design.md, "Lab files") into
// resolved labs (package topologies): Decode, then Resolve, every problem
// an *labyaml.Error at its line; the variants and sweeps a lab file
// describes are resolved from its tree held in memory (Raw).
package labfile

import (
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"regexp"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/atmlab/atmlab/emulator/units"
	"github.com/atmlab/atmlab/topologies"
	"github.com/atmlab/atmlab/topologies/kinds"
	"github.com/atmlab/atmlab/topologies/labyaml"
	"github.com/atmlab/atmlab/topologies/plan"
	"github.com/atmlab/atmlab/topologies/settings"
	"github.com/atmlab/atmlab/topologies/study"
)

// Load reads and validates a lab file. All problems come back at once, joined,
// each an *labyaml.Error.
func Load(path string) (*topologies.Lab, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read lab file: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1)) // /dev/zero ends too
	if err != nil {
		return nil, fmt.Errorf("read lab file: %w", err)
	}
	return Parse(path, data)
}

// Parse validates a lab file's contents (file names it in errors): Decode,
// Resolve as written, then the separate step that reads the file system,
// CheckReferences.
func Parse(file string, data []byte) (*topologies.Lab, error) {
	raw, err := Decode(file, data)
	if err != nil {
		return nil, err
	}
	return decode(raw, func(l *topologies.Lab) []error { return study.FileErrors(l.File, l.References) })
}

// Raw is a lab file's YAML tree, held in memory: Resolve makes a lab of
// it, as written or as a variant makes it, without reading the file again.
type Raw struct {
	File string
	tree *yaml.Node // the top mapping

	// The lab as written, resolved once (before link defaults): every lab
	// made of the tree, a variant's too, is a copy of it (resolved).
	once     sync.Once
	base     *topologies.Lab
	baseErrs []error
}

// Decode reads a lab file's contents into its YAML tree, checking its size,
// encoding, that it is one YAML document and that it carries no tags
// beyond YAML's core ones (labyaml.TagErrors); it touches no file system.
func Decode(file string, data []byte) (*Raw, error) {
	if err := checkSize(file, data); err != nil {
		return nil, err
	}
	top, err := labyaml.Document(file, data, "a second YAML document: a lab file is one document; remove the --- and what follows, or put it in its own file")
	if err != nil {
		return nil, err
	}
	if top == nil {
		return nil, &labyaml.Error{File: file, Line: 1, Key: "name", Msg: "the lab file is empty: it needs name: and topology:"}
	}
	if errs := labyaml.TagErrors(file, top); len(errs) > 0 {
		return nil, labyaml.JoinByLine(errs)
	}
	return &Raw{File: file, tree: top}, nil
}

// Resolve makes the typed lab a lab file's tree describes, every default
// applied and every check that can fail on input done (PVC plans, routes
// and label plans included), so that Build cannot fail on it. variant ""
// is the lab as written, with all its experiments and variants; a
// variant's name ("base" too) is the lab that variant measures (WithVariant).
// All problems come back at once, joined, each an *labyaml.Error. It touches no
// file system: reference files are checked by CheckReferences.
func Resolve(raw *Raw, variant string) (*topologies.Lab, error) {
	if variant != "" {
		lab, errs := raw.Variant(variant)
		if errs != nil {
			return nil, errors.Join(errs...)
		}
		return lab, nil
	}
	return decode(raw, nil)
}

// decode makes a lab of a lab file's YAML tree (its top mapping); more,
// if not nil, is a further step's problems (the reference files'), so that
// every problem comes back at once.
func decode(raw *Raw, more func(*topologies.Lab) []error) (*topologies.Lab, error) {
	lab, errs := raw.resolved()
	if more != nil {
		errs = append(errs, more(lab)...)
	}
	if len(errs) > 0 {
		return nil, labyaml.JoinByLine(errs)
	}
	linkDefaults(lab)
	return lab, nil
}

// resolve decodes, checks and plans the lab as written; the lab comes back
// with the problems, as far as it was decoded.
func resolve(raw *Raw) (*topologies.Lab, []error) {
	resolves.Add(1)
	d := &decoder{labyaml.Decoder{File: raw.File}}
	lab := &topologies.Lab{File: raw.File, Source: raw}
	d.lab(raw.tree, lab)
	if len(d.Errs) == 0 {
		d.Errs = plan.PVCs(lab)
	}
	if len(d.Errs) == 0 {
		d.Errs = plan.CheckNative(lab)
	}
	return lab, d.Errs
}

// resolves counts resolve's calls: a test shows that variants do not
// resolve the file again.
var resolves atomic.Int64

// decoder decodes one lab file's tree into a lab, collecting every
// problem.
type decoder struct{ labyaml.Decoder }

func (d *decoder) rate(key string, v *yaml.Node, into *units.BitRate) {
	setting(d, key, v, settings.ParseRate, into)
}

// setting decodes a lab file's value with the parser of its row of
// settings.Settings.
func setting[T any](d *decoder, key string, v *yaml.Node, parse func(string) (T, error), into *T) {
	labyaml.Parsed(&d.Decoder, key, v, parse, into)
}

// duration decodes a Go duration from 0 to settings.MaxDuration.
func (d *decoder) duration(key string, v *yaml.Node, into *time.Duration) {
	d.DurationIn(key, v, settings.MaxDuration, into)
}

var nameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9_]*$`)
var labNameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,23}$`)

func (d *decoder) lab(n *yaml.Node, lab *topologies.Lab) {
	var nodesNode, linksNode, partsNode, expNode, refNode, varNode, sweepNode, findNode, gradeNode, figNode *yaml.Node
	d.Mapping(n, "", []labyaml.Field{
		{Name: "name", Required: true, Decode: func(key string, v *yaml.Node) {
			if s, ok := d.Scalar(key, v); ok {
				if !labNameRE.MatchString(s) {
					d.Errorf(v, key, "%q: use 1-24 lowercase letters, digits and '-', starting with a letter or digit (namespaces are named <name>-<node>)", s)
				}
				lab.Name = s
			}
		}},
		{Name: "seed", Required: false, Decode: func(key string, v *yaml.Node) {
			var s int
			d.IntIn(key, v, 0, 1<<31-1, &s)
			lab.Seed = uint64(s)
		}},
		{Name: "topology", Required: true, Decode: func(key string, v *yaml.Node) {
			d.Mapping(v, key, []labyaml.Field{
				{Name: "nodes", Required: true, Decode: func(_ string, v *yaml.Node) { nodesNode = v }},
				{Name: "links", Required: false, Decode: func(_ string, v *yaml.Node) { linksNode = v }},
			})
		}},
		{Name: "parts", Required: false, Decode: func(_ string, v *yaml.Node) { partsNode = v }},
		{Name: "experiments", Required: false, Decode: func(_ string, v *yaml.Node) { expNode = v }},
		{Name: "reference", Required: false, Decode: func(_ string, v *yaml.Node) { refNode = v }},
		{Name: "variants", Required: false, Decode: func(_ string, v *yaml.Node) { varNode = v }},
		{Name: "sweep", Required: false, Decode: func(_ string, v *yaml.Node) { sweepNode = v }},
		{Name: "findings", Required: false, Decode: func(_ string, v *yaml.Node) { findNode = v }},
		{Name: "grades", Required: false, Decode: func(_ string, v *yaml.Node) { gradeNode = v }},
		{Name: "figures", Required: false, Decode: func(_ string, v *yaml.Node) { figNode = v }},
		{Name: "notes", Required: false, Decode: func(key string, v *yaml.Node) {
			if s, ok := d.Scalar(key, v); ok {
				lab.Notes = s
			}
		}},
	})
	if nodesNode != nil {
		d.nodes(nodesNode, lab)
	}
	if linksNode != nil {
		d.links(linksNode, lab)
	}
	d.check(lab)
	if partsNode != nil && len(d.Errs) == 0 {
		d.parts(partsNode, lab)
	}
	st := &study.Sections{
		File: lab.File,
		Host: func(name string) (string, bool) {
			n := lab.Node(name)
			if n == nil || n.Kind != topologies.KindHost {
				return "", false
			}
			return n.Address(), true
		},
		Variant: func(name string) bool {
			return slices.ContainsFunc(lab.Variants, func(va *topologies.Variant) bool { return va.Name == name })
		},
	}
	if expNode != nil {
		study.DecodeExperiments(&d.Decoder, expNode, st)
	}
	if refNode != nil {
		study.DecodeReferences(&d.Decoder, refNode, st)
	}
	lab.Experiments, lab.References = st.Experiments, st.References
	if varNode != nil {
		d.variants(varNode, lab)
	}
	if sweepNode != nil {
		d.sweep(sweepNode, lab)
	}
	study.CheckExperimentVariants(&d.Decoder, st)
	if findNode != nil {
		study.DecodeFindings(&d.Decoder, findNode, st)
	}
	if gradeNode != nil {
		study.DecodeGrades(&d.Decoder, gradeNode, st)
	}
	if figNode != nil {
		study.DecodeFigures(&d.Decoder, figNode, st)
	}
	lab.Findings, lab.Grades, lab.Figures, lab.ToolUses, lab.UDPSizeUses = st.Findings, st.Grades, st.Figures, st.ToolUses, st.UDPSizeUses
}

func (d *decoder) nodes(n *yaml.Node, lab *topologies.Lab) {
	if n.Kind != yaml.MappingNode {
		d.Errorf(n, "topology.nodes", "want a mapping of node names to nodes, got %s", labyaml.KindName(n))
		return
	}
	if len(n.Content)/2 > MaxNodes {
		d.Errorf(n, "topology.nodes", "%d nodes: a lab holds at most %d; split the lab", len(n.Content)/2, MaxNodes)
		return
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		key := "topology.nodes." + k.Value
		if !nameRE.MatchString(k.Value) || len(k.Value) > 24 {
			d.Errorf(k, key, "bad node name: use 1-24 lowercase letters, digits and '_', starting with a letter or digit")
		}
		if lab.Node(k.Value) != nil {
			d.Errorf(k, key, "node defined twice; rename one")
			continue
		}
		node := &topologies.Node{Name: k.Value, Line: k.Line}
		lab.Nodes = append(lab.Nodes, node)
		d.node(key, v, node)
	}
}

func (d *decoder) node(path string, n *yaml.Node, node *topologies.Node) {
	if n.Kind != yaml.MappingNode {
		d.Errorf(n, path, "want a mapping such as {kind: host, ipv4: 10.0.0.1/24}, got %s", labyaml.KindName(n))
		return
	}
	// Find the kind first: it decides which keys apply.
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == "kind" {
			node.Kind = topologies.Kind(n.Content[i+1].Value)
		}
	}
	spec, ok := kinds.Of(node.Kind)
	if !ok {
		if node.Kind == "" {
			d.Errorf(n, path+".kind", "missing; say kind: %s", kinds.List())
		} else {
			d.Errorf(n, path+".kind", "unknown kind %q; use %s", node.Kind, kinds.List())
		}
		return
	}
	if spec.Start != nil {
		spec.Start(node)
	}
	var ipv4 netip.Prefix
	var ipv4Line int
	mtu := 0
	fields := []labyaml.Field{{Name: "kind", Required: true, Decode: func(string, *yaml.Node) {}}}
	// The keys every kind with interfaces shares; a kind's own keys are
	// its row's (kinds.Row.Decode).
	all := map[string]labyaml.Field{
		"ipv4": {Name: "ipv4", Required: false, Decode: func(key string, v *yaml.Node) {
			ipv4, ipv4Line = d.address(key, v, node.Kind), v.Line
		}},
		"mtu": {Name: "mtu", Required: false, Decode: func(key string, v *yaml.Node) { d.IntIn(key, v, 68, 65535, &mtu) }},
		"interfaces": {Name: "interfaces", Required: false, Decode: func(key string, v *yaml.Node) {
			d.interfaces(key, v, node)
		}},
		"routes": {Name: "routes", Required: false, Decode: func(key string, v *yaml.Node) { d.routes(key, v, node) }},
	}
	if spec.Decode != nil {
		for _, f := range spec.Decode(&d.Decoder, node) {
			all[f.Name] = f
		}
	}
	for _, k := range spec.Keys {
		fields = append(fields, all[k])
	}
	d.Mapping(n, path, fields)

	kinds.ApplyDefaults(node)
	if spec.HasInterfaces() {
		if ipv4.IsValid() || mtu != 0 {
			eth0 := node.Interface("eth0")
			if eth0 == nil {
				eth0 = &topologies.Interface{Name: "eth0", Line: ipv4Line}
				node.Interfaces = append(node.Interfaces, eth0)
			} else if ipv4.IsValid() && eth0.IPv4.IsValid() {
				d.Errorf(n, path+".ipv4", "eth0's address is given twice (ipv4: and interfaces.eth0.ipv4); keep one")
			}
			if ipv4.IsValid() {
				eth0.IPv4 = ipv4
			}
			if mtu != 0 && eth0.MTU == 0 {
				eth0.MTU = mtu
			}
		}
		for _, i := range node.Interfaces {
			if i.MTU == 0 {
				i.MTU = mtu // 0: the default of its link's medium, set by check
			}
		}
		sort.Slice(node.Interfaces, func(a, b int) bool { return node.Interfaces[a].Name < node.Interfaces[b].Name })
	}
}

func (d *decoder) prefix(key string, v *yaml.Node) netip.Prefix {
	s, ok := d.Scalar(key, v)
	if !ok {
		return netip.Prefix{}
	}
	p, err := netip.ParsePrefix(s)
	if err != nil || !p.Addr().Is4() {
		d.Errorf(v, key, "bad IPv4 address %q: write address/prefix length, such as 10.0.0.1/24", s)
		return netip.Prefix{}
	}
	return p
}

func (d *decoder) interfaces(path string, n *yaml.Node, node *topologies.Node) {
	if n.Kind != yaml.MappingNode {
		d.Errorf(n, path, "want a mapping such as {eth0: {ipv4: 10.0.0.1/24}}")
		return
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		key := path + "." + k.Value
		if !kinds.PortName.MatchString(k.Value) {
			d.Errorf(k, key, "bad interface name: up to 15 letters, digits, '_' and '.', starting with a letter")
			continue
		}
		if node.Interface(k.Value) != nil {
			d.Errorf(k, key, "interface defined twice")
			continue
		}
		iface := &topologies.Interface{Name: k.Value, Line: k.Line}
		node.Interfaces = append(node.Interfaces, iface)
		d.Mapping(v, key, []labyaml.Field{
			{Name: "ipv4", Required: false, Decode: func(key string, v *yaml.Node) { iface.IPv4 = d.address(key, v, node.Kind) }},
			{Name: "mtu", Required: false, Decode: func(key string, v *yaml.Node) { d.IntIn(key, v, 68, 65535, &iface.MTU) }},
		})
	}
}

func (d *decoder) routes(path string, n *yaml.Node, node *topologies.Node) {
	if n.Kind != yaml.SequenceNode {
		d.Errorf(n, path, "want a list such as [{to: 10.2.0.0/16, via: 10.1.0.254}]")
		return
	}
	for i, v := range n.Content {
		key := fmt.Sprintf("%s[%d]", path, i)
		var r topologies.Route
		d.Mapping(v, key, []labyaml.Field{
			{Name: "to", Required: true, Decode: func(key string, v *yaml.Node) {
				if s, ok := d.Scalar(key, v); ok {
					if s == "default" {
						s = "0.0.0.0/0"
					}
					p, err := netip.ParsePrefix(s)
					if err != nil || !p.Addr().Is4() {
						d.Errorf(v, key, "bad destination %q: write a prefix such as 10.2.0.0/16, or default", s)
						return
					}
					r.To = p.Masked()
				}
			}},
			{Name: "via", Required: true, Decode: func(key string, v *yaml.Node) {
				if s, ok := d.Scalar(key, v); ok {
					a, err := netip.ParseAddr(s)
					if err != nil || !a.Is4() {
						d.Errorf(v, key, "bad gateway %q: write an IPv4 address", s)
						return
					}
					r.Via = a
				}
			}},
		})
		if r.To.IsValid() && r.Via.IsValid() {
			r.Line = v.Line
			node.Routes = append(node.Routes, r)
		}
	}
}
