package lesson

import (
	"fmt"
	"time"

	"github.com/atmlab/atmlab/emulator"
	"github.com/atmlab/atmlab/emulator/atm"
	"github.com/atmlab/atmlab/harness/perf"
	"github.com/atmlab/atmlab/harness/theory"
	"github.com/atmlab/atmlab/topologies"
	"github.com/atmlab/atmlab/topologies/plan"
)

// hop is one link of a path, in the direction the path crosses it.
type hop struct {
	link        *topologies.Link
	there, back topologies.Direction
	labelled    bool
}

// route is the fewest links from one node to another (breadth first, in
// the lab's link order).
func route(lab *topologies.Lab, from, to string) ([]hop, error) {
	path := plan.ShortestPath(lab.Links, from, to)
	if path == nil {
		return nil, fmt.Errorf("no path from %s to %s in lab %s", from, to, lab.Name)
	}
	var hops []hop
	n := from // the near end of each link in turn
	for _, l := range path {
		h := hop{link: l, there: l.AB, back: l.BA, labelled: lab.Node(l.A.Node).MPLS && lab.Node(l.B.Node).MPLS}
		if l.A.Node != n {
			h.there, h.back = l.BA, l.AB
		}
		hops = append(hops, h)
		n = l.Other(n)
	}
	return hops, nil
}

// serialization is how long an IP packet of ip octets holds a direction
// of a link: its wire octets (802.3 framing, or whole cells) at the rate.
func serialization(h hop, d topologies.Direction, ip int) time.Duration {
	octets, rate := 0, float64(d.Rate)
	if h.link.ATM != nil {
		phy, aal, encap := h.link.ATM.Layers()
		octets, rate = atm.Billing{PHY: phy, AAL: aal, Encap: encap}.LineOctets(ip), float64(phy.LineRate)
	} else {
		n := emulator.EtherHeader + ip
		if h.labelled {
			n += emulator.EtherTag
		}
		octets = emulator.EtherWire(n)
	}
	if rate <= 0 {
		return 0
	}
	return time.Duration(float64(octets) * 8 / rate * 1e9)
}

// roundTrip is a request's and its response's time on the path in
// seconds: every hop's delay and propagation both ways, and (unless
// delaysOnly) each packet's serialization on every link, as store-and-
// forward switches and routers send it.
func roundTrip(lab *topologies.Lab, p Point, delaysOnly bool, s slip) (float64, error) {
	hops, err := route(lab, p.From, p.To)
	if err != nil {
		return 0, err
	}
	ip := max(p.Size, 1) + theory.IPv4Header + theory.UDPHeader
	if p.Test != perf.UDPRR && p.Test != perf.UDPStream {
		ip = max(p.Size, 1) + theory.IPv4Header + theory.TCPHeader + theory.TCPTimestamps
	}
	var t time.Duration
	for _, h := range hops {
		for _, d := range []topologies.Direction{h.there, h.back} {
			t += d.Impair.Delay + h.link.Propagation
			if !delaysOnly && !s.noSerialization {
				t += serialization(h, d, ip)
			}
		}
	}
	if s.oneWay {
		t /= 2
	}
	return t.Seconds(), nil
}

// bottleneck is the lowest rate of the path's links (an ATM link's rate
// for cells), bit/s.
func bottleneck(lab *topologies.Lab, p Point) (float64, error) {
	hops, err := route(lab, p.From, p.To)
	if err != nil {
		return 0, err
	}
	low := 0.0
	for _, h := range hops {
		for _, d := range []topologies.Direction{h.there, h.back} {
			r := float64(d.Rate)
			if h.link.ATM != nil {
				r = float64(h.link.ATM.PHY.Layer().LineRate)
			}
			if r > 0 && (low == 0 || r < low) {
				low = r
			}
		}
	}
	if low == 0 {
		return 0, fmt.Errorf("no link rate on the path from %s to %s", p.From, p.To)
	}
	return low, nil
}
