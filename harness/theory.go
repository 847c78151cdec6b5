package harness

import (
	"fmt"
	"math"

	"github.com/atmlab/atmlab/emulator"
	"github.com/atmlab/atmlab/emulator/units"
)

// Header sizes, IPv4 (RFC 791, 768, 793, 7323).
const (
	IPv4Header      = 20
	UDPHeader       = 8
	TCPHeader       = 20
	TCPTimestamps   = 12                                                                                    // the timestamp option as Linux sends it, padded
	ethernetFraming = emulator.EtherHeader + emulator.EtherFCS + emulator.EtherPreamble + emulator.EtherIFG // 38
)

// Ceiling is the most payload a path can carry: the theory every result is
// set beside.
type Ceiling struct {
	Proto      string  `json:"proto"` // udp, tcp (timestamps on, as Linux) or tcp-nots
	Payload    int     `json:"payload_bytes"`
	Frames     int     `json:"frames_per_message"` // IP fragments for UDP, segments for TCP
	WireBytes  int     `json:"wire_bytes"`         // per message, all framing included
	Efficiency float64 `json:"efficiency"`         // payload / wire bytes
	Goodput    float64 `json:"goodput_bps"`
}

// EthernetCeiling is the goodput ceiling of an Ethernet path at rate with
// the given IP MTU for payload-byte messages: UDP datagrams (fragmented
// when larger than the MTU allows) or a TCP stream (payload is then a
// message size; segments carry the MSS). Wire bytes per frame are 802.3's:
// max(frame + FCS, 64) + preamble + gap.
func EthernetCeiling(rate units.BitRate, mtu, payload int, proto string) (Ceiling, error) {
	c := Ceiling{Proto: proto, Payload: payload}
	frame := func(ip int) int {
		return max(emulator.EtherHeader+ip+emulator.EtherFCS, emulator.EtherMinFrame) + emulator.EtherPreamble + emulator.EtherIFG
	}
	switch proto {
	case "udp":
		data := payload + UDPHeader
		perFrag := mtu - IPv4Header
		if data > perFrag {
			perFrag &^= 7 // offsets count 8-byte units: all fragments but the last are multiples of 8
		}
		for left := data; left > 0; left -= perFrag {
			c.Frames++
			c.WireBytes += frame(IPv4Header + min(left, perFrag))
		}
	case "tcp", "tcp-nots":
		// A stream is cut into full MSS segments whatever the message size.
		hdr := IPv4Header + TCPHeader
		if proto == "tcp" {
			hdr += TCPTimestamps
		}
		mss := mtu - hdr
		c.Frames = (payload + mss - 1) / mss
		c.WireBytes = int(math.Round(float64(payload) / float64(mss) * float64(frame(hdr+mss))))
		c.Efficiency = float64(mss) / float64(frame(hdr+mss))
	default:
		return c, fmt.Errorf("proto %q: use udp, tcp or tcp-nots", proto)
	}
	if payload <= 0 || mtu < 68 {
		return c, fmt.Errorf("need a payload ≥ 1 byte and an MTU ≥ 68")
	}
	if c.Efficiency == 0 {
		c.Efficiency = float64(payload) / float64(c.WireBytes)
	}
	c.Goodput = float64(rate) * c.Efficiency
	return c, nil
}
