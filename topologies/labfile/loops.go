package labfile

import (
	"fmt"
	"github.com/atmlab/atmlab/topologies"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/atmlab/atmlab/topologies/labyaml"
)

// maxLoopWarnings is how many loops are named one by one; the rest are
// counted in one more warning.
const maxLoopWarnings = 10

// loopWarnings names the loops of switches and hubs: a link from a switch
// to itself, two links between the same two, a ring. They are valid (real
// switches without spanning tree can be cabled so), but one broadcast then
// circles the loop forever, a storm. A link closes a loop when its ends are
// already joined by the links before it; the loop is that link and the
// path of earlier links between its ends.
func loopWarnings(lab *topologies.Lab) []*labyaml.Error {
	bridges := func(name string) bool {
		n := lab.Node(name)
		return n != nil && (n.Kind == topologies.KindSwitch || n.Kind == topologies.KindHub)
	}
	parent := unionFind{} // over the bridges
	find := parent.find
	var forest []*topologies.Link // links that joined two parts
	var out []*labyaml.Error
	more := 0
	warn := func(l *topologies.Link, format string, args ...any) {
		if len(out) == maxLoopWarnings {
			more++
			return
		}
		out = append(out, &labyaml.Error{File: lab.File, Line: l.Line, Key: "topology.links", Msg: fmt.Sprintf(format, args...) +
			": one broadcast circles it forever (a storm), as between real switches without spanning tree; remove a link to break it"})
	}
	for _, l := range lab.Links {
		a, b := l.A.Node, l.B.Node
		if l.ATM != nil || !bridges(a) || !bridges(b) {
			continue
		}
		if a == b {
			warn(l, "loop: link %s-%s joins %s to itself", l.A, l.B, a)
			continue
		}
		if ra, rb := find(a), find(b); ra != rb {
			parent[ra] = rb
			forest = append(forest, l)
			continue
		}
		if len(out) == maxLoopWarnings {
			more++
			continue
		}
		// The path from b back to a through the forest.
		nodes, lines := []string{b}, []string{}
		path := topologies.ShortestPath(forest, a, b)
		for i, x := len(path)-1, b; i >= 0; i-- {
			x = path[i].Other(x)
			nodes = append(nodes, x)
			lines = append(lines, fmt.Sprint(path[i].Line))
		}
		lines = append(lines, fmt.Sprint(l.Line))
		if len(nodes) == 2 {
			warn(l, "loop: links on lines %s and %s both join %s and %s", lines[0], lines[1], a, b)
		} else {
			warn(l, "loop: %s-%s closes a ring %s-%s (links on lines %s)", l.A, l.B, strings.Join(nodes, "-"), b, strings.Join(lines, ", "))
		}
	}
	if more > 0 {
		out = append(out, &labyaml.Error{File: lab.File, Line: out[len(out)-1].Line, Key: "topology.links", Msg: fmt.Sprintf("loop: %d more links close loops of switches", more)})
	}
	return out
}

// checkPVCs refuses a PVC whose two hosts' links differ in AAL or
// encapsulation: the far adapter could not reassemble what the near one
// segments. Without mappings every two hosts that atm-switches join share a
// PVC (as Build sets them up); with mappings a PVC is followed from each
// host through the switches' cross-connects.
func (d *decoder) checkPVCs(lab *topologies.Lab) {
	type end struct {
		host topologies.Endpoint
		link *topologies.Link
	}
	isSwitch := func(e topologies.Endpoint) bool {
		n := lab.Node(e.Node)
		return n != nil && n.Kind == topologies.KindATMSwitch
	}
	isHost := func(e topologies.Endpoint) bool { return endsCLIP(lab, e) } // a host or a router
	mismatch := func(a, b end) {
		if a.link.ATM.AAL != b.link.ATM.AAL || a.link.ATM.Encap != b.link.ATM.Encap {
			d.Errorf(&yaml.Node{Line: b.link.Line}, "topology.links", "%s and %s share a PVC but their links' aal/encap differ (%s/%s on line %d, %s/%s); make them equal",
				a.host, b.host, a.link.ATM.AAL, a.link.ATM.Encap, a.link.Line, b.link.ATM.AAL, b.link.ATM.Encap)
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
		return
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
}

// unionFind maps a node to its set's representative (path-compressed);
// union is parent[find(a)] = find(b).
type unionFind map[string]string

func (u unionFind) find(x string) string {
	p, ok := u[x]
	if !ok || p == x {
		u[x] = x
		return x
	}
	r := u.find(p)
	u[x] = r
	return r
}
