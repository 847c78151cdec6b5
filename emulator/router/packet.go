package router

import (
	"encoding/binary"
	"net/netip"
)

// EtherTypes a router handles.
const (
	etherIPv4 = 0x0800
	etherMPLS = 0x8847 // MPLS unicast (RFC 3032)
)

// Reserved labels (RFC 3032).
const (
	ExplicitNull = 0 // IPv4 explicit null: the egress pops it
	ImplicitNull = 3 // advertised to ask for penultimate-hop popping; never sent
	FirstLabel   = 16
)

// Entry is one MPLS label stack entry (RFC 3032 §2.1).
type Entry struct {
	Label  uint32 // 20 bits
	TC     uint8  // 3 bits
	Bottom bool   // S: the last entry of the stack
	TTL    uint8
}

// Word encodes e as its 32-bit big-endian word.
func (e Entry) Word() uint32 {
	w := e.Label<<12 | uint32(e.TC&7)<<9 | uint32(e.TTL)
	if e.Bottom {
		w |= 1 << 8
	}
	return w
}

// ParseEntry decodes a label stack entry; b must hold 4 octets.
func ParseEntry(b []byte) Entry {
	w := binary.BigEndian.Uint32(b)
	return Entry{Label: w >> 12, TC: uint8(w>>9) & 7, Bottom: w&0x100 != 0, TTL: uint8(w)}
}

// IPv4 header fields (RFC 791).
func ipHeaderLen(p []byte) int     { return int(p[0]&0x0F) * 4 }
func ipSrc(p []byte) netip.Addr    { return netip.AddrFrom4([4]byte(p[12:16])) }
func ipDst(p []byte) netip.Addr    { return netip.AddrFrom4([4]byte(p[16:20])) }
func ipDontFragment(p []byte) bool { return p[6]&0x40 != 0 }
func validIPv4(p []byte) bool {
	return len(p) >= 20 && p[0]>>4 == 4 && ipHeaderLen(p) >= 20 && len(p) >= ipHeaderLen(p)
}
func ipTotalLen(p []byte) int        { return int(binary.BigEndian.Uint16(p[2:])) }
func putAddr(b []byte, a netip.Addr) { copy(b, a.AsSlice()) }

// setTTL writes a new TTL and updates the header checksum incrementally
// (RFC 1624: HC' = ~(~HC + ~m + m')).
func setTTL(p []byte, ttl uint8) {
	old := binary.BigEndian.Uint16(p[8:])
	p[8] = ttl
	m := binary.BigEndian.Uint16(p[8:])
	sum := uint32(^binary.BigEndian.Uint16(p[10:])) + uint32(^old) + uint32(m)
	sum = sum&0xFFFF + sum>>16
	sum = sum&0xFFFF + sum>>16
	binary.BigEndian.PutUint16(p[10:], ^uint16(sum))
}

// checksum is the Internet checksum of b (RFC 1071).
func checksum(b []byte) uint16 {
	var sum uint32
	for ; len(b) >= 2; b = b[2:] {
		sum += uint32(binary.BigEndian.Uint16(b))
	}
	if len(b) == 1 {
		sum += uint32(b[0]) << 8
	}
	for sum > 0xFFFF {
		sum = sum&0xFFFF + sum>>16
	}
	return ^uint16(sum)
}

// newIPv4 returns a packet from src to dst with protocol proto, TTL 64 and
// the payload, its header checksum set.
func newIPv4(src, dst netip.Addr, proto byte, payload []byte) []byte {
	p := make([]byte, 20+len(payload))
	p[0], p[8], p[9] = 0x45, 64, proto
	binary.BigEndian.PutUint16(p[2:], uint16(len(p)))
	putAddr(p[12:], src)
	putAddr(p[16:], dst)
	binary.BigEndian.PutUint16(p[10:], checksum(p[:20]))
	copy(p[20:], payload)
	return p
}

// ICMP types and codes (RFC 792, 1191).
const (
	icmpEchoReply      = 0
	icmpUnreachable    = 3
	icmpEcho           = 8
	icmpTimeExceeded   = 11
	codeNetUnreachable = 0
	codeFragNeeded     = 4
)

// icmpError returns the ICMP message about orig: its header and first 8
// octets of data, as RFC 792 asks. mtu is the next-hop MTU of a
// fragmentation-needed message (RFC 1191), else 0.
func icmpError(typ, code byte, mtu int, orig []byte) []byte {
	quote := orig[:min(len(orig), ipHeaderLen(orig)+8)]
	m := make([]byte, 8+len(quote))
	m[0], m[1] = typ, code
	binary.BigEndian.PutUint16(m[6:], uint16(mtu))
	copy(m[8:], quote)
	binary.BigEndian.PutUint16(m[2:], checksum(m))
	return m
}

// isICMPError reports whether p carries an ICMP error, about which no
// error may be sent (RFC 1122 §3.2.2).
func isICMPError(p []byte) bool {
	h := ipHeaderLen(p)
	return p[9] == 1 && len(p) > h && p[h] != icmpEcho && p[h] != icmpEchoReply
}
