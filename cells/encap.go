package cells

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
)

// Encap is an RFC 2684 multiplexing method for routed protocols.
type Encap int

// Encapsulations (RFC 2684 §5, §6).
const (
	// LLC is LLC/SNAP: AA AA 03, OUI 00 00 00, then the EtherType. One VC
	// can carry several protocols; Classical IP over ATM (RFC 2225) uses it.
	LLC Encap = iota
	// VCMux carries the packet bare: the VC itself says which protocol.
	VCMux
)

// LLCHeader is the length of the LLC/SNAP prefix of a routed PDU.
const LLCHeader = 8

// EtherTypes of the routed protocols: IPv4, IPv6 and MPLS unicast (RFC
// 3032), which LLC/SNAP carries as any other routed PDU.
const (
	EtherTypeIPv4 = 0x0800
	EtherTypeIPv6 = 0x86DD
	EtherTypeMPLS = 0x8847
)

var llcRouted = []byte{0xAA, 0xAA, 0x03, 0x00, 0x00, 0x00}

// ErrEncap marks an AAL SDU whose RFC 2684 prefix is not a routed one.
var ErrEncap = errors.New("cells: not an RFC 2684 routed PDU")

// Overhead returns the octets the encapsulation adds to a packet.
func (e Encap) Overhead() int {
	if e == LLC {
		return LLCHeader
	}
	return 0
}

func (e Encap) String() string {
	if e == LLC {
		return "llc"
	}
	return "vcmux"
}

// ParseEncap reads "llc" or "vcmux".
func ParseEncap(s string) (Encap, error) {
	switch s {
	case "llc":
		return LLC, nil
	case "vcmux":
		return VCMux, nil
	}
	return 0, fmt.Errorf("unknown encapsulation %q: use llc or vcmux", s)
}

// Encapsulate appends the AAL SDU carrying a packet of the given EtherType
// to dst.
func (e Encap) Encapsulate(dst []byte, etherType uint16, packet []byte) []byte {
	if e == LLC {
		dst = append(dst, llcRouted...)
		dst = binary.BigEndian.AppendUint16(dst, etherType)
	}
	return append(dst, packet...)
}

// Decapsulate returns the packet an AAL SDU carries and its EtherType. A
// VC-mux PDU's protocol is told by its IP version nibble, as Wireshark does.
func (e Encap) Decapsulate(sdu []byte) (etherType uint16, packet []byte, err error) {
	if e == LLC {
		if len(sdu) < LLCHeader || !bytes.Equal(sdu[:6], llcRouted) {
			return 0, nil, ErrEncap
		}
		return binary.BigEndian.Uint16(sdu[6:]), sdu[LLCHeader:], nil
	}
	if len(sdu) == 0 {
		return 0, nil, ErrEncap
	}
	switch sdu[0] >> 4 {
	case 4:
		return EtherTypeIPv4, sdu, nil
	case 6:
		return EtherTypeIPv6, sdu, nil
	}
	return 0, nil, ErrEncap
}
