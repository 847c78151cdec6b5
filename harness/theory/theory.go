// Package theory is what a path can carry: the goodput ceilings of
// Ethernet, MPLS and ATM links (Path, Layout, Sawtooth), and a lab path's
// ceiling (PathCeiling). `atmlab calc`, the explorer, lab runs and the
// report use it; it measures nothing.
package theory

import (
	"fmt"

	"github.com/atmlab/atmlab/cells"
	"github.com/atmlab/atmlab/emulator"
	"github.com/atmlab/atmlab/emulator/atm"
	"github.com/atmlab/atmlab/emulator/units"
	"github.com/atmlab/atmlab/harness/perf"
)

// Header sizes, IPv4 (RFC 791, 768, 793, 7323).
const (
	IPv4Header    = 20
	UDPHeader     = 8
	TCPHeader     = 20
	TCPTimestamps = 12 // the timestamp option as Linux sends it, padded
)

// SCTP's framing (RFC 4960 §3): every packet has the common header, every
// DATA chunk its chunk header, and a chunk is padded to 4 octets.
const (
	SCTPCommonHeader = 12
	SCTPDataHeader   = 16
	SCTPPad          = 4
)

// Ceiling is the most payload a path can carry: the theory every result is
// set beside.
type Ceiling struct {
	Proto      string  `json:"proto"` // udp, tcp (timestamps on, as Linux), tcp-nots or sctp
	Payload    int     `json:"payload_bytes"`
	Frames     float64 `json:"frames_per_message"` // IP fragments for UDP; for a TCP stream the message's share of full segments
	WireBytes  float64 `json:"wire_bytes"`         // per message (its share, for TCP), all framing included
	Efficiency float64 `json:"efficiency"`         // payload / wire bytes
	Goodput    float64 `json:"goodput_bps"`
}

// EthernetCeiling is the goodput ceiling of an Ethernet path at rate with
// the given IP MTU for payload-byte messages: UDP datagrams (fragmented
// when larger than the MTU allows) or a TCP stream (payload is then a
// message size; segments carry the MSS). Wire bytes per frame are 802.3's
// (emulator.EtherWire): max(frame + FCS, 64) + preamble + gap.
func EthernetCeiling(rate units.BitRate, mtu, payload int, proto string) (Ceiling, error) {
	return MPLSCeiling(rate, mtu, 0, payload, proto)
}

// MPLSCeiling is EthernetCeiling with labels MPLS label stack entries, 4
// bytes each, between the Ethernet header and every IP packet (RFC 3032).
// The IP MTU is as given: a label rides on top of it, as on core links
// configured for it (frames of up to 1522 bytes at MTU 1500).
func MPLSCeiling(rate units.BitRate, mtu, labels, payload int, proto string) (Ceiling, error) {
	return ceiling(rate, mtu, payload, proto, func(ip int) int {
		return emulator.EtherWire(emulator.EtherHeader + emulator.EtherTag*labels + ip)
	})
}

// ATMCeiling is the goodput ceiling of a Classical IP over ATM path on phy:
// each IP packet is encapsulated, takes whole cells of its AAL, and each
// cell a slot of the PHY (atm.md §7; atm.Billing). Wire bytes are octet
// times on the line: 53 per cell, 54 on ATM25.
func ATMCeiling(phy atm.PHY, aal atm.AAL, encap cells.Encap, mtu, payload int, proto string) (Ceiling, error) {
	return ceiling(phy.LineRate, mtu, payload, proto, func(ip int) int {
		return atm.Billing{PHY: phy, AAL: aal, Encap: encap}.LineOctets(ip)
	})
}

