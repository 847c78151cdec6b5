package topologies

import (
	"fmt"
	"time"
)

// View is a lab's topology as a viewer draws it (the live view, and the
// control socket's topology request): every node and link, each link's
// rate or PHY and AAL, with plain JSON field names.
type View struct {
	Lab   string     `json:"lab"`
	Nodes []ViewNode `json:"nodes"`
	Links []ViewLink `json:"links"`
}

// ViewNode is a node: its name, kind and interfaces.
type ViewNode struct {
	Name       string   `json:"name"`
	Kind       Kind     `json:"kind"`
	Interfaces []string `json:"interfaces,omitempty"` // "eth0 10.0.0.1/24"
	// PVCs are a host's ATM interfaces' circuits ("eth0 0/100 to 10.0.0.2")
	// and an atm-switch's mappings ("p1:0:100 <-> p2:0:200").
	PVCs []string `json:"pvcs,omitempty"`
	// Labels are an MPLS router's label bindings, as the built network
	// has them (SetLabels): "push 16 for 10.0.3.0/24", "in 17: pop via ...".
	Labels []string `json:"labels,omitempty"`
}

// SetLabels gives each router named in labels its label bindings.
func (v *View) SetLabels(labels map[string][]string) {
	for i := range v.Nodes {
		v.Nodes[i].Labels = labels[v.Nodes[i].Name]
	}
}

// ViewLink is a link between two endpoints, each direction's settings as
// in the lab file.
type ViewLink struct {
	A    string  `json:"a"` // "h1:eth0"
	B    string  `json:"b"`
	AB   ViewDir `json:"ab"` // what A sends
	BA   ViewDir `json:"ba"`
	PHY  string  `json:"phy,omitempty"` // ATM links only
	AAL  string  `json:"aal,omitempty"`
	Enc  string  `json:"encap,omitempty"`
	Prop float64 `json:"propagation_ms,omitempty"`
}

// ViewDir is one direction's rate and impairments.
type ViewDir struct {
	Rate   float64 `json:"rate_bps"`
	Text   string  `json:"rate"` // "100M"
	Delay  float64 `json:"delay_ms,omitempty"`
	Jitter float64 `json:"jitter_ms,omitempty"`
	Loss   float64 `json:"loss,omitempty"` // probability
}

// View returns the lab's topology for a viewer.
func (l *Lab) View() View {
	s := View{Lab: l.Name, Nodes: []ViewNode{}, Links: []ViewLink{}}
	for _, n := range l.Nodes {
		sn := ViewNode{Name: n.Name, Kind: n.Kind}
		for _, i := range n.Interfaces {
			d := i.Name
			if i.IPv4.IsValid() {
				d += " " + i.IPv4.String()
			}
			sn.Interfaces = append(sn.Interfaces, d)
			for _, vc := range i.VCs {
				p := fmt.Sprintf("%s %d/%d", i.Name, vc.VPI, vc.VCI)
				if vc.Peer.IsValid() {
					p += " to " + vc.Peer.String()
				}
				if vc.Native {
					p += " (native AAL)"
				}
				sn.PVCs = append(sn.PVCs, p)
			}
		}
		if n.ATMSwitch != nil {
			for _, m := range n.ATMSwitch.Mappings {
				sn.PVCs = append(sn.PVCs, m.From.String()+" <-> "+m.To.String())
			}
		}
		s.Nodes = append(s.Nodes, sn)
	}
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	dir := func(d Direction) ViewDir {
		return ViewDir{Rate: float64(d.Rate), Text: d.Rate.String(), Delay: ms(d.Impair.Delay), Jitter: ms(d.Impair.Jitter), Loss: d.Impair.Loss}
	}
	for _, k := range l.Links {
		sl := ViewLink{A: k.A.String(), B: k.B.String(), AB: dir(k.AB), BA: dir(k.BA), Prop: ms(k.Propagation)}
		if k.ATM != nil {
			sl.PHY, sl.AAL, sl.Enc = string(k.ATM.PHY), string(k.ATM.AAL), string(k.ATM.Encap)
		}
		s.Links = append(s.Links, sl)
	}
	return s
}
