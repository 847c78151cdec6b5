package labfile

import (
	"cmp"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/atmlab/atmlab/topologies"
	"github.com/atmlab/atmlab/topologies/kinds"
	"github.com/atmlab/atmlab/topologies/labyaml"
	"github.com/atmlab/atmlab/topologies/plan"
	"github.com/atmlab/atmlab/topologies/split"
	"github.com/atmlab/atmlab/topologies/study"
)

// MaxVariants bounds a lab file's named variants as MaxGridPoints bounds
// its grid: every one is a lab built and measured with all the lab's
// experiments.
const MaxVariants = MaxGridPoints

// variantNameRE is what a variant's name may be: it names result files
// (virtual-NAME.json), so no '/', no markup and no leading '.' or '-'.
var variantNameRE = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9._-]{0,63}$`)

func (d *decoder) variants(n *yaml.Node, lab *topologies.Lab) {
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
		va := &topologies.Variant{Line: v.Line}
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

func (d *decoder) override(path string, n *yaml.Node, lab *topologies.Lab) topologies.Override {
	o := topologies.Override{Line: n.Line}
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
			if n := lab.Node(o.Node); n != nil && n.Kind != topologies.KindSwitch && n.Kind != topologies.KindHub {
				d.Errorf(v, key, "buffer: is a switch's; %s is a %s", n.Name, n.Kind)
			}
			kinds.DecodeBuffer(&d.Decoder, key, v, &o.Buffer)
		}},
		{Name: "cost", Required: false, Decode: func(key string, v *yaml.Node) {
			if n := lab.Node(o.Node); n != nil && n.Kind != topologies.KindRouter {
				d.Errorf(v, key, "cost: is a router's; %s is a %s", n.Name, n.Kind)
			}
			c := kinds.DecodeRouterCost(&d.Decoder, key, v)
			o.Cost = &c
		}},
		{Name: "kind", Required: false, Decode: func(key string, v *yaml.Node) {
			if s, ok := d.Scalar(key, v); ok {
				if k := topologies.Kind(s); k != topologies.KindSwitch && k != topologies.KindHub {
					d.Errorf(v, key, "%q: a variant can make a node a switch or a hub", s)
				}
				o.Kind = topologies.Kind(s)
			}
		}},
		{Name: "mpls", Required: false, Decode: func(key string, v *yaml.Node) { o.MPLS = new(bool); d.Boolean(key, v, o.MPLS) }},
		{Name: "cpu", Required: false, Decode: func(key string, v *yaml.Node) {
			if n := lab.Node(o.Node); n != nil && n.Kind != topologies.KindHost && n.Kind != topologies.KindSwitch {
				d.Errorf(v, key, "cpu: limits a host or a switch; %s is a %s", n.Name, n.Kind)
			}
			o.CPU = kinds.DecodeFrameCPU(&d.Decoder, key, v)
		}},
		{Name: "phy", Required: false, Decode: func(key string, v *yaml.Node) { d.phy(key, v, &o.PHY) }},
		{Name: "aal", Required: false, Decode: func(key string, v *yaml.Node) {
			labyaml.OneOf(&d.Decoder, key, v, &o.AAL, topologies.AAL5, topologies.AAL34)
		}},
		{Name: "encap", Required: false, Decode: func(key string, v *yaml.Node) {
			labyaml.OneOf(&d.Decoder, key, v, &o.Encap, topologies.LLC, topologies.VCMux)
		}},
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

// resolved returns a copy of the lab as written, before link defaults,
// with its problems; the tree is resolved on the first call only.
func (raw *Raw) resolved() (*topologies.Lab, []error) {
	raw.once.Do(func() { raw.base, raw.baseErrs = resolve(raw) })
	return raw.base.Clone(), slices.Clone(raw.baseErrs)
}

// Variant resolves the tree as the named variant makes it: the lab as
// written, with the variant's overrides applied (topologies.Source).
func (raw *Raw) Variant(name string) (*topologies.Lab, []error) {
	fresh, errs := raw.resolved()
	if len(errs) > 0 {
		return nil, []error{labyaml.JoinByLine(errs)}
	}
	if name != "base" {
		if errs := apply(fresh, name); errs != nil {
			return nil, errs
		}
	}
	linkDefaults(fresh) // after apply: a variant may add an impairment
	fresh.Experiments = slices.DeleteFunc(fresh.Experiments, func(e *study.Experiment) bool { return !e.RunsIn(name) })
	return fresh, nil
}

// apply makes lab what the named variant says and checks the result.
func apply(lab *topologies.Lab, name string) []error {
	var va *topologies.Variant
	for _, v := range lab.Variants {
		if v.Name == name {
			va = v
		}
	}
	if va == nil {
		return []error{fmt.Errorf("no variant named %q", name)}
	}
	var buffered []topologies.Override
	for _, o := range va.Set {
		if o.Node != "" {
			n := lab.Node(o.Node)
			if o.Kind != "" && o.Kind != n.Kind {
				if n.Kind != topologies.KindSwitch && n.Kind != topologies.KindHub {
					return []error{&labyaml.Error{File: lab.File, Line: o.Line, Key: "variants", Msg: fmt.Sprintf("%s is a %s; only a switch and a hub stand in for each other", n.Name, n.Kind)}}
				}
				n.Kind = o.Kind
				kinds.ApplyDefaults(n)
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
			for _, dir := range []*topologies.Direction{&link.AB, &link.BA} {
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
		if n := lab.Node(o.Node); n.Kind != topologies.KindSwitch {
			return []error{&labyaml.Error{File: lab.File, Line: o.Line, Key: "variants", Msg: fmt.Sprintf("buffer: is a switch's, and %s is a %s here", n.Name, n.Kind)}}
		}
	}
	// A changed lab must still be a valid one (a hub's links share a rate...).
	d := &decoder{labyaml.Decoder{File: lab.File}}
	hubFirst := map[string]*topologies.Link{}
	for _, link := range lab.Links {
		d.checkHubLink(lab, link, hubFirst)
	}
	for _, n := range lab.Nodes {
		if n.Kind == topologies.KindRouter { // mpls: or encap: may have changed
			for _, i := range n.Interfaces {
				kinds.CheckMPLSOverATM(&d.Decoder, lab, n, i)
			}
		}
	}
	d.Errs = append(d.Errs, plan.CheckPVCs(lab)...)
	d.Errs = append(d.Errs, split.Check(lab)...) // a hub or a delay of 0 may not be cut
	if d.Errs == nil {
		d.Errs = plan.PVCs(lab)
	}
	return d.Errs
}

// endpointOf splits "node:port".
func endpointOf(s string) topologies.Endpoint {
	node, port, _ := strings.Cut(s, ":")
	return topologies.Endpoint{Node: node, Port: port}
}