// ATMMPLSCeiling is ATMCeiling with labels MPLS label stack entries, 4
// bytes each, in front of every IP packet inside its encapsulation: MPLS
// over AAL5 PVCs, an LLC/SNAP routed PDU of EtherType 0x8847 (RFC 2684).
// As on Ethernet the IP MTU is as given and the labels ride on top.
func ATMMPLSCeiling(phy atm.PHY, aal atm.AAL, encap cells.Encap, mtu, labels, payload int, proto string) (Ceiling, error) {
	return ceiling(phy.LineRate, mtu, payload, proto, func(ip int) int {
		return atm.Billing{PHY: phy, AAL: aal, Encap: encap}.LineOctets(ip + emulator.EtherTag*labels)
	})
}

// ceiling is the goodput of payload-byte messages on a medium at rate
// whose framing turns an IP packet of n bytes into wire(n) bytes.
func ceiling(rate units.BitRate, mtu, payload int, proto string, wire func(ip int) int) (Ceiling, error) {
	c := Ceiling{Proto: proto, Payload: payload}
	if payload <= 0 || mtu < 68 || mtu > 65535 {
		return c, fmt.Errorf("need a payload ≥ 1 byte and an MTU from 68 to 65535")
	}
	switch proto {
	case "udp":
		if payload > perf.MaxUDPPayload {
			return c, fmt.Errorf("a UDP payload of %d bytes does not fit: an IPv4 datagram carries at most %d", payload, perf.MaxUDPPayload)
		}
		for _, ip := range fragments(mtu, payload) {
			c.Frames++
			c.WireBytes += float64(wire(ip))
		}
		c.Efficiency = float64(payload) / c.WireBytes
	case "tcp", "tcp-nots":
		// A stream is cut into full MSS segments whatever the message size.
		hdr := IPv4Header + TCPHeader
		if proto == "tcp" {
			hdr += TCPTimestamps
		}
		mss := mtu - hdr
		c.Frames = float64(payload) / float64(mss)
		c.WireBytes = c.Frames * float64(wire(hdr+mss))
		c.Efficiency = float64(mss) / float64(wire(hdr+mss))
	case "sctp":
		// Each message is one user message of its own: its DATA chunks carry
		// at most SCTPData(mtu) octets each, one chunk to a packet (no
		// bundling of messages, as a saturated sender fills its packets).
		for _, ip := range SCTPPackets(mtu, payload) {
			c.Frames++
			c.WireBytes += float64(wire(ip))
		}
		c.Efficiency = float64(payload) / c.WireBytes
	default:
		return c, fmt.Errorf("proto %q: use udp, tcp, tcp-nots or sctp", proto)
	}
	c.Goodput = float64(rate) * c.Efficiency
	return c, nil
}

// Step is one tooth of the sawtooth: Size is the largest payload that fits
// in Cells cells; one byte more takes a cell more and loses Drop of the
// goodput.
type Step struct {
	Size    int     `json:"size_bytes"`
	Cells   int     `json:"cells"`
	Goodput float64 `json:"goodput_bps"`
	Next    float64 `json:"next_goodput_bps"` // at Size+1
	Drop    float64 `json:"drop"`             // 1 - Next/Goodput
}

// Sawtooth lists the steps of UDP's ATMCeiling between payload sizes from
// and to. (A TCP stream has none by message size: its segments are full.)
func Sawtooth(phy atm.PHY, aal atm.AAL, encap cells.Encap, mtu, from, to int) ([]Step, error) {
	const proto = "udp"
	var steps []Step
	prev, err := ATMCeiling(phy, aal, encap, mtu, from, proto)
	if err != nil {
		return nil, err
	}
	for n := from + 1; n <= to+1; n++ {
		c, err := ATMCeiling(phy, aal, encap, mtu, n, proto)
		if err != nil {
			return nil, err
		}
		if c.WireBytes > prev.WireBytes && c.Frames == prev.Frames && n-1 >= from {
			steps = append(steps, Step{Size: n - 1, Cells: int(prev.WireBytes) / phy.CellOctets, Goodput: prev.Goodput, Next: c.Goodput, Drop: 1 - c.Goodput/prev.Goodput})
		}
		prev = c
	}
	return steps, nil
}
