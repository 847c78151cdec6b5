package topologies

import (
	"cmp"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/atmlab/atmlab/emulator/units"
	"github.com/atmlab/atmlab/topologies/labyaml"
	"github.com/atmlab/atmlab/topologies/study"
)

// Variant is a named what-if: overrides of the topology, built and measured
// in turn with the same experiments as the lab as written ("base").
type Variant struct {
	Name string
	Line int
	Set  []Override
	Grid []string // a sweep's point: its value of each parameter (Lab.Sweep); nil for a named variant
}

// Override changes one thing: a link's rate, delay, jitter or loss (both
// directions, by one of its endpoints), an ATM link's PHY, AAL or
// encapsulation, or a node's kind, MPLS, CPU, switch buffer or router cost.
type Override struct {
	Line          int
	Link          string // endpoint naming the link
	Node          string
	Rate          units.BitRate
	Delay, Jitter *time.Duration
	Loss          *float64
	PHY           PHY
	AAL           AAL
	Encap         Encap
	Kind          Kind
	MPLS          *bool
	CPU           *FrameCPU   // a host's or switch's processing limit (zero costs: none)
	Buffer        units.Size  // a switch's output buffer per port
	Cost          *RouterCost // a router's costs, all of them
}

// MaxVariants bounds a lab file's named variants as MaxGridPoints bounds
// its grid: every one is a lab built and measured with all the lab's
// experiments.
const MaxVariants = MaxGridPoints

