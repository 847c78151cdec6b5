package plan

import (
	"fmt"

	"github.com/atmlab/atmlab/topologies"
	"github.com/atmlab/atmlab/topologies/kinds"
	"github.com/atmlab/atmlab/topologies/labyaml"
)

// PVCs decides every PVC of the lab: each host or router ATM interface's VCs
// (Interface.VCs) and each atm-switch's cross-connects (ATMSwitch.Cross).
// The mappings a lab gives are installed both ways, and each host then has
// its link's VPI/VCI as its one PVC; a lab that gives none gets a duplex PVC
// between every two addressed hosts the switches join, along the fewest
// switch hops, each link handing out VCIs from its atm.vci upwards on its
// atm.vpi. It runs on a checked lab (and again after a variant), so what
// it finds is what only planning can: a link out of VCIs.
func PVCs(lab *topologies.Lab) []error {
	p := &pvcPlan{lab: lab, nextVCI: map[*topologies.Link]int{}}
	explicit := false
	for _, n := range lab.Nodes {
		for _, i := range n.Interfaces {
			i.VCs = nil
		}
		if n.ATMSwitch != nil {
			n.ATMSwitch.Cross = nil
			explicit = explicit || len(n.ATMSwitch.Mappings) > 0
		}
	}
	var links []*topologies.Link
	for _, l := range lab.Links {
		if l.ATM == nil {
			continue
		}
		links = append(links, l)
		if p.isHost(l.A) && p.isHost(l.B) { // a point-to-point PVC
			vc := topologies.VC{VPI: l.ATM.VPI, VCI: l.ATM.VCI}
			p.iface(l.A).VCs, p.iface(l.B).VCs = []topologies.VC{vc}, []topologies.VC{vc}
			if l.ATM.Native && p.isNativeHost(l.A) && p.isNativeHost(l.B) { // the native one beside it, on the next VCI
				if l.ATM.VCI == 65535 {
					return []error{&labyaml.Error{File: lab.File, Line: l.Line, Key: "topology.links",
						Msg: fmt.Sprintf("link %s-%s: native: true takes the VCI after vci: %d, and 65535 is the last: give a lower vci:", l.A, l.B, l.ATM.VCI)}}
				}
				nv := topologies.VC{VPI: l.ATM.VPI, VCI: l.ATM.VCI + 1, Native: true}
				na, nb := nv, nv
				na.Peer, nb.Peer = p.iface(l.B).IPv4.Addr(), p.iface(l.A).IPv4.Addr()
				p.iface(l.A).VCs = append(p.iface(l.A).VCs, na)
				p.iface(l.B).VCs = append(p.iface(l.B).VCs, nb)
			}
		}
	}
	if explicit {
		for _, l := range links {
			if l.ATM.Native && (p.isSwitch(l.A) || p.isSwitch(l.B)) {
				return []error{&labyaml.Error{File: lab.File, Line: l.Line, Key: "topology.links",
					Msg: fmt.Sprintf("link %s-%s: native: true is planned along with the automatic PVCs, and this lab's atm-switches have mappings:; leave out mappings: (or native:)", l.A, l.B)}}
			}
		}
		p.mapped()
		return nil
	}
	if err := p.auto(links); err != nil {
		return []error{err}
	}
	return nil
}

type pvcPlan struct {
	lab     *topologies.Lab
	nextVCI map[*topologies.Link]int
}

// isHost reports whether e ends PVCs: a host's or a router's interface.
func (p *pvcPlan) isHost(e topologies.Endpoint) bool { return kinds.EndsCLIP(p.lab, e) }
func (p *pvcPlan) isSwitch(e topologies.Endpoint) bool {
	return p.lab.Node(e.Node).Kind == topologies.KindATMSwitch
}

// isNativeHost reports whether e is a host's interface: only hosts run
// programs that use the native AAL API.
func (p *pvcPlan) isNativeHost(e topologies.Endpoint) bool {
	return p.lab.Node(e.Node).Kind == topologies.KindHost
}
func (p *pvcPlan) iface(e topologies.Endpoint) *topologies.Interface {
	return p.lab.Node(e.Node).Interface(e.Port)
}

// mapped installs the mappings given, both ways.
func (p *pvcPlan) mapped() {
	for _, node := range p.lab.Nodes {
		if node.ATMSwitch == nil {
			continue
		}
		for _, m := range node.ATMSwitch.Mappings {
			node.ATMSwitch.Cross = append(node.ATMSwitch.Cross, topologies.CrossConnect{In: m.From, Out: m.To}, topologies.CrossConnect{In: m.To, Out: m.From})
		}
	}
	for e := range p.hostEnds() {
		l := p.lab.LinkOf(e)
		p.iface(e).VCs = []topologies.VC{{VPI: l.ATM.VPI, VCI: l.ATM.VCI}}
	}
}

