package labfile

import (
	"fmt"
	"math"
	"net/netip"
	"slices"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/atmlab/atmlab/emulator/atm/phy"
	"github.com/atmlab/atmlab/topologies"
	"github.com/atmlab/atmlab/topologies/defaults"
	"github.com/atmlab/atmlab/topologies/kinds"
	"github.com/atmlab/atmlab/topologies/labyaml"
	"github.com/atmlab/atmlab/topologies/plan"
	"github.com/atmlab/atmlab/topologies/settings"
)

func (d *decoder) links(n *yaml.Node, lab *topologies.Lab) {
	if n.Kind != yaml.SequenceNode {
		d.Errorf(n, "topology.links", "want a list of links, each with endpoints: [\"h1:eth0\", \"sw1:p1\"]")
		return
	}
	if len(n.Content) > MaxLinks {
		d.Errorf(n, "topology.links", "%d links: a lab holds at most %d; split the lab", len(n.Content), MaxLinks)
		return
	}
	for i, v := range n.Content {
		d.link(fmt.Sprintf("topology.links[%d]", i), v, lab)
	}
}

func (d *decoder) link(path string, n *yaml.Node, lab *topologies.Lab) {
	l := &topologies.Link{Line: n.Line, AB: topologies.Direction{Rate: defaults.Rate}, BA: topologies.Direction{Rate: defaults.Rate}}
	var both topologies.Impair
	var dirs *yaml.Node
	var dirsKey string
	d.Mapping(n, path, []labyaml.Field{
		{Name: "endpoints", Required: true, Decode: func(key string, v *yaml.Node) {
			if v.Kind != yaml.SequenceNode || len(v.Content) != 2 {
				d.Errorf(v, key, "want two endpoints, such as [\"h1:eth0\", \"sw1:p1\"]")
				return
			}
			for j, e := range v.Content {
				ep, ok := d.endpoint(fmt.Sprintf("%s[%d]", key, j), e, lab)
				if ok {
					*([]*topologies.Endpoint{&l.A, &l.B}[j]) = ep
				}
			}
		}},
		{Name: "ethernet", Required: false, Decode: func(key string, v *yaml.Node) {
			d.Mapping(v, key, []labyaml.Field{
				{Name: "rate", Required: false, Decode: func(key string, v *yaml.Node) {
					d.rate(key, v, &l.AB.Rate)
					l.BA.Rate = l.AB.Rate
				}},
				{Name: "cable", Required: false, Decode: func(key string, v *yaml.Node) {
					if s, ok := d.Scalar(key, v); ok {
						m, ok := labyaml.FloatIn(strings.TrimSuffix(s, "m"), 0, MaxCable)
						if !ok || !strings.HasSuffix(s, "m") {
							d.Errorf(v, key, "bad cable length %q: metres from 0m to 100000000m (100,000 km), such as 100m", s)
							return
						}
						l.Propagation = time.Duration(m * nsPerMetre)
					}
				}},
			})
		}},
		{Name: "atm", Required: false, Decode: func(key string, v *yaml.Node) {
			a := &topologies.ATM{PHY: defaults.PHY, AAL: defaults.AAL, Encap: defaults.Encap, VCI: defaults.VCI}
			l.ATM = a
			d.Mapping(v, key, []labyaml.Field{
				{Name: "phy", Required: false, Decode: func(key string, v *yaml.Node) { d.phy(key, v, &a.PHY) }},
				{Name: "aal", Required: false, Decode: func(key string, v *yaml.Node) {
					labyaml.OneOf(&d.Decoder, key, v, &a.AAL, topologies.AAL5, topologies.AAL34)
				}},
				{Name: "encap", Required: false, Decode: func(key string, v *yaml.Node) {
					labyaml.OneOf(&d.Decoder, key, v, &a.Encap, topologies.LLC, topologies.VCMux)
				}},
				{Name: "vpi", Required: false, Decode: func(key string, v *yaml.Node) { d.IntIn(key, v, 0, 255, &a.VPI) }},
				{Name: "vci", Required: false, Decode: func(key string, v *yaml.Node) { d.IntIn(key, v, 32, 65535, &a.VCI) }},
				{Name: "native", Required: false, Decode: func(key string, v *yaml.Node) { d.Boolean(key, v, &a.Native) }},
				{Name: "pcr", Required: false, Decode: func(key string, v *yaml.Node) {
					if s, ok := d.Scalar(key, v); ok {
						r, ok := labyaml.FloatIn(s, 1, math.MaxFloat64)
						if !ok {
							d.Errorf(v, key, "bad peak cell rate %q: cells per second from 1 to the PHY's cell rate, such as 100000", s)
							return
						}
						a.PCR = r
					}
				}},
			})
			if phy, ok := phy.PHYs[string(a.PHY)]; ok {
				l.AB.Rate, l.BA.Rate = phy.LineRate, phy.LineRate
				if a.PCR > phy.CellRate() {
					d.Errorf(v, key+".pcr", "peak cell rate %g is above %s's %.0f cells/s: give 1 to %.0f, or leave pcr: out for line rate", a.PCR, a.PHY, math.Floor(phy.CellRate()), math.Floor(phy.CellRate()))
				}
			}
		}},
		{Name: "impair", Required: false, Decode: func(key string, v *yaml.Node) { d.impair(key, v, &both) }},
		{Name: "directions", Required: false, Decode: func(key string, v *yaml.Node) { dirs, dirsKey = v, key }},
	})
	if l.ATM != nil && labyaml.HasKey(n, "ethernet") {
		d.Errorf(n, path, "a link is either ethernet: or atm:, not both")
	}
	l.AB.Impair, l.BA.Impair = both, both
	if dirs != nil {
		d.directions(dirsKey, dirs, l)
	}
	if l.ATM != nil {
		for _, im := range []topologies.Impair{l.AB.Impair, l.BA.Impair} {
			if im.Rate != 0 {
				d.Errorf(n, path+".impair", "an ATM link's impairments are per cell: delay, jitter, loss (the cell loss ratio) and limit (cells in flight); rate is for Ethernet links")
				break
			}
		}
		if dirs != nil && (l.AB.Rate != l.BA.Rate) {
			d.Errorf(dirs, dirsKey, "an ATM link's rate is its PHY's; change atm.phy instead")
		}
	}
	if l.A.Node != "" && l.B.Node != "" {
		lab.Links = append(lab.Links, l)
	}
}