// variantNameRE is what a variant's name may be: it names result files
// (virtual-NAME.json), so no '/', no markup and no leading '.' or '-'.
var variantNameRE = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9._-]{0,63}$`)

func (d *decoder) variants(n *yaml.Node, lab *Lab) {
	if n.Kind != yaml.SequenceNode {
		d.Errorf(n, "variants", "want a list of variants, each with name: and set:")
		return
	}
	if len(n.Content) > MaxVariants {
		d.Errorf(n, "variants", "%d variants: a lab file holds at most %d; split the variants over lab files", len(n.Content), MaxVariants)
	}
	taken := map[string]bool{"base": true}
	for i, v := range n.Content {
		path := fmt.Sprintf("variants[%d]", i)
		va := &Variant{Line: v.Line}
		d.Mapping(v, path, []labyaml.Field{
			{Name: "name", Required: true, Decode: func(key string, v *yaml.Node) {
				if s, ok := d.Scalar(key, v); ok {
					switch {
					case taken[s]:
						d.Errorf(v, key, "%q is taken (base is the lab as written)", s)
					case !variantNameRE.MatchString(s):
						d.Errorf(v, key, "%q: a variant's name names its result files: use 1-64 letters, digits, '.', '_' and '-', starting with a letter, digit or '_'", s)
					}
					taken[s] = true
					va.Name = s
				}
			}},
			{Name: "set", Required: true, Decode: func(key string, v *yaml.Node) {
				if v.Kind != yaml.SequenceNode {
					d.Errorf(v, key, "want a list such as [{link: \"h1:eth0\", rate: 10M}, {node: sw1, kind: hub}]")
					return
				}
				for j, o := range v.Content {
					va.Set = append(va.Set, d.override(fmt.Sprintf("%s[%d]", key, j), o, lab))
				}
			}},
		})
		lab.Variants = append(lab.Variants, va)
	}
}

func (d *decoder) override(path string, n *yaml.Node, lab *Lab) Override {
	o := Override{Line: n.Line}
	d.Mapping(n, path, []labyaml.Field{
		{Name: "link", Required: false, Decode: func(key string, v *yaml.Node) {
			if s, ok := d.Scalar(key, v); ok {
				if l := lab.LinkOf(endpointOf(s)); l == nil || l.A.String() != s && l.B.String() != s {
					d.Errorf(v, key, "no link has endpoint %q", s)
				}
				o.Link = s
			}
		}},
		{Name: "node", Required: false, Decode: func(key string, v *yaml.Node) {
			if s, ok := d.Scalar(key, v); ok {
				if lab.Node(s) == nil {
					d.Errorf(v, key, "no node named %q", s)
				}
				o.Node = s
			}
		}},
		{Name: "rate", Required: false, Decode: func(key string, v *yaml.Node) { d.rate(key, v, &o.Rate) }},
		{Name: "delay", Required: false, Decode: func(key string, v *yaml.Node) { o.Delay = new(time.Duration); d.duration(key, v, o.Delay) }},
		{Name: "jitter", Required: false, Decode: func(key string, v *yaml.Node) { o.Jitter = new(time.Duration); d.duration(key, v, o.Jitter) }},
		{Name: "loss", Required: false, Decode: func(key string, v *yaml.Node) { o.Loss = new(float64); d.loss(key, v, o.Loss) }},
		{Name: "buffer", Required: false, Decode: func(key string, v *yaml.Node) {
			if n := lab.Node(o.Node); n != nil && n.Kind != KindSwitch && n.Kind != KindHub {
				d.Errorf(v, key, "buffer: is a switch's; %s is a %s", n.Name, n.Kind)
			}
			d.buffer(key, v, &o.Buffer)
		}},
		{Name: "cost", Required: false, Decode: func(key string, v *yaml.Node) {
			if n := lab.Node(o.Node); n != nil && n.Kind != KindRouter {
				d.Errorf(v, key, "cost: is a router's; %s is a %s", n.Name, n.Kind)
			}
			c := d.routerCost(key, v)
			o.Cost = &c
		}},
		{Name: "kind", Required: false, Decode: func(key string, v *yaml.Node) {
			if s, ok := d.Scalar(key, v); ok {
				if k := Kind(s); k != KindSwitch && k != KindHub {
					d.Errorf(v, key, "%q: a variant can make a node a switch or a hub", s)
				}
				o.Kind = Kind(s)
			}
		}},
		{Name: "mpls", Required: false, Decode: func(key string, v *yaml.Node) { o.MPLS = new(bool); d.Boolean(key, v, o.MPLS) }},
		{Name: "cpu", Required: false, Decode: func(key string, v *yaml.Node) {
			if n := lab.Node(o.Node); n != nil && n.Kind != KindHost && n.Kind != KindSwitch {
				d.Errorf(v, key, "cpu: limits a host or a switch; %s is a %s", n.Name, n.Kind)
			}
			o.CPU = d.frameCPU(key, v)
		}},
		{Name: "phy", Required: false, Decode: func(key string, v *yaml.Node) { d.phy(key, v, &o.PHY) }},
		{Name: "aal", Required: false, Decode: func(key string, v *yaml.Node) { labyaml.OneOf(&d.Decoder, key, v, &o.AAL, AAL5, AAL34) }},
		{Name: "encap", Required: false, Decode: func(key string, v *yaml.Node) { labyaml.OneOf(&d.Decoder, key, v, &o.Encap, LLC, VCMux) }},
	})
	atmSet := o.PHY != "" || o.AAL != "" || o.Encap != ""
	switch {
	case (o.Link == "") == (o.Node == ""):
		d.Errorf(n, path, "name one link: (an endpoint) or one node:")
	case o.Link != "" && (o.Kind != "" || o.MPLS != nil || o.CPU != nil || o.Buffer != 0 || o.Cost != nil):
		d.Errorf(n, path, "kind:, mpls:, cpu:, buffer: and cost: apply to a node:, not a link:")
	case o.Node != "" && (o.Rate != 0 || o.Delay != nil || o.Jitter != nil || o.Loss != nil || atmSet):
		d.Errorf(n, path, "rate:, delay:, jitter:, loss:, phy:, aal: and encap: apply to a link:, not a node:")
	case o.Link != "":
		if l := lab.LinkOf(endpointOf(o.Link)); l != nil && (l.ATM == nil) == atmSet && (atmSet || o.Rate != 0) {
			if atmSet {
				d.Errorf(n, path, "phy:, aal: and encap: apply to ATM links; %s is Ethernet", o.Link)
			} else {
				d.Errorf(n, path, "an ATM link's rate is its PHY's: set phy: instead of rate:")
			}
		}
	}
	return o
}

// WithVariant returns the lab as the named variant makes it: a copy of
// the lab as written, resolved once from the file's YAML tree kept in
// memory (so the base lab is untouched; the file is not read again), the
// overrides applied and the result checked as a lab file would be. "base"
// is the lab as written.
func (l *Lab) WithVariant(name string) (*Lab, error) {
	fresh, errs := l.withVariant(name)
	if errs != nil {
		return nil, fmt.Errorf("variant %s: %w", name, errors.Join(errs...))
	}
	return fresh, nil
}

func (l *Lab) withVariant(name string) (*Lab, []error) {
	if l.raw == nil {
		return nil, []error{fmt.Errorf("lab %s was not read from a lab file, so it has no variants", l.Name)}
	}
	return l.raw.variant(name)
}

// resolved returns a copy of the lab as written, before link defaults,
// with its problems; the tree is resolved on the first call only.
func (raw *Raw) resolved() (*Lab, []error) {
	raw.once.Do(func() { raw.base, raw.baseErrs = resolve(raw) })
	return raw.base.clone(), slices.Clone(raw.baseErrs)
}

// variant resolves the tree as the named variant makes it: the lab as
// written, with the variant's overrides applied.
func (raw *Raw) variant(name string) (*Lab, []error) {
	fresh, errs := raw.resolved()
	if len(errs) > 0 {
		return nil, []error{labyaml.JoinByLine(errs)}
	}
	if name != "base" {
		if errs := fresh.apply(name); errs != nil {
			return nil, errs
		}
	}
	linkDefaults(fresh) // after apply: a variant may add an impairment
	fresh.Experiments = slices.DeleteFunc(fresh.Experiments, func(e *study.Experiment) bool { return !e.RunsIn(name) })
	return fresh, nil
}

// ResolveVariants resolves the lab as each named variant makes it ("base":
// as written; lab run measures Measured's), PVC plans included, so that a
// bad variant fails now, before anything runs: the start of lab run calls
// it. Every problem of every variant comes back at once, joined; a
// lab-file problem is an *labyaml.Error whose message names the variant.
func (l *Lab) ResolveVariants(names []string) ([]*Lab, error) {
	labs := make([]*Lab, 0, len(names))
	if err := l.eachVariant(names, func(v *Lab) { labs = append(labs, v) }); err != nil {
		return nil, err
	}
	return labs, nil
}

// CheckVariants is ResolveVariants for validate: each variant's lab is
// dropped once checked, so that memory stays one lab's.
func (l *Lab) CheckVariants(names []string) error {
	return l.eachVariant(names, func(*Lab) {})
}

// eachVariant resolves the named variants in turn, handing each good one
// to keep, and returns every problem joined.
func (l *Lab) eachVariant(names []string, keep func(*Lab)) error {
	var problems []error
	for _, name := range names {
		prefix := func(err error) error {
			if name == "base" {
				return err
			}
			if e, ok := err.(*labyaml.Error); ok {
				e2 := *e
				e2.Msg = "variant " + name + ": " + e.Msg
				return &e2
			}
			return fmt.Errorf("variant %s: %w", name, err)
		}
		v, errs := l.withVariant(name)
		for _, err := range errs {
			problems = append(problems, prefix(err))
		}
		if errs == nil {
			keep(v)
		}
	}
	return errors.Join(problems...)
}

// apply makes the lab what the named variant says and checks the result.
func (lab *Lab) apply(name string) []error {
	var va *Variant
	for _, v := range lab.Variants {
		if v.Name == name {
			va = v
		}
	}
	if va == nil {
		return []error{fmt.Errorf("no variant named %q", name)}
	}
	var buffered []Override
	for _, o := range va.Set {
		if o.Node != "" {
			n := lab.Node(o.Node)
			if o.Kind != "" && o.Kind != n.Kind {
				if n.Kind != KindSwitch && n.Kind != KindHub {
					return []error{&labyaml.Error{File: lab.File, Line: o.Line, Key: "variants", Msg: fmt.Sprintf("%s is a %s; only a switch and a hub stand in for each other", n.Name, n.Kind)}}
				}
				n.Kind = o.Kind
				kindDefaults(n)
			}
			if o.MPLS != nil {
				n.MPLS = *o.MPLS
			}
			if o.CPU != nil {
				cpu := *o.CPU // the variant's own stays as written
				n.CPU = &cpu
				if o.CPU.PerPacket == 0 && o.CPU.Copy == 0 {
					n.CPU = nil
				}
			}
			if o.Buffer != 0 {
				n.Buffer = o.Buffer
				buffered = append(buffered, o) // checked once every kind: is applied
			}
			if o.Cost != nil {
				n.Router.Cost = *o.Cost
			}
			continue
		}
		if link := lab.LinkOf(endpointOf(o.Link)); link != nil {
			for _, dir := range []*Direction{&link.AB, &link.BA} {
				if o.Rate != 0 {
					dir.Rate = o.Rate
				}
				if o.Delay != nil {
					dir.Impair.Delay = *o.Delay
				}
				if o.Jitter != nil {
					dir.Impair.Jitter = *o.Jitter
				}
				if o.Loss != nil {
					dir.Impair.Loss = *o.Loss
				}
			}
			if a := link.ATM; a != nil {
				a.PHY, a.AAL, a.Encap = cmp.Or(o.PHY, a.PHY), cmp.Or(o.AAL, a.AAL), cmp.Or(o.Encap, a.Encap)
				link.AB.Rate, link.BA.Rate = a.PHY.Layer().LineRate, a.PHY.Layer().LineRate
			}
		}
	}
	for _, o := range buffered {
		if n := lab.Node(o.Node); n.Kind != KindSwitch {
			return []error{&labyaml.Error{File: lab.File, Line: o.Line, Key: "variants", Msg: fmt.Sprintf("buffer: is a switch's, and %s is a %s here", n.Name, n.Kind)}}
		}
	}
	// A changed lab must still be a valid one (a hub's links share a rate...).
	d := &decoder{labyaml.Decoder{File: lab.File}}
	hubFirst := map[string]*Link{}
	for _, link := range lab.Links {
		d.checkHubLink(lab, link, hubFirst)
	}
	for _, n := range lab.Nodes {
		if n.Kind == KindRouter { // mpls: or encap: may have changed
			for _, i := range n.Interfaces {
				d.checkMPLSOverATM(lab, n, i)
			}
		}
	}
	d.checkPVCs(lab)
	if d.Errs == nil {
		d.Errs = planPVCs(lab)
	}
	return d.Errs
}

// endpointOf splits "node:port".
func endpointOf(s string) Endpoint {
	node, port, _ := strings.Cut(s, ":")
	return Endpoint{node, port}
}
