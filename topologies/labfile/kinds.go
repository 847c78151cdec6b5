package labfile

import (
	"github.com/atmlab/atmlab/topologies"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// kinds is the lab file's table of node kinds, in the order errors list
// them: the keys each accepts besides kind, the configuration a node of it
// starts with, the defaults it gets for what the file left out, and what
// only its nodes must satisfy.
// Package devices has the matching table of what builds each kind.
var kinds = []kindSpec{
	{kind: topologies.KindHost, keys: []string{"ipv4", "mtu", "interfaces", "routes", "sysctls", "cpu"}, media: ethernetAndATM},
	{kind: topologies.KindSwitch, keys: []string{"buffer", "ageing", "cpu"}, defaults: func(n *topologies.Node) {
		if n.Buffer == 0 {
			n.Buffer = topologies.DefaultSwitchBuffer
		}
	}},
	{kind: topologies.KindHub, keys: []string{"repeater"}, defaults: func(n *topologies.Node) {
		if n.Repeater == "" {
			n.Repeater = topologies.DefaultRepeater
		}
	}},
	{kind: topologies.KindATMSwitch, keys: []string{"queue", "discard", "mappings"}, media: atmOnly,
		start: func(n *topologies.Node) { n.ATMSwitch = &topologies.ATMSwitch{} },
		defaults: func(n *topologies.Node) {
			if n.ATMSwitch.Queue == 0 {
				n.ATMSwitch.Queue = topologies.DefaultATMSwitchQueue
			}
			if n.ATMSwitch.Discard == "" {
				n.ATMSwitch.Discard = topologies.DefaultDiscard
			}
		}},
	{kind: topologies.KindRouter, keys: []string{"mpls", "interfaces", "routes", "ttl", "null", "cost"}, media: ethernetAndATM,
		start: func(n *topologies.Node) { n.Router = &topologies.Router{} },
		check: func(d *decoder, lab *topologies.Lab, n *topologies.Node) {
			for _, i := range n.Interfaces {
				if !i.IPv4.IsValid() {
					d.Errorf(&yaml.Node{Line: i.Line}, "topology.nodes."+n.Name+".interfaces", "router interface %s needs an address: interfaces: {%s: {ipv4: 10.1.0.254/24}}", i.Name, i.Name)
				}
				d.checkMPLSOverATM(lab, n, i)
			}
			d.checkRouterSubnets(n)
		}},
	{kind: topologies.KindWire, check: func(d *decoder, lab *topologies.Lab, n *topologies.Node) {
		var lines []int
		for _, l := range lab.Links {
			if l.A.Node == n.Name || l.B.Node == n.Name {
				lines = append(lines, l.Line)
			}
		}
		switch {
		case len(lines) > 2:
			d.Errorf(&yaml.Node{Line: lines[2]}, "topology.links", "a third link to wire %s (the others are on lines %d and %d): a wire joins two links; use a switch", n.Name, lines[0], lines[1])
		case len(lines) < 2:
			d.Errorf(&yaml.Node{Line: n.Line}, "topology.nodes."+n.Name, "wire %s has %d of its two links: frames into it would go nowhere; link both its ends or remove it", n.Name, len(lines))
		}
	}},
}

// kindSpec is one kind's row of the table.
type kindSpec struct {
	kind     topologies.Kind
	keys     []string               // accepted besides kind
	media    media                  // the links its ports take
	start    func(*topologies.Node) // makes the kind's configuration before its keys are decoded; nil for none
	defaults func(*topologies.Node) // fills what the file left out; nil for nothing
	// check validates a node of the kind against the lab's links, once
	// every link is read; nil for nothing beyond the shared checks.
	check func(d *decoder, lab *topologies.Lab, n *topologies.Node)
}

// media are the links a kind's ports take.
type media uint8

const (
	ethernetOnly   media = iota // the zero value: most kinds
	ethernetAndATM              // a host or a router: an Ethernet NIC or an ATM adapter (Classical IP) per interface
	atmOnly
)

// atmKinds names the kinds that take ATM links: "hosts, atm-switches and routers".
func atmKinds() string {
	var names []string
	for _, s := range kinds {
		if s.media != ethernetOnly {
			names = append(names, plural(string(s.kind)))
		}
	}
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

// plural is a kind's name for several: hosts, atm-switches.
func plural(k string) string {
	for _, end := range []string{"s", "x", "ch", "sh"} {
		if strings.HasSuffix(k, end) {
			return k + "es"
		}
	}
	return k + "s"
}

// kindOf returns k's row.
func kindOf(k topologies.Kind) (kindSpec, bool) {
	i := slices.IndexFunc(kinds, func(s kindSpec) bool { return s.kind == k })
	if i < 0 {
		return kindSpec{}, false
	}
	return kinds[i], true
}

// hasInterfaces reports whether nodes of the kind have named interfaces
// (addresses, MTUs, routes) rather than bare ports.
func (s kindSpec) hasInterfaces() bool { return slices.Contains(s.keys, "interfaces") }

// kindList is the table's kinds as a sentence's list: "host, switch or hub".
func kindList() string {
	names := make([]string, len(kinds))
	for i, s := range kinds {
		names[i] = string(s.kind)
	}
	if len(names) == 1 {
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// kindDefaults fills what a node of its kind needs and the lab file left
// out; decoding and a variant that changes a node's kind both call it.
func kindDefaults(n *topologies.Node) {
	if s, ok := kindOf(n.Kind); ok && s.defaults != nil {
		s.defaults(n)
	}
}

// takesInterfaces reports whether nodes of kind k have named interfaces.
func takesInterfaces(k topologies.Kind) bool {
	s, ok := kindOf(k)
	return ok && s.hasInterfaces()
}

// endsCLIP reports whether e is an interface of a kind that ends ATM links
// in an adapter running Classical IP (a host or a router): the ends of
// PVCs, where an atm-switch only relays them.
func endsCLIP(lab *topologies.Lab, e topologies.Endpoint) bool {
	n := lab.Node(e.Node)
	if n == nil {
		return false
	}
	k, _ := kindOf(n.Kind)
	return k.media == ethernetAndATM
}

// checkMPLSOverATM refuses an MPLS router's interface on a VC-mux ATM link:
// a VC-mux PVC carries one protocol, told by the IP version nibble, so a
// labelled packet needs LLC/SNAP's EtherType 0x8847 (RFC 2684 routed PDUs).
func (d *decoder) checkMPLSOverATM(lab *topologies.Lab, n *topologies.Node, i *topologies.Interface) {
	l := lab.LinkOf(topologies.Endpoint{Node: n.Name, Port: i.Name})
	if !n.MPLS || l == nil || l.ATM == nil || l.ATM.Encap != topologies.VCMux {
		return
	}
	d.Errorf(&yaml.Node{Line: l.Line}, "topology.links", "%s:%s is an MPLS router's interface on a VC-mux ATM link, which carries IP only; labelled packets need LLC/SNAP: atm: {encap: llc}", n.Name, i.Name)
}