// directions decodes per-direction overrides keyed by the sending endpoint.
func (d *decoder) directions(path string, n *yaml.Node, l *topologies.Link) {
	if n.Kind != yaml.MappingNode {
		d.Errorf(n, path, "want a mapping from a sending endpoint to {rate:, impair:}, such as {\"h1:eth0\": {rate: 10M}}")
		return
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		key := path + "." + k.Value
		var dir *topologies.Direction
		switch k.Value {
		case l.A.String():
			dir = &l.AB
		case l.B.String():
			dir = &l.BA
		default:
			d.Errorf(k, key, "%q is not an endpoint of this link; use %q or %q", k.Value, l.A, l.B)
			continue
		}
		d.Mapping(v, key, []labyaml.Field{
			{Name: "rate", Required: false, Decode: func(key string, v *yaml.Node) { d.rate(key, v, &dir.Rate) }},
			{Name: "impair", Required: false, Decode: func(key string, v *yaml.Node) { dir.Impair = topologies.Impair{}; d.impair(key, v, &dir.Impair) }},
		})
	}
}

func (d *decoder) impair(path string, n *yaml.Node, im *topologies.Impair) {
	d.Mapping(n, path, []labyaml.Field{
		{Name: "delay", Required: false, Decode: func(key string, v *yaml.Node) { setting(d, key, v, settings.ParseDelay, &im.Delay) }},
		{Name: "jitter", Required: false, Decode: func(key string, v *yaml.Node) { setting(d, key, v, settings.ParseJitter, &im.Jitter) }},
		{Name: "loss", Required: false, Decode: func(key string, v *yaml.Node) { d.loss(key, v, &im.Loss) }},
		{Name: "limit", Required: false, Decode: func(key string, v *yaml.Node) { setting(d, key, v, settings.ParseLimit, &im.Limit) }},
		{Name: "rate", Required: false, Decode: func(key string, v *yaml.Node) { d.rate(key, v, &im.Rate) }},
	})
}

func (d *decoder) endpoint(key string, v *yaml.Node, lab *topologies.Lab) (topologies.Endpoint, bool) {
	s, ok := d.Scalar(key, v)
	if !ok {
		return topologies.Endpoint{}, false
	}
	node, port, found := strings.Cut(s, ":")
	if !found || node == "" || port == "" {
		d.Errorf(v, key, "%q: write node:interface, such as h1:eth0 or sw1:p1", s)
		return topologies.Endpoint{}, false
	}
	n := lab.Node(node)
	if n == nil {
		var names []string
		for _, n := range lab.Nodes {
			names = append(names, n.Name)
		}
		d.Errorf(v, key, "%q: no node named %s (nodes: %s)", s, node, strings.Join(names, ", "))
		return topologies.Endpoint{}, false
	}
	if !kinds.PortName.MatchString(port) {
		d.Errorf(v, key, "%q: bad interface or port name %q", s, port)
		return topologies.Endpoint{}, false
	}
	return topologies.Endpoint{Node: node, Port: port}, true
}

