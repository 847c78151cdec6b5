package theory

import (
	"fmt"

	"github.com/atmlab/atmlab/cells"
	"github.com/atmlab/atmlab/emulator/atm"
	"github.com/atmlab/atmlab/emulator/units"
)

// Path is a medium whose ceilings `atmlab calc` and the sawtooth explorer
// work out: Ethernet at Rate, or Classical IP over ATM on PHY when it is
// set, either with Labels MPLS labels on every packet. Both read their figures from here.
type Path struct {
	Rate   units.BitRate
	PHY    *atm.PHY
	AAL    atm.AAL
	Encap  cells.Encap
	MTU    int
	Labels int
	Proto  string // udp, tcp, tcp-nots or sctp
}

// Ceiling is the goodput ceiling of payload-byte messages on the path. A
// labelled packet must also fit the routers' MTU, the larger of 1500 and
// the path's.
func (p Path) Ceiling(payload int) (Ceiling, error) {
	var c Ceiling
	var err error
	if p.PHY != nil && p.Labels > 0 && p.Encap == cells.VCMux {
		return c, fmt.Errorf("a VC-mux PVC carries IP only (its protocol told by the version nibble): labelled packets need LLC/SNAP, --encap llc")
	}
	if p.PHY != nil {
		c, err = ATMMPLSCeiling(*p.PHY, p.AAL, p.Encap, p.MTU, p.Labels, payload, p.Proto)
	} else {
		c, err = MPLSCeiling(p.Rate, p.MTU, p.Labels, payload, p.Proto)
	}
	if err == nil && p.Labels > 0 {
		// The largest IP packet of a message: a full segment, a datagram or
		// its first fragment, all at most the MTU. Its labels must fit the
		// routers' MTU too (routers refuse what does not: ICMP
		// "fragmentation needed").
		ip := p.MTU
		switch p.Proto {
		case "udp":
			ip = min(payload+IPv4Header+UDPHeader, p.MTU)
		case "sctp":
			ip = SCTPPackets(p.MTU, payload)[0]
		}
		if link := max(1500, p.MTU); ip+4*p.Labels > link {
			return c, fmt.Errorf("payload %d does not fit: a %d-byte IP packet with %d label(s) is %d bytes, over the routers' %d-byte MTU; give --mtu %d (labels ride on top of the hosts' MTU) or a smaller payload",
				payload, ip, p.Labels, ip+4*p.Labels, link, link-4*p.Labels)
		}
	}
	return c, err
}

// Cells is a message's cells on an ATM path (its share of a stream's
// segments for TCP), 0 on Ethernet.
func (p Path) Cells(c Ceiling) float64 {
	if p.PHY == nil {
		return 0
	}
	return c.WireBytes / float64(p.PHY.CellOctets)
}

// MSS is a TCP stream's segment payload on the path.
func (p Path) MSS() int {
	mss := p.MTU - IPv4Header - TCPHeader
	if p.Proto == "tcp" {
		mss -= TCPTimestamps
	}
	return mss
}

// fragments returns the IP packets, in bytes, that carry one UDP datagram
// of payload bytes at the MTU: all fragments but the last carry a multiple
// of 8 bytes of data (fragment offsets count 8-byte units).
func fragments(mtu, payload int) []int {
	data := payload + UDPHeader
	perFrag := mtu - IPv4Header
	if data > perFrag {
		perFrag &^= 7
	}
	var ip []int
	for left := data; left > 0; left -= perFrag {
		ip = append(ip, IPv4Header+min(left, perFrag))
	}
	return ip
}

// SCTPData is the most user data one DATA chunk carries in a packet of at
// most mtu octets: the MTU less IPv4, the common header and the chunk
// header, rounded down to the chunk's 4-octet padding.
func SCTPData(mtu int) int {
	return (mtu - IPv4Header - SCTPCommonHeader - SCTPDataHeader) &^ (SCTPPad - 1)
}

// SCTPPackets returns the IP packets, in bytes, that carry one SCTP user
// message of payload octets at the MTU: one DATA chunk in each, fragments
// of SCTPData(mtu) octets but the last, every chunk padded to 4 octets.
func SCTPPackets(mtu, payload int) []int {
	per := SCTPData(mtu)
	var ip []int
	for left := payload; left > 0; left -= per {
		chunk := SCTPDataHeader + min(left, per)
		ip = append(ip, IPv4Header+SCTPCommonHeader+(chunk+SCTPPad-1)&^(SCTPPad-1))
	}
	return ip
}
