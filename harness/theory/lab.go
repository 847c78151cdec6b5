package theory

import (
	"github.com/atmlab/atmlab/harness/perf"
	"github.com/atmlab/atmlab/topologies"
)

// PathCeiling is the theoretical goodput of a stream test between two
// hosts of a lab: the lowest ceiling of their links (Ethernet or ATM) and
// of the labelled links between MPLS routers, at the sender's MTU.
func PathCeiling(lab *topologies.Lab, from, to, test string, size int) (float64, bool) {
	proto := map[string]string{perf.TCPStream: "tcp", perf.TCPMaerts: "tcp", perf.UDPStream: "udp"}[test]
	if proto == "" || size == 0 || from == to {
		return 0, false // a loopback has no link to set a ceiling
	}
	mtu := 0
	for _, l := range lab.Links {
		for _, e := range []topologies.Endpoint{l.A, l.B} {
			if i := lab.Node(e.Node).Interface(e.Port); i != nil && e.Node == from {
				mtu = i.MTU
			}
		}
	}
	best, found := 0.0, false
	for _, l := range lab.Links {
		// Links between two MPLS routers carry a label on every frame.
		labelled := lab.Node(l.A.Node).MPLS && lab.Node(l.B.Node).MPLS
		for _, end := range []struct {
			ep  topologies.Endpoint
			dir topologies.Direction
		}{{l.A, l.AB}, {l.B, l.BA}} {
			if end.ep.Node != from && end.ep.Node != to && !labelled || mtu == 0 {
				continue
			}
			c, err := LinkCeiling(l, end.dir, mtu, size, proto)
			if labelled {
				c, err = MPLSCeiling(end.dir.Rate, mtu, 1, size, proto)
			}
			if err == nil && (!found || c.Goodput < best) {
				best, found = c.Goodput, true
			}
		}
	}
	return best, found
}

// LinkCeiling is the goodput ceiling of one direction of a lab's link.
func LinkCeiling(l *topologies.Link, dir topologies.Direction, mtu, payload int, proto string) (Ceiling, error) {
	if l.ATM == nil {
		return EthernetCeiling(dir.Rate, mtu, payload, proto)
	}
	phy, aal, encap := l.ATM.Layers()
	return ATMCeiling(phy, aal, encap, mtu, payload, proto)
}
