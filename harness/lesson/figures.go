package lesson

import (
	"fmt"
	"math"

	"github.com/atmlab/atmlab/cells"
	"github.com/atmlab/atmlab/emulator"
	"github.com/atmlab/atmlab/harness/theory"
	"github.com/atmlab/atmlab/topologies"
)

// slip is one change to the theory: what a student who left something
// out, or counted it wrong, would have worked out. The zero slip is the
// theory itself (theory.PathCeiling's figures; a test holds them equal).
type slip struct {
	name    string // the reason a matching answer is given
	atm     bool   // applies on an ATM path
	ether   bool   // applies on an Ethernet path
	applies func(p *pathInfo) bool

	noTrailer, noLLC, noHeaders, noPadding, cell48, nominal bool
	noPreamble, noFCS, noLabel, lineRate                    bool
	oneWay, noSerialization                                 bool // round trips
	delay                                                   bool // applies to rtt, transactions_per_s, bdp_octets
}

// slips are the changes atmlab tries, one at a time, to explain a wrong
// prediction.
var slips = []slip{
	{name: "you left out the 8-octet AAL5 trailer", atm: true, noTrailer: true, applies: func(p *pathInfo) bool { return p.aal == cells.AAL5 }},
	{name: "you left out the 8-octet AAL3/4 CPCS header and trailer", atm: true, noTrailer: true, applies: func(p *pathInfo) bool { return p.aal == cells.AAL34 }},
	{name: "you left out the 8-octet LLC/SNAP header (RFC 2684)", atm: true, noLLC: true, applies: func(p *pathInfo) bool { return p.encap == cells.LLC }},
	{name: "you left out the IP and UDP (or TCP) headers", atm: true, ether: true, noHeaders: true},
	{name: "you counted a fraction of a cell: the last cell is padded to a whole 48 octets", atm: true, noPadding: true},
	{name: "you counted the 53-octet cell as 48: the 5-octet cell header costs line time too", atm: true, cell48: true},
	{name: "you used the SONET/SDH line rate, not the rate left for cells", atm: true, nominal: true, applies: func(p *pathInfo) bool {
		return nominalRates[p.phyName] != 0 && nominalRates[p.phyName] != float64(p.rate)
	}},
	{name: "you gave the line rate itself: the cells' headers, the AAL and the encapsulation all take a share of it", atm: true, ether: true, lineRate: true},
	{name: "you left out Ethernet's preamble and inter-frame gap (20 octet times a frame)", ether: true, noPreamble: true},
	{name: "you left out Ethernet's 4-octet FCS", ether: true, noFCS: true},
	{name: "you left out the 4-octet MPLS label on the labelled links", ether: true, noLabel: true, applies: func(p *pathInfo) bool { return p.labels > 0 }},
	{name: "you counted one way, not the round trip", delay: true, oneWay: true},
	{name: "you left out the time each link takes to send the packets", delay: true, noSerialization: true},
}

// nominalRates are the SONET/SDH and PDH line rates a student may take for
// the rate cells get (the PHY's LineRate is after framing).
var nominalRates = map[string]float64{"oc3": 155.52e6, "oc12": 622.08e6, "ds3": 44.736e6, "e3": 34.368e6}

// pathInfo is one direction of one link on a question's path, as the
// theory bills it.
type pathInfo struct {
	atm        bool
	phyName    string
	rate       float64
	cellOctets int
	aal        cells.AAL
	encap      cells.Encap
	labels     int
	mtu        int
	proto      string
}

// candidates are the link directions that may bound a point's goodput,
// chosen as theory.PathCeiling chooses them: those leaving or reaching
// the point's hosts, and the labelled links between MPLS routers.
func candidates(lab *topologies.Lab, p Point) ([]pathInfo, error) {
	proto := theory.StreamProto(p.Test)
	if proto == "" {
		return nil, fmt.Errorf("%s has no ceiling in theory: predict a stream test (TCP_STREAM, TCP_MAERTS, UDP_STREAM)", p.Test)
	}
	if p.Size == 0 || p.From == p.To {
		return nil, fmt.Errorf("%s: a prediction needs two hosts and a size", p)
	}
	mtu, links := theory.PathLinks(lab, p.From, p.To)
	var out []pathInfo
	for _, pl := range links {
		pi := pathInfo{rate: float64(pl.Dir.Rate), mtu: mtu, proto: proto}
		if pl.Labelled {
			pi.labels = 1
		} else if l := pl.Link; l.ATM != nil {
			phy, aal, encap := l.ATM.Layers()
			pi.atm, pi.phyName, pi.rate, pi.cellOctets, pi.aal, pi.encap = true, phy.Name, float64(phy.LineRate), phy.CellOctets, aal, encap
		}
		out = append(out, pi)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no link carries %s: is %s joined to the lab?", p, p.From)
	}
	return out, nil
}

// bill is what one message costs on a link direction with slip s: its
// goodput, cells, CPCS-PDU or frame octets and padding octets.
type bill struct {
	goodput, cells, pduOctets, padding float64
}

