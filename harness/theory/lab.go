package theory

import (
	"github.com/atmlab/atmlab/harness/perf"
	"github.com/atmlab/atmlab/topologies"
)

// StreamProto is the transport a stream test's ceiling is figured for
// ("tcp", "udp" or "sctp"), or "" for a test that has no ceiling.
func StreamProto(test string) string {
	return map[string]string{perf.TCPStream: "tcp", perf.TCPMaerts: "tcp", perf.UDPStream: "udp", perf.SCTPStream: "sctp"}[test]
}

// PathLink is one link direction that may bound a stream's goodput.
type PathLink struct {
	Link     *topologies.Link
	Dir      topologies.Direction
	Labelled bool // between two MPLS routers: a label on every frame
}

// PathLinks are the link directions that may bound the goodput from one
// host to another: those leaving or reaching the two hosts, the labelled
// links between MPLS routers, and ATM links between routers and
// atm-switches (an ATM core); mtu is the sender's (0, and no
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
		core := atmCore(lab, l)
		if core {
			labelled = labelledCore(lab, l)
		}
		for _, end := range []struct {
			ep  topologies.Endpoint
			dir topologies.Direction
		}{{l.A, l.AB}, {l.B, l.BA}} {
			if end.ep.Node == from || end.ep.Node == to || labelled || core {
				links = append(links, PathLink{Link: l, Dir: end.dir, Labelled: labelled})
			}
		}
	}
	return mtu, links
}

// atmCore reports whether l is an ATM link between routers and
// atm-switches: a core a stream between hosts may cross.
func atmCore(lab *topologies.Lab, l *topologies.Link) bool {
	if l.ATM == nil {
		return false
	}
	for _, e := range []topologies.Endpoint{l.A, l.B} {
		if k := lab.Node(e.Node).Kind; k != topologies.KindRouter && k != topologies.KindATMSwitch {
			return false
		}
	}
	return true
}

// labelledCore reports whether an ATM core link carries labels: its
// routers' ends all run MPLS, and a link between two atm-switches carries
// them when any router on an ATM link does.
func labelledCore(lab *topologies.Lab, l *topologies.Link) bool {
	routers := 0
	for _, e := range []topologies.Endpoint{l.A, l.B} {
		if n := lab.Node(e.Node); n.Kind == topologies.KindRouter {
			if !n.MPLS {
				return false
			}
			routers++
		}
	}
	if routers > 0 {
		return true
	}
	for _, o := range lab.Links {
		for _, e := range []topologies.Endpoint{o.A, o.B} {
			if n := lab.Node(e.Node); o.ATM != nil && n.Kind == topologies.KindRouter && n.MPLS {
				return true
			}
		}
	}
	return false
}

// PathCeiling is the theoretical goodput of a stream test between two
// hosts of a lab: the lowest ceiling of their links (Ethernet or ATM) and
// of the labelled links between MPLS routers, at the sender's MTU.
func PathCeiling(lab *topologies.Lab, from, to, test string, size int) (float64, bool) {
	return StackCeiling(lab, from, to, test, size, "")
}

// StackCeiling is PathCeiling for the SCTP stack that measured the stream
// (a result's implementation; "" for the kernel or the virtual model): its
// packets are at most perf.SCTPPacketMTU of the sender's MTU, and a message
// longer than one packet's DATA chunk pays every packet's headers.
func StackCeiling(lab *topologies.Lab, from, to, test string, size int, implementation string) (float64, bool) {
	if perf.IsAAL(test) {
		return NativeCeiling(lab, from, to, test, size)
	}
	proto := StreamProto(test)
	if proto == "" || size == 0 || from == to {
		return 0, false // a loopback has no link to set a ceiling
	}
	mtu, links := PathLinks(lab, from, to)
	if proto == "sctp" {
		mtu = perf.SCTPPacketMTU(implementation, mtu)
	}
	best, found := 0.0, false
	for _, pl := range links {
		labels := 0
		if pl.Labelled {
			labels = 1
		}
		c, err := LabelledCeiling(pl.Link, pl.Dir, mtu, labels, size, proto)
		if err == nil && (!found || c.Goodput < best) {
			best, found = c.Goodput, true
		}
	}
	return best, found
}

// LinkCeiling is the goodput ceiling of one direction of a lab's link.
func LinkCeiling(l *topologies.Link, dir topologies.Direction, mtu, payload int, proto string) (Ceiling, error) {
	return LabelledCeiling(l, dir, mtu, 0, payload, proto)
}

// LabelledCeiling is LinkCeiling with labels MPLS label stack entries on
// every packet: after the Ethernet header, or inside an ATM link's
// encapsulation (LLC/SNAP, EtherType 0x8847).
func LabelledCeiling(l *topologies.Link, dir topologies.Direction, mtu, labels, payload int, proto string) (Ceiling, error) {
	if l.ATM == nil {
		return MPLSCeiling(dir.Rate, mtu, labels, payload, proto)
	}
	phy, aal, encap := l.ATM.Layers()
	return ATMMPLSCeiling(phy, aal, encap, mtu, labels, payload, proto)
}
