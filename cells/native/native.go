// Package native is the framing of atmlab's native AAL API between a host
// and its ATM adapter: an AAL SDU for a VC, with no IP and no LLC/SNAP
// (RFC 2684's null encapsulation, VC multiplexing), carried across the
// host's Ethernet-shaped interface (its TAP in real time, its netstack NIC
// in virtual time) in a frame of the local experimental EtherType 0x88B5
// (IEEE 802 "Local Experimental EtherType 1"):
//
//	Ethernet header (14)   dst, src, EtherType 0x88B5
//	octet 0                version, 1
//	octet 1                reserved, 0
//	octets 2-3             VPI, big-endian (0-4095)
//	octets 4-5             VCI, big-endian
//	octets 6-7             SDU length, big-endian (0-65535)
//	octets 8..             the SDU; anything past its length is padding
//
// The host sends such a frame to its adapter, which segments the SDU alone
// into cells on that VC (AAL5 or AAL3/4, the link's); a PDU reassembled on a
// native VC reaches the host the same way, from the VC's MAC address. The
// length field is there because Ethernet pads a frame to 60 octets: an SDU
// shorter than 38 octets would otherwise come back longer. It imports the
// standard library only: the test tool in the hosts and the emulator's
// adapter both use it.
package native

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// Specification constants (IEEE Std 802, local experimental EtherTypes).
const (
	// EtherType is the EtherType of a native AAL frame.
	EtherType = 0x88B5
)

// Implementation constants.
const (
	// Version is the framing's version, the first octet.
	Version = 1
	// HeaderLen is the header before the SDU.
	HeaderLen = 8
	// MaxVPI is the largest VPI the header takes (an NNI's 12 bits; a UNI
	// link takes 0-255).
	MaxVPI = 4095
	// MaxSDU is the largest SDU the header's length can say; AAL5 and
	// AAL3/4 carry at most this much too.
	MaxSDU = 65535
)

// VCMAC is the MAC address of VC vpi/vci at a host's adapter: locally
// administered, 02:a7, then the VPI and VCI. Classical IP's ATMARP answers
// with it; a native frame goes to it and comes from it.
func VCMAC(vpi, vci uint16) [6]byte {
	return [6]byte{0x02, 0xA7, byte(vpi >> 8), byte(vpi), byte(vci >> 8), byte(vci)}
}

// Errors Parse returns, for callers to count by cause.
var (
	ErrShort   = errors.New("native: frame shorter than its header")
	ErrVersion = errors.New("native: unknown framing version")
	ErrLength  = errors.New("native: SDU length past the frame's end")
	ErrVPI     = errors.New("native: VPI above 4095")
)

// Header is a native frame's header.
type Header struct {
	VPI, VCI uint16
	Len      int // the SDU's length
}

// Append appends the header and SDU of a native frame for VC vpi/vci to
// dst (the Ethernet header is the caller's). It returns an error for a VPI
// above MaxVPI or an SDU above MaxSDU, and appends nothing then.
func Append(dst []byte, vpi, vci uint16, sdu []byte) ([]byte, error) {
	if vpi > MaxVPI {
		return dst, fmt.Errorf("native: VPI %d above %d", vpi, MaxVPI)
	}
	if len(sdu) > MaxSDU {
		return dst, fmt.Errorf("native: SDU of %d octets above %d", len(sdu), MaxSDU)
	}
	dst = append(dst, Version, 0)
	dst = binary.BigEndian.AppendUint16(dst, vpi)
	dst = binary.BigEndian.AppendUint16(dst, vci)
	dst = binary.BigEndian.AppendUint16(dst, uint16(len(sdu)))
	return append(dst, sdu...), nil
}

// Parse reads a native frame's payload (after the Ethernet header): its
// header and the SDU, which aliases p. Padding past the SDU is ignored; a
// reserved octet other than 0 is refused with ErrVersion, as it would mean
// a later framing.
func Parse(p []byte) (Header, []byte, error) {
	if len(p) < HeaderLen {
		return Header{}, nil, ErrShort
	}
	if p[0] != Version || p[1] != 0 {
		return Header{}, nil, ErrVersion
	}
	h := Header{VPI: binary.BigEndian.Uint16(p[2:]), VCI: binary.BigEndian.Uint16(p[4:]), Len: int(binary.BigEndian.Uint16(p[6:]))}
	if h.VPI > MaxVPI {
		return Header{}, nil, ErrVPI
	}
	if HeaderLen+h.Len > len(p) {
		return Header{}, nil, ErrLength
	}
	return h, p[HeaderLen : HeaderLen+h.Len], nil
}