func (pi pathInfo) bill(size int, s slip) bill {
	var packets []int // IP packets (a TCP stream: one full segment), headers included
	payload := float64(size)
	hdr := theory.IPv4Header + theory.UDPHeader
	if pi.proto == "tcp" {
		hdr = theory.IPv4Header + theory.TCPHeader + theory.TCPTimestamps
		mss := pi.mtu - hdr
		packets, payload = []int{pi.mtu}, float64(mss)
	} else {
		packets = fragments(pi.mtu, size)
	}
	if s.noHeaders {
		// the headers left out of every packet: the first carries the
		// UDP header, every one an IP header
		for i := range packets {
			packets[i] -= theory.IPv4Header
			if i == 0 {
				packets[i] -= hdr - theory.IPv4Header
			}
		}
	}
	var b bill
	var wire float64
	rate := pi.rate
	if s.lineRate {
		b.goodput = rate
	}
	for _, ip := range packets {
		if pi.atm {
			sdu := ip
			if !s.noLLC {
				sdu += pi.encap.Overhead()
			}
			seg, over := cells.PayloadSize, cells.AAL5Trailer
			if pi.aal == cells.AAL34 {
				seg, over = cells.AAL34SegSize, cells.AAL34Overhead
				if !s.noPadding {
					sdu = (sdu + 3) &^ 3
				}
			}
			if s.noTrailer {
				over = 0
			}
			pdu := float64(sdu + over)
			n := math.Ceil(pdu / float64(seg))
			if s.noPadding {
				n = pdu / float64(seg)
			}
			octets := float64(pi.cellOctets)
			if s.cell48 {
				octets = cells.PayloadSize
			}
			b.cells += n
			b.pduOctets += n * float64(seg)
			b.padding += n*float64(seg) - pdu
			if pi.aal == cells.AAL34 && !s.noPadding {
				b.padding += float64(sdu - ip - pi.encap.Overhead())
			}
			wire += n * octets
			continue
		}
		frame := emulator.EtherHeader + ip
		if !s.noLabel {
			frame += emulator.EtherTag * pi.labels
		}
		fcs := emulator.EtherFCS
		if s.noFCS {
			fcs = 0
		}
		onWire := max(frame+fcs, emulator.EtherMinFrame)
		if s.noPadding || s.noFCS {
			onWire = frame + fcs
		}
		b.pduOctets += float64(onWire)
		b.padding += float64(onWire - frame - fcs)
		if !s.noPreamble {
			onWire += emulator.EtherPreamble + emulator.EtherIFG
		}
		wire += float64(onWire)
	}
	if s.nominal {
		rate = nominalRates[pi.phyName]
	}
	if !s.lineRate {
		b.goodput = rate * payload / wire
	}
	if pi.proto == "tcp" {
		// a stream's message is its share of full segments
		share := float64(size) / payload
		b.cells *= share
		b.pduOctets *= share
		b.padding *= share
	}
	return b
}

// fragments are the IP packets of a UDP datagram of payload octets at the
// MTU, as theory cuts them: all but the last carry a multiple of 8.
func fragments(mtu, payload int) []int {
	data := payload + theory.UDPHeader
	per := mtu - theory.IPv4Header
	if data > per {
		per &^= 7
	}
	var ip []int
	for left := data; left > 0; left -= per {
		ip = append(ip, theory.IPv4Header+min(left, per))
	}
	return ip
}

// Expected is a prediction question's figure on the lab (the question's
// variant already applied), in base units, with slip s (the zero slip:
// the theory itself). Goodput is the lowest over the path's links; the
// cell and octet counts are those of its ATM link (the first, if several).
func Expected(lab *topologies.Lab, q *Question, s slip) (float64, error) {
	switch q.Quantity {
	case "rtt":
		return roundTrip(lab, q.Point, false, s)
	case "transactions_per_s":
		rtt, err := roundTrip(lab, q.Point, false, s)
		if err == nil && rtt <= 0 {
			err = fmt.Errorf("%s: the path has no delay to count transactions by", q.Point)
		}
		return 1 / rtt, err
	case "bdp_octets":
		rate, err := bottleneck(lab, q.Point)
		if err != nil {
			return 0, err
		}
		rtt, err := roundTrip(lab, q.Point, true, s)
		return rate * rtt / 8, err
	}
	if s.delay {
		return 0, fmt.Errorf("no round trip in %s", q.Quantity)
	}
	cands, err := candidates(lab, q.Point)
	if err != nil {
		return 0, err
	}
	switch q.Quantity {
	case "goodput":
		if s.name == "" {
			// the theory itself, as lab run records a point's ceiling
			if c, ok := theory.PathCeiling(lab, q.Point.From, q.Point.To, q.Point.Test, q.Point.Size); ok {
				return c, nil
			}
		}
		best := math.Inf(1)
		for _, c := range cands {
			best = min(best, c.bill(q.Point.Size, s).goodput)
		}
		return best, nil
	case "cells_per_pdu", "pdu_octets", "padding_octets":
		for _, c := range cands {
			if !c.atm && q.Quantity == "cells_per_pdu" {
				continue
			}
			b := c.bill(q.Point.Size, s)
			return map[string]float64{"cells_per_pdu": b.cells, "pdu_octets": b.pduOctets, "padding_octets": b.padding}[q.Quantity], nil
		}
		return 0, fmt.Errorf("%s: no ATM link on the path of %s", q.Quantity, q.Point)
	}
	return 0, fmt.Errorf("%s has no figure in theory", q.Quantity)
}

// applicable reports whether slip s can be made on the question's path.
func (s slip) applicable(lab *topologies.Lab, q *Question) bool {
	if delayed := q.Quantity == "rtt" || q.Quantity == "transactions_per_s" || q.Quantity == "bdp_octets"; delayed || s.delay {
		return delayed && s.delay && !(s.noSerialization && q.Quantity == "bdp_octets")
	}
	cands, err := candidates(lab, q.Point)
	if err != nil {
		return false
	}
	for _, c := range cands {
		if (c.atm && s.atm || !c.atm && s.ether) && (s.applies == nil || s.applies(&c)) {
			return true
		}
	}
	return false
}
