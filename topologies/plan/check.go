package plan

import (
	"fmt"

	"github.com/atmlab/atmlab/topologies"
	"github.com/atmlab/atmlab/topologies/kinds"
	"github.com/atmlab/atmlab/topologies/labyaml"
)

// CheckPVCs refuses a PVC whose two hosts' links differ in AAL or
// encapsulation: the far adapter could not reassemble what the near one
// segments. Without mappings every two hosts that atm-switches join share a
// PVC (as Build sets them up); with mappings a PVC is followed from each
// host through the switches' cross-connects.
func CheckPVCs(lab *topologies.Lab) []error {
	var errs []error
	type end struct {
		host topologies.Endpoint
		link *topologies.Link
	}
	isSwitch := func(e topologies.Endpoint) bool {
		n := lab.Node(e.Node)
		return n != nil && n.Kind == topologies.KindATMSwitch
	}
	isHost := func(e topologies.Endpoint) bool { return kinds.EndsCLIP(lab, e) } // a host or a router
	mismatch := func(a, b end) {
		if a.link.ATM.AAL != b.link.ATM.AAL || a.link.ATM.Encap != b.link.ATM.Encap {
			errs = append(errs, &labyaml.Error{File: lab.File, Line: b.link.Line, Key: "topology.links", Msg: fmt.Sprintf("%s and %s share a PVC but their links' aal/encap differ (%s/%s on line %d, %s/%s); make them equal",
				a.host, b.host, a.link.ATM.AAL, a.link.ATM.Encap, a.link.Line, b.link.ATM.AAL, b.link.ATM.Encap)})
		}
	}
	explicit := false
	for _, n := range lab.Nodes {
		explicit = explicit || n.ATMSwitch != nil && len(n.ATMSwitch.Mappings) > 0
	}
	if !explicit {
		parent := unionFind{}
		find := parent.find
		for _, l := range lab.Links {
			if l.ATM != nil && isSwitch(l.A) && isSwitch(l.B) {
				parent[find(l.A.Node)] = find(l.B.Node)
			}
		}
		first := map[string]end{} // switch group -> its first addressed host
		for _, l := range lab.Links {
			if l.ATM == nil {
				continue
			}
			for _, pair := range [][2]topologies.Endpoint{{l.A, l.B}, {l.B, l.A}} {
				h, sw := pair[0], pair[1]
				if !isHost(h) || !isSwitch(sw) || !lab.Node(h.Node).Interface(h.Port).IPv4.IsValid() {
					continue
				}
				g := find(sw.Node)
				if f, ok := first[g]; ok {
					mismatch(f, end{h, l})
				} else {
					first[g] = end{h, l}
				}
			}
		}
		return errs
	}
	// Cross-connects: switch, port, VPI and VCI (-1 for a VP) to the far side.
	type hop struct {
		sw string
		a  topologies.ATMAddr
	}
	xc := map[hop]topologies.ATMAddr{}
	steps := 0
	for _, n := range lab.Nodes {
		if n.ATMSwitch == nil {
			continue
		}
		for _, m := range n.ATMSwitch.Mappings {
			xc[hop{n.Name, m.From}], xc[hop{n.Name, m.To}] = m.To, m.From
			steps++
		}
	}
	for _, l := range lab.Links {
		if l.ATM == nil {
			continue
		}
		for _, pair := range [][2]topologies.Endpoint{{l.A, l.B}, {l.B, l.A}} {
			h, at := pair[0], pair[1]
			if !isHost(h) || !isSwitch(at) {
				continue
			}
			vpi, vci := l.ATM.VPI, l.ATM.VCI
			for range steps + 1 { // a PVC crosses each cross-connect at most once
				to, vc := xc[hop{at.Node, topologies.ATMAddr{Port: at.Port, VPI: vpi, VCI: vci}}]
				vp := false
				if !vc {
					to, vp = xc[hop{at.Node, topologies.ATMAddr{Port: at.Port, VPI: vpi, VCI: -1}}]
				}
				if !vc && !vp {
					break // not cross-connected: no PVC
				}
				vpi = to.VPI
				if vc {
					vci = to.VCI
				}
				out := topologies.Endpoint{Node: at.Node, Port: to.Port}
				next := lab.LinkOf(out)
				if next == nil || next.ATM == nil {
					break
				}
				far := next.A
				if far == out {
					far = next.B
				}
				if isHost(far) {
					if h.String() < far.String() { // each PVC once
						mismatch(end{h, l}, end{far, next})
					}
					break
				}
				if !isSwitch(far) {
					break
				}
				at = far
			}
		}
	}
	return errs
}
