// Package cut runs one part of a split lab in real time: the part's own
// nodes and links in this instance, and each cut link's far end a cut
// port whose frames travel to the peer instance over UDP, stamped with
// their departure in model time, and are released there at departure +
// the link's delay. The instances agree on time by NTP-style exchanges
// over the same socket, at start and all through the run, and a cut whose
// delay is below the measured one-way latency plus its jitter is refused
// (docs/split.md).
//
// Which side bills what: the sending side queues the frame in its port's
// buffer and serialises it at the direction's rate (its transmitter is
// the link's, with no propagation); at its last bit the frame departs.
// The receiving side adds the propagation and the direction's fixed delay
// impairment and hands the frame to its port then. Every model time is
// the same as in the unsplit lab.
package cut

import (
	"fmt"
	"slices"
	"time"

	"github.com/atmlab/atmlab/topologies"
	"github.com/atmlab/atmlab/topologies/labfile"
)

// Part is one part of a split lab, ready to build: a lab of the part's
// nodes, the links between them and its cut links, in which each cut
// link's far end is a stand-in host (never brought up: its port is the
// cut port).
type Part struct {
	Name string
	// Lab is named LAB-PART, so that two parts on one machine share
	// no namespace, lock or socket. Its cut links have no propagation and
	// no impairment: the receiving side applies them.
	Lab      *topologies.Lab
	Cuts     []*End
	StandIns []string // the stand-in hosts' names (the far ends' nodes)
}

// End is this part's end of a cut link.
type End struct {
	Index         int              // the link's index among the whole lab's links
	Link          *topologies.Link // in the whole lab
	Local, Remote topologies.Endpoint
	Peer          string // the part of the remote end
	// LocalIsA says the local end is the link's A end: frames sent go
	// A to B.
	LocalIsA bool
	// Delay is what a frame arriving here travels after it departed:
	// the propagation and the inbound direction's delay impairment.
	Delay time.Duration
	// Limit is the inbound direction's limit of frames in flight, when
	// it has a delay impairment (netem's: 0 is emulator.DefaultLimit).
	Limit int
	// OutDelay is the outbound direction's: what the peer adds.
	OutDelay time.Duration
}

// Name is the link as stats and errors show it, "s1:eth1-s2:eth1".
func (e *End) Name() string { return e.Link.A.String() + "-" + e.Link.B.String() }

// NewPart cuts lab's part named part out of it: nodes are the part's,
// partOf names the part of any node of the lab. It refuses a cut link
// real time cannot carry exactly (an ATM link; jitter, loss or an extra
// rate on it) and a part with a router, whose routes are planned across
// the whole lab.
func NewPart(lab *topologies.Lab, part string, nodes []string, partOf func(node string) string) (*Part, error) {
	if len(nodes) == 0 {
		return nil, fmt.Errorf("%s: part %s: no such part, or it has no nodes", lab.File, part)
	}
	name := lab.Name + "-" + part
	if err := labfile.CheckLabName(name); err != nil {
		return nil, fmt.Errorf("%s: part %s: its instance's lab name %s is too long or not a name (%v)", lab.File, part, name, err)
	}
	in := map[string]bool{}
	for _, n := range nodes {
		in[n] = true
	}
	c := lab.Clone()
	c.Name = name
	c.Experiments, c.Variants, c.Sweep, c.Findings, c.Figures, c.References, c.Warnings = nil, nil, nil, nil, nil, nil, nil
	c.Parts = nil // a part's own lab is whole: its cut links end in stand-ins, not in other parts
	p := &Part{Name: part, Lab: c}
	var kept []*topologies.Node
	for _, n := range c.Nodes {
		if !in[n.Name] {
			continue
		}
		if n.Kind == topologies.KindRouter {
			return nil, fmt.Errorf("%s:%d: part %s: router %s: a router's routes are planned across the whole lab; a part run in real time holds hosts, switches, hubs and ATM switches", lab.File, n.Line, part, n.Name)
		}
		kept = append(kept, n)
	}
	standIn := map[string]*topologies.Node{}
	var links []*topologies.Link
	for i, l := range c.Links {
		a, b := in[l.A.Node], in[l.B.Node]
		switch {
		case a && b:
			links = append(links, l)
			continue
		case !a && !b:
			continue
		}
		whole := lab.Links[i]
		e := &End{Index: i, Link: whole, Local: l.A, Remote: l.B, LocalIsA: a}
		inbound, outbound := whole.BA, whole.AB
		if !a {
			e.Local, e.Remote = l.B, l.A
			inbound, outbound = whole.AB, whole.BA
		}
		e.Peer = partOf(e.Remote.Node)
		if err := carries(lab, whole, part); err != nil {
			return nil, err
		}
		e.Delay = whole.Propagation + inbound.Impair.Delay
		e.OutDelay = whole.Propagation + outbound.Impair.Delay
		if inbound.Impair.Delay > 0 {
			e.Limit = inbound.Impair.Limit
		}
		p.Cuts = append(p.Cuts, e)
		// The transmitter toward the cut port: the link's rate and the
		// sending device's queue, nothing after the last bit.
		l.Propagation = 0
		l.AB.Impair, l.BA.Impair = topologies.Impair{}, topologies.Impair{}
		links = append(links, l)
		s := standIn[e.Remote.Node]
		if s == nil {
			s = &topologies.Node{Name: e.Remote.Node, Kind: topologies.KindHost, Line: l.Line}
			standIn[s.Name] = s
			p.StandIns = append(p.StandIns, s.Name)
		}
		s.Interfaces = append(s.Interfaces, &topologies.Interface{Name: e.Remote.Port, MTU: mtuOf(lab, e.Local), Line: l.Line})
	}
	for _, n := range p.StandIns {
		kept = append(kept, standIn[n])
	}
	c.Nodes, c.Links = kept, links
	slices.Sort(p.StandIns)
	return p, nil
}

// carries says why real time cannot carry link across a cut exactly, if
// it cannot.
func carries(lab *topologies.Lab, l *topologies.Link, part string) error {
	where := fmt.Sprintf("%s:%d: part %s: cut link %s-%s", lab.File, l.Line, part, l.A, l.B)
	if l.ATM != nil {
		return fmt.Errorf("%s: is an ATM link; real time cuts Ethernet links only", where)
	}
	for _, d := range []topologies.Direction{l.AB, l.BA} {
		im := d.Impair
		if im.Jitter > 0 || im.Loss > 0 || im.Rate > 0 {
			return fmt.Errorf("%s: has jitter, loss or an impairment rate, drawn from one random stream per direction that one instance would have to own; in real time a cut link carries propagation and a fixed delay only", where)
		}
	}
	return nil
}

// mtuOf is the MTU the stand-in's interface takes: the local end's if it
// is a host's or router's interface, else the default.
func mtuOf(lab *topologies.Lab, e topologies.Endpoint) int {
	if n := lab.Node(e.Node); n != nil {
		if i := n.Interface(e.Port); i != nil {
			return i.MTU
		}
	}
	return 1500
}