// hostEnds returns the host interfaces attached to atm-switches and the
// switch end of each.
func (p *pvcPlan) hostEnds() map[topologies.Endpoint]topologies.Endpoint {
	ends := map[topologies.Endpoint]topologies.Endpoint{} // host end -> switch end
	for _, l := range p.lab.Links {
		if l.ATM == nil {
			continue
		}
		if p.isHost(l.A) && p.isSwitch(l.B) {
			ends[l.A] = l.B
		} else if p.isHost(l.B) && p.isSwitch(l.A) {
			ends[l.B] = l.A
		}
	}
	return ends
}

// auto plans a duplex PVC between every two addressed hosts the switches
// join (PVCs).
func (p *pvcPlan) auto(links []*topologies.Link) error {
	ends := p.hostEnds()
	var hosts []topologies.Endpoint
	for _, node := range p.lab.Nodes {
		for _, i := range node.Interfaces {
			if _, ok := ends[topologies.Endpoint{Node: node.Name, Port: i.Name}]; ok {
				hosts = append(hosts, topologies.Endpoint{Node: node.Name, Port: i.Name})
			}
		}
	}
	for i, h1 := range hosts {
		for _, h2 := range hosts[i+1:] {
			a1, a2 := p.iface(h1).IPv4, p.iface(h2).IPv4
			if !a1.IsValid() || !a2.IsValid() || h1.Node == h2.Node {
				continue // a node has no use for a PVC to itself
			}
			path := p.path(ends[h1], ends[h2], links)
			if path == nil {
				continue // switches not joined: no PVC, as on hardware
			}
			l1, l2 := p.lab.LinkOf(h1), p.lab.LinkOf(h2)
			if err := p.plan(h1, h2, ends, path, false); err != nil {
				return err
			}
			if l1.ATM.Native && l2.ATM.Native && p.isNativeHost(h1) && p.isNativeHost(h2) {
				if err := p.plan(h1, h2, ends, path, true); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// plan plans one duplex PVC between host ends h1 and h2 along path (the
// switch-to-switch links between their switches), a native one if native.
func (p *pvcPlan) plan(h1, h2 topologies.Endpoint, ends map[topologies.Endpoint]topologies.Endpoint, path []*topologies.Link, native bool) error {
	a1, a2 := p.iface(h1).IPv4, p.iface(h2).IPv4
	l1, l2 := p.lab.LinkOf(h1), p.lab.LinkOf(h2)
	// hops: h1's link, the switch-to-switch links, h2's link.
	hops := append(append([]*topologies.Link{l1}, path...), l2)
	vc := make([]topologies.VC, len(hops))
	for k, l := range hops {
		vci := p.nextVCI[l]
		if vci == 0 {
			vci = l.ATM.VCI
		}
		if vci > 65535 {
			return &labyaml.Error{File: p.lab.File, Line: l.Line, Key: "topology.links",
				Msg: fmt.Sprintf("link %s-%s has run out of VCIs for automatic PVCs: give the switches mappings:, or split the lab", l.A, l.B)}
		}
		p.nextVCI[l] = vci + 1
		vc[k] = topologies.VC{VPI: l.ATM.VPI, VCI: vci}
	}
	// At each switch the PVC enters on hop k and leaves on hop k+1.
	at := ends[h1]
	for k := 0; k+1 < len(hops); k++ {
		in := at
		out := switchEnd(hops[k+1], at.Node)
		sw := p.lab.Node(at.Node).ATMSwitch
		ia := topologies.ATMAddr{Port: in.Port, VPI: vc[k].VPI, VCI: vc[k].VCI}
		oa := topologies.ATMAddr{Port: out.Port, VPI: vc[k+1].VPI, VCI: vc[k+1].VCI}
		sw.Cross = append(sw.Cross, topologies.CrossConnect{In: ia, Out: oa}, topologies.CrossConnect{In: oa, Out: ia})
		if k+2 < len(hops) {
			at = otherEnd(hops[k+1], out)
		}
	}
	first, last := vc[0], vc[len(vc)-1]
	first.Peer, last.Peer = a2.Addr(), a1.Addr()
	first.Native, last.Native = native, native
	p.iface(h1).VCs = append(p.iface(h1).VCs, first)
	p.iface(h2).VCs = append(p.iface(h2).VCs, last)
	return nil
}

// switchEnd returns link l's endpoint on switch node sw.
func switchEnd(l *topologies.Link, sw string) topologies.Endpoint {
	if l.A.Node == sw {
		return l.A
	}
	return l.B
}

func otherEnd(l *topologies.Link, e topologies.Endpoint) topologies.Endpoint {
	if l.A == e {
		return l.B
	}
	return l.A
}

// path returns the switch-to-switch links from switch port from to switch
// port to (breadth first: fewest hops), or nil if none join them.
func (p *pvcPlan) path(from, to topologies.Endpoint, links []*topologies.Link) []*topologies.Link {
	if from.Node == to.Node {
		return []*topologies.Link{}
	}
	var trunks []*topologies.Link
	for _, l := range links {
		if p.isSwitch(l.A) && p.isSwitch(l.B) {
			trunks = append(trunks, l)
		}
	}
	return ShortestPath(trunks, from.Node, to.Node)
}
