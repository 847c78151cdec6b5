package theory

import (
	"github.com/atmlab/atmlab/harness/perf"
	"github.com/atmlab/atmlab/topologies"
)

// StreamProto is the transport a stream test's ceiling is figured for
// ("tcp" or "udp"), or "" for a test that has no ceiling.
func StreamProto(test string) string {
	return map[string]string{perf.TCPStream: "tcp", perf.TCPMaerts: "tcp", perf.UDPStream: "udp"}[test]
}

// PathLink is one link direction that may bound a stream's goodput.
type PathLink struct {
	Link     *topologies.Link
	Dir      topologies.Direction
	Labelled bool // between two MPLS routers: a label on every frame
}

// PathLinks are the link directions that may bound the goodput from one
// host to another: those leaving or reaching the two hosts, and the
// labelled links between MPLS routers; mtu is the sender's (0, and no
// links, when the sender has no interface).
func PathLinks(lab *topologies.Lab, from, to string) (mtu int, links []PathLink) {
	for _, l := range lab.Links {
		for _, e := range []topologies.Endpoint{l.A, l.B} {
			if i := lab.Node(e.Node).Interface(e.Port); i != nil && e.Node == from {
				mtu = i.MTU
			}
		}
	}
	if mtu == 0 {
		return 0, nil
	}
	for _, l := range lab.Links {
		labelled := lab.Node(l.A.Node).MPLS && lab.Node(l.B.Node).MPLS
		for _, end := range []struct {
			ep  topologies.Endpoint
			dir topologies.Direction
		}{{l.A, l.AB}, {l.B, l.BA}} {
			if end.ep.Node == from || end.ep.Node == to || labelled {
				links = append(links, PathLink{Link: l, Dir: end.dir, Labelled: labelled})
			}
		}
	}
	return mtu, links
}

// PathCeiling is the theoretical goodput of a stream test between two
// hosts of a lab: the lowest ceiling of their links (Ethernet or ATM) and
// of the labelled links between MPLS routers, at the sender's MTU.
func PathCeiling(lab *topologies.Lab, from, to, test string, size int) (float64, bool) {
	proto := StreamProto(test)
	if proto == "" || size == 0 || from == to {
		return 0, false // a loopback has no link to set a ceiling
	}
	mtu, links := PathLinks(lab, from, to)
	best, found := 0.0, false
	for _, pl := range links {
		c, err := LinkCeiling(pl.Link, pl.Dir, mtu, size, proto)
		if pl.Labelled {
			c, err = MPLSCeiling(pl.Dir.Rate, mtu, 1, size, proto)
		}
		if err == nil && (!found || c.Goodput < best) {
			best, found = c.Goodput, true
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