// check validates what spans nodes and links: endpoints used once,
// interfaces linked, addresses unique, gateways on a connected subnet,
// kinds and links that fit together.
func (d *decoder) check(lab *topologies.Lab) {
	used := map[topologies.Endpoint]int{}
	hubFirst := map[string]*topologies.Link{}
	for _, l := range lab.Links {
		ends := []topologies.Endpoint{l.A, l.B}
		if l.A == l.B {
			d.Errorf(&yaml.Node{Line: l.Line}, "topology.links", "a link cannot join a port to itself: both its ends are %s; join two different ports", l.A)
			ends = ends[:1]
		}
		for _, e := range ends {
			if prev, ok := used[e]; ok {
				d.Errorf(&yaml.Node{Line: l.Line}, "topology.links", "endpoint %s is already used by the link on line %d; an interface or port takes one link", e, prev)
				continue
			}
			used[e] = l.Line
			node := lab.Node(e.Node)
			if kinds.TakesInterfaces(node.Kind) {
				if node.Interface(e.Port) == nil {
					node.Interfaces = append(node.Interfaces, &topologies.Interface{Name: e.Port, Line: l.Line})
				}
			}
		}
		d.checkHubLink(lab, l, hubFirst)
		d.checkATMLink(lab, l)
	}
	for _, n := range lab.Nodes {
		if n.ATMSwitch != nil {
			d.checkMappings(n, used)
		}
		for _, i := range n.Interfaces {
			if i.MTU == 0 {
				i.MTU = defaults.MTU
				if l := lab.LinkOf(topologies.Endpoint{Node: n.Name, Port: i.Name}); l != nil && l.ATM != nil {
					i.MTU = defaults.ATMMTU
				}
			}
			if l := lab.LinkOf(topologies.Endpoint{Node: n.Name, Port: i.Name}); l != nil && l.ATM != nil && i.MTU > maxATMMTU {
				d.Errorf(&yaml.Node{Line: i.Line}, "topology.nodes."+n.Name, "MTU %d on %s's ATM link: an AAL SDU holds at most 65535 octets, %d of IP with LLC/SNAP", i.MTU, i.Name, maxATMMTU)
			}
		}
	}
	addrs := map[netip.Addr]string{}
	for _, n := range lab.Nodes {
		for _, i := range n.Interfaces {
			where := n.Name + ":" + i.Name
			if _, ok := used[topologies.Endpoint{Node: n.Name, Port: i.Name}]; !ok {
				d.Errorf(&yaml.Node{Line: i.Line}, "topology.nodes."+n.Name, "interface %s has no link; add one to topology.links or remove it", i.Name)
			}
			if !i.IPv4.IsValid() {
				continue
			}
			if prev, ok := addrs[i.IPv4.Addr()]; ok {
				d.Errorf(&yaml.Node{Line: i.Line}, "topology.nodes."+n.Name, "address %s is also %s's; every interface needs its own", i.IPv4.Addr(), prev)
			}
			addrs[i.IPv4.Addr()] = where
		}
		for _, s := range n.Sysctls {
			d.checkSysctl(n, s)
		}
		for _, r := range n.Routes {
			onLink := slices.ContainsFunc(n.Interfaces, func(i *topologies.Interface) bool {
				return i.IPv4.IsValid() && i.IPv4.Masked().Contains(r.Via)
			})
			if !onLink {
				d.Errorf(&yaml.Node{Line: r.Line}, "topology.nodes."+n.Name+".routes", "gateway %s is on none of %s's subnets", r.Via, n.Name)
			}
		}
		if k, _ := kinds.Of(n.Kind); k.Check != nil {
			k.Check(&d.Decoder, lab, n)
		}
	}
	d.Errs = append(d.Errs, plan.CheckPVCs(lab)...)
	plan.DefaultRoutes(lab)
	lab.Warnings = plan.Loops(lab)
}

