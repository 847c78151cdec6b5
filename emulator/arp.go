package emulator

import (
	"encoding/binary"
	"net/netip"
)

// ARP (RFC 826) for IPv4 over Ethernet, which the emulated devices that
// stand in for a host's neighbours (an ATM adapter's ATMARP, a router)
// speak themselves.
const (
	EtherTypeARP = 0x0806
	ARPRequest   = 1
	ARPReply     = 2
)

// ARP is an IPv4-over-Ethernet ARP packet's fields.
type ARP struct {
	Op       uint16
	SHA, THA [6]byte
	SPA, TPA netip.Addr
}

// ParseARP decodes an ARP packet (the Ethernet payload); ok is false for
// anything but IPv4 over Ethernet.
func ParseARP(p []byte) (a ARP, ok bool) {
	if len(p) < 28 || binary.BigEndian.Uint16(p) != 1 || binary.BigEndian.Uint16(p[2:]) != 0x0800 || p[4] != 6 || p[5] != 4 {
		return a, false
	}
	return ARP{Op: binary.BigEndian.Uint16(p[6:]), SHA: [6]byte(p[8:14]), SPA: netip.AddrFrom4([4]byte(p[14:18])),
		THA: [6]byte(p[18:24]), TPA: netip.AddrFrom4([4]byte(p[24:28]))}, true
}

// Frame returns a as an Ethernet frame: a request to the broadcast
// address, a reply to its target.
func (a ARP) Frame() []byte {
	f := make([]byte, EtherHeader+28)
	dst := a.THA
	if a.Op == ARPRequest {
		dst = [6]byte{0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF}
	}
	copy(f, dst[:])
	copy(f[6:], a.SHA[:])
	binary.BigEndian.PutUint16(f[12:], EtherTypeARP)
	p := f[EtherHeader:]
	copy(p, []byte{0, 1, 8, 0, 6, 4})
	binary.BigEndian.PutUint16(p[6:], a.Op)
	copy(p[8:], a.SHA[:])
	copy(p[14:], a.SPA.AsSlice())
	if a.Op == ARPReply {
		copy(p[18:], a.THA[:])
	}
	copy(p[24:], a.TPA.AsSlice())
	return f
}

// Reply returns the answer to request a from the station with mac.
func (a ARP) Reply(mac [6]byte) ARP {
	return ARP{Op: ARPReply, SHA: mac, SPA: a.TPA, THA: a.SHA, TPA: a.SPA}
}
