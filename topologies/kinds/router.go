package kinds

import (
	"fmt"
	"slices"

	"gopkg.in/yaml.v3"

	"github.com/atmlab/atmlab/topologies"
	"github.com/atmlab/atmlab/topologies/defaults"
	"github.com/atmlab/atmlab/topologies/labyaml"
)

// routerRow: an IPv4 router (MPLS optional) between Ethernet and ATM
// links; every interface has an address of a subnet of its own.
var routerRow = Row{Kind: topologies.KindRouter, Keys: []string{"mpls", "interfaces", "routes", "ttl", "null", "cost"}, Media: EthernetAndATM,
	Start: func(n *topologies.Node) { n.Router = &topologies.Router{} },
	Decode: func(d *labyaml.Decoder, n *topologies.Node) []labyaml.Field {
		return []labyaml.Field{
			{Name: "mpls", Required: false, Decode: func(key string, v *yaml.Node) { d.Boolean(key, v, &n.MPLS) }},
			{Name: "ttl", Required: false, Decode: func(key string, v *yaml.Node) {
				var m string
				labyaml.OneOf(d, key, v, &m, "uniform", "pipe")
				n.Router.PipeTTL = m == "pipe"
			}},
			{Name: "null", Required: false, Decode: func(key string, v *yaml.Node) {
				var m string
				labyaml.OneOf(d, key, v, &m, "implicit", "explicit")
				n.Router.ExplicitNull = m == "explicit"
			}},
			{Name: "cost", Required: false, Decode: func(key string, v *yaml.Node) { n.Router.Cost = DecodeRouterCost(d, key, v) }},
		}
	},
	Check: func(d *labyaml.Decoder, lab *topologies.Lab, n *topologies.Node) {
		for _, i := range n.Interfaces {
			if !i.IPv4.IsValid() {
				d.Errorf(&yaml.Node{Line: i.Line}, "topology.nodes."+n.Name+".interfaces", "router interface %s needs an address: interfaces: {%s: {ipv4: 10.1.0.254/24}}", i.Name, i.Name)
			}
			CheckMPLSOverATM(d, lab, n, i)
		}
		checkRouterSubnets(d, n)
	}}

// CheckMPLSOverATM refuses an MPLS router's interface on a VC-mux ATM link:
// a VC-mux PVC carries one protocol, told by the IP version nibble, so a
// labelled packet needs LLC/SNAP's EtherType 0x8847 (RFC 2684 routed PDUs).
func CheckMPLSOverATM(d *labyaml.Decoder, lab *topologies.Lab, n *topologies.Node, i *topologies.Interface) {
	l := lab.LinkOf(topologies.Endpoint{Node: n.Name, Port: i.Name})
	if !n.MPLS || l == nil || l.ATM == nil || l.ATM.Encap != topologies.VCMux {
		return
	}
	d.Errorf(&yaml.Node{Line: l.Line}, "topology.links", "%s:%s is an MPLS router's interface on a VC-mux ATM link, which carries IP only; labelled packets need LLC/SNAP: atm: {encap: llc}", n.Name, i.Name)
}

// checkRouterSubnets refuses a router with two interfaces on one subnet
// (or on overlapping ones): it could not tell which of them reaches an
// address there. Prefixes nest or are apart, so, sorted by first address
// (the wider first), each overlaps an earlier one only if it overlaps the
// one that reaches furthest.
func checkRouterSubnets(d *labyaml.Decoder, n *topologies.Node) {
	var ifs []*topologies.Interface
	for _, i := range n.Interfaces {
		if i.IPv4.IsValid() {
			ifs = append(ifs, i)
		}
	}
	slices.SortFunc(ifs, func(a, b *topologies.Interface) int {
		if c := a.IPv4.Masked().Addr().Compare(b.IPv4.Masked().Addr()); c != 0 {
			return c
		}
		return a.IPv4.Bits() - b.IPv4.Bits()
	})
	var widest *topologies.Interface
	for _, i := range ifs {
		if widest != nil && widest.IPv4.Masked().Overlaps(i.IPv4.Masked()) {
			first, second := widest, i
			if second.Line < first.Line {
				first, second = second, first
			}
			on := "one subnet, " + i.IPv4.Masked().String()
			if widest.IPv4.Bits() != i.IPv4.Bits() {
				on = fmt.Sprintf("overlapping subnets, %s and %s", first.IPv4.Masked(), second.IPv4.Masked())
			}
			d.Errorf(&yaml.Node{Line: second.Line}, "topology.nodes."+n.Name+".interfaces",
				"%s (%s) and %s (%s) are on %s: a router's interfaces each need a subnet of their own, or it cannot tell which one reaches an address there; give %s another subnet, or join the two links with a switch",
				first.Name, first.IPv4, second.Name, second.IPv4, on, second.Name)
			continue
		}
		if widest == nil || broadcast(i.IPv4).Compare(broadcast(widest.IPv4)) > 0 {
			widest = i
		}
	}
}

// DecodeRouterCost decodes a software router's cost: {ip, push, swap, pop,
// per_byte, cpu: own|shared, queue}, a node's or a variant's.
func DecodeRouterCost(d *labyaml.Decoder, key string, v *yaml.Node) topologies.RouterCost {
	var c topologies.RouterCost
	var cpu string
	d.Mapping(v, key, []labyaml.Field{
		{Name: "ip", Required: false, Decode: func(key string, v *yaml.Node) { d.DurationIn(key, v, MaxCost, &c.IP) }},
		{Name: "push", Required: false, Decode: func(key string, v *yaml.Node) { d.DurationIn(key, v, MaxCost, &c.Push) }},
		{Name: "swap", Required: false, Decode: func(key string, v *yaml.Node) { d.DurationIn(key, v, MaxCost, &c.Swap) }},
		{Name: "pop", Required: false, Decode: func(key string, v *yaml.Node) { d.DurationIn(key, v, MaxCost, &c.Pop) }},
		{Name: "per_byte", Required: false, Decode: func(key string, v *yaml.Node) { d.DurationIn(key, v, MaxCost, &c.PerByte) }},
		{Name: "cpu", Required: false, Decode: func(key string, v *yaml.Node) { labyaml.OneOf(d, key, v, &cpu, "own", "shared") }},
		{Name: "queue", Required: false, Decode: func(key string, v *yaml.Node) { d.IntIn(key, v, 1, 1<<20, &c.Queue) }},
	})
	c.SharedCPU = cpu == "shared"
	if c.Queue == 0 {
		c.Queue = defaults.RouterQueue
	}
	return c
}