// checkHubLink validates a link to a hub: one shared medium has one rate, no
// per-link impairments, and hubs are not cascaded in this version. first
// holds each hub's first link, which later ones are compared with.
func (d *decoder) checkHubLink(lab *topologies.Lab, l *topologies.Link, first map[string]*topologies.Link) {
	a, b := lab.Node(l.A.Node), lab.Node(l.B.Node)
	if a.Kind != topologies.KindHub && b.Kind != topologies.KindHub {
		return
	}
	at := &yaml.Node{Line: l.Line}
	switch {
	case a.Kind == topologies.KindHub && b.Kind == topologies.KindHub:
		d.Errorf(at, "topology.links", "%s joins two hubs; cascaded hubs are not modelled yet", l.A)
	case l.ATM != nil:
		d.Errorf(at, "topology.links", "a hub carries Ethernet, not ATM")
	case l.AB.Rate != l.BA.Rate || !l.AB.Impair.IsZero() || !l.BA.Impair.IsZero():
		d.Errorf(at, "topology.links", "a link to a hub is half of a shared medium: no per-direction rate and no impair: (put impairments on a switch link)")
	}
	hub := a
	if b.Kind == topologies.KindHub {
		hub = b
	}
	if o, ok := first[hub.Name]; !ok {
		first[hub.Name] = l
	} else if o.AB.Rate != l.AB.Rate {
		d.Errorf(at, "topology.links", "hub %s runs at one rate: this link says %v, the link on line %d %v", hub.Name, l.AB.Rate, o.Line, o.AB.Rate)
	}
}

// loss reads a percentage ("0.1%" or 0.1) into a probability.
func (d *decoder) loss(key string, v *yaml.Node, into *float64) {
	setting(d, key, v, settings.ParseLoss, into)
}

// maxATMMTU is the largest IP packet an AAL5 or AAL3/4 SDU carries with
// LLC/SNAP's 8 octets in front.
const maxATMMTU = 65535 - 8

// checkATMLink validates what an ATM link may join: the kinds whose row
// says they take ATM links (hosts, by Classical IP over ATM, and
// atm-switches); an atm-switch takes nothing else.
func (d *decoder) checkATMLink(lab *topologies.Lab, l *topologies.Link) {
	at := &yaml.Node{Line: l.Line}
	for _, e := range []topologies.Endpoint{l.A, l.B} {
		kind := lab.Node(e.Node).Kind
		k, _ := kinds.Of(kind)
		switch {
		case l.ATM == nil && k.Media == kinds.ATMOnly:
			d.Errorf(at, "topology.links", "%s is an %s port: give the link atm: {phy: oc3, ...} instead of ethernet:", e, kind)
		case l.ATM != nil && k.Media == kinds.EthernetOnly:
			d.Errorf(at, "topology.links", "an ATM link joins %s; %s is a %s", kinds.ATMKinds(), e, kind)
		}
	}
}

// checkMappings validates an atm-switch's PVCs: each names a linked port of
// the switch, and no incoming VC or VP is mapped twice.
func (d *decoder) checkMappings(n *topologies.Node, used map[topologies.Endpoint]int) {
	seen := map[topologies.ATMAddr]int{}
	for _, m := range n.ATMSwitch.Mappings {
		at := &yaml.Node{Line: m.Line}
		key := "topology.nodes." + n.Name + ".mappings"
		for _, a := range []topologies.ATMAddr{m.From, m.To} {
			if _, ok := used[topologies.Endpoint{Node: n.Name, Port: a.Port}]; !ok {
				d.Errorf(at, key, "%s: port %s of %s has no link", a, a.Port, n.Name)
			}
			if prev, ok := seen[a]; ok {
				d.Errorf(at, key, "%s is already mapped on line %d", a, prev)
			}
			seen[a] = m.Line
		}
		if m.From.Port == m.To.Port {
			d.Errorf(at, key, "%s maps back to its own port", m.From)
		}
	}
}

// phy reads a PHY's name, an alias (oc3c, stm1, ...) as the table's name,
// so that a resolved lab names it one way.
func (d *decoder) phy(key string, v *yaml.Node, into *topologies.PHY) {
	c := *v
	if v.Kind == yaml.ScalarNode {
		c.Value = phy.Canonical(v.Value)
	}
	labyaml.OneOf(&d.Decoder, key, &c, into, phyNames()...)
}

// phyNames lists the PHYs a link may name, sorted.
func phyNames() []topologies.PHY {
	var n []topologies.PHY
	for _, s := range phy.Names() {
		n = append(n, topologies.PHY(s))
	}
	return n
}
