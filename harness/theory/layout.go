package theory

import (
	"github.com/atmlab/atmlab/cells"
	"github.com/atmlab/atmlab/emulator/atm"
)

// Part is a run of octets of one kind in a cell, for drawing a PDU laid
// out in cells: "phy" (ATM25's start-of-cell command), "atm" (the cell
// header), "sar" (AAL3/4's SAR header or trailer), "cpcs" (AAL3/4's CPCS
// header), "llc" (the RFC 2684 LLC/SNAP prefix), "ip", "udp", "payload",
// "pad" and "trailer" (the CPCS trailer).
type Part struct {
	Kind  string `json:"kind"`
	Bytes int    `json:"bytes"`
}

// Packet is one IP packet of a message laid out in cells: every cell's
// parts in line order, summing to the PHY's octets per cell.
type Packet struct {
	IP    int      `json:"ip_bytes"`
	SDU   int      `json:"sdu_bytes"` // the AAL SDU: the packet and its encapsulation
	Cells [][]Part `json:"cells"`
}

// Layout lays out a UDP message of payload bytes on a Classical IP over
// ATM path: its IP packets (fragments above the MTU), each encapsulated and
// cut into cells by its AAL, as ATMCeiling counts them (atm.md §7).
func Layout(phy atm.PHY, aal atm.AAL, encap cells.Encap, mtu, payload int) ([]Packet, error) {
	if _, err := ATMCeiling(phy, aal, encap, mtu, payload, "udp"); err != nil {
		return nil, err
	}
	var pkts []Packet
	for i, ip := range fragments(mtu, payload) {
		var sdu []Part
		add := func(kind string, n int) {
			if n > 0 {
				sdu = append(sdu, Part{kind, n})
			}
		}
		add("llc", encap.Overhead())
		add("ip", IPv4Header)
		data := ip - IPv4Header
		if i == 0 {
			add("udp", UDPHeader)
			data -= UDPHeader
		}
		add("payload", data)
		n := ip + encap.Overhead()
		var pdu []Part
		seg := cells.PayloadSize
		if aal == atm.AAL34 {
			// CPCS header, the SDU padded to 4 octets, CPCS trailer; the last
			// SAR-PDU's unused octets are padding too.
			seg = cells.AAL34SegSize
			pad := (n+3)&^3 - n
			fill := aal.Cells(n)*seg - (cells.AAL34Overhead + n + pad)
			pdu = append(append([]Part{{"cpcs", cells.AAL34Overhead / 2}}, sdu...), Part{"pad", pad}, Part{"trailer", cells.AAL34Overhead / 2}, Part{"pad", fill})
		} else {
			pdu = append(sdu, Part{"pad", aal.Cells(n)*seg - n - cells.AAL5Trailer}, Part{"trailer", cells.AAL5Trailer})
		}
		pkts = append(pkts, Packet{IP: ip, SDU: n, Cells: cut(phy, aal, pdu, seg)})
	}
	return pkts, nil
}

// cut splits a CPCS-PDU's parts into cells of seg octets each, with each
// cell's header (and AAL3/4's SAR header and trailer) around them.
func cut(phy atm.PHY, aal atm.AAL, pdu []Part, seg int) [][]Part {
	var out [][]Part
	var cell []Part
	room := 0
	open := func() {
		cell = nil
		if phy.CellOctets > cells.Size {
			cell = append(cell, Part{"phy", phy.CellOctets - cells.Size})
		}
		cell = append(cell, Part{"atm", cells.HeaderSize})
		if aal == atm.AAL34 {
			cell = append(cell, Part{"sar", 2})
		}
		room = seg
	}
	shut := func() {
		if aal == atm.AAL34 {
			cell = append(cell, Part{"sar", 2})
		}
		out = append(out, cell)
	}
	open()
	for _, p := range pdu {
		for left := p.Bytes; left > 0; {
			if room == 0 {
				shut()
				open()
			}
			k := min(left, room)
			cell = append(cell, Part{p.Kind, k})
			left -= k
			room -= k
		}
	}
	shut()
	return out
}
