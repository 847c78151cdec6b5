// Package cells is ATM at the byte: 53-byte cells with their UNI or NNI
// header and HEC (ITU-T I.361, I.432), and AAL5 segmentation and
// reassembly (I.363.5). Standard library only; decoding never allocates.
// Facts and test vectors: docs/reference.md §1-§4.
package cells

import (
	"encoding/binary"
	"errors"

	"github.com/atmlab/atmlab/cells/internal/crc"
)

// Specification constants (ITU-T I.361, I.363.5).
const (
	Size        = 53 // octets in a cell
	HeaderSize  = 5
	PayloadSize = 48
	AAL5Trailer = 8     // CPCS-UU, CPI, Length (2), CRC-32 (4)
	MaxAAL5SDU  = 65535 // the Length field's range
)

// Sentinel errors callers branch on.
var (
	ErrShort   = errors.New("cells: input too short")
	ErrHEC     = errors.New("cells: header error (HEC) not correctable")
	ErrCRC     = errors.New("cells: AAL5 CRC-32 mismatch")
	ErrLength  = errors.New("cells: AAL5 length field inconsistent with the PDU")
	ErrTooLong = errors.New("cells: PDU exceeds the maximum SDU")
	ErrTimeout = errors.New("cells: reassembly timed out")
)

// Cell is one ATM cell: a 5-octet header and 48 octets of payload.
type Cell [Size]byte

// Format selects the header layout: UNI has a 4-bit GFC and an 8-bit VPI,
// NNI a 12-bit VPI.
type Format int

// Header formats.
const (
	UNI Format = iota
	NNI
)

// Header is a cell header's fields.
type Header struct {
	GFC uint8  // UNI only, 0..15
	VPI uint16 // 0..255 (UNI), 0..4095 (NNI)
	VCI uint16
	PTI uint8 // 0..7; bit 0 marks AAL5's last cell
	CLP bool
}

// ParseHeader reads a header from b (at least 4 octets; the HEC is not
// checked here, see CheckHEC).
func ParseHeader(b []byte, f Format) (Header, error) {
	if len(b) < 4 {
		return Header{}, ErrShort
	}
	w := binary.BigEndian.Uint32(b)
	h := Header{VCI: uint16(w >> 4), PTI: uint8(w>>1) & 7, CLP: w&1 != 0}
	if f == UNI {
		h.GFC, h.VPI = uint8(w>>28), uint16(w>>20)&0xFF
	} else {
		h.VPI = uint16(w >> 20)
	}
	return h, nil
}

// Put writes h into the first five octets of b, HEC included.
func (h Header) Put(b []byte, f Format) {
	w := uint32(h.VCI)<<4 | uint32(h.PTI&7)<<1
	if h.CLP {
		w |= 1
	}
	if f == UNI {
		w |= uint32(h.GFC&0xF)<<28 | uint32(h.VPI&0xFF)<<20
	} else {
		w |= uint32(h.VPI&0xFFF) << 20
	}
	binary.BigEndian.PutUint32(b, w)
	b[4] = crc.HEC(b)
}

// Header returns the cell's header fields.
func (c *Cell) Header(f Format) Header { h, _ := ParseHeader(c[:], f); return h }

// SetHeader writes h and its HEC into the cell.
func (c *Cell) SetHeader(h Header, f Format) { h.Put(c[:], f) }

// Payload returns the cell's 48 payload octets.
func (c *Cell) Payload() []byte { return c[HeaderSize:] }

// LastOfPDU reports whether the cell ends an AAL5 PDU (PTI bit 0).
func (c *Cell) LastOfPDU() bool { return c[3]&0x02 != 0 }

// syndromes maps each single-bit error's syndrome to its bit (0..31 in
// octets 1-4, 32..39 in the HEC octet); the CRC is linear, so any header
// gives the same map.
var syndromes = func() map[byte]int {
	m := map[byte]int{}
	var h [5]byte
	h[4] = crc.HEC(h[:])
	for bit := range 40 {
		e := h
		e[bit/8] ^= 0x80 >> (bit % 8)
		m[crc.CRC8(e[:4])^e[4]^crc.HECCoset] = bit
	}
	return m
}()

// CheckHEC verifies a header's HEC in place, as I.432's correction mode
// does: a single-bit error is corrected (corrected is true), anything else
// non-zero is ErrHEC.
func CheckHEC(b []byte) (corrected bool, err error) {
	if len(b) < HeaderSize {
		return false, ErrShort
	}
	s := crc.CRC8(b[:4]) ^ b[4] ^ crc.HECCoset
	if s == 0 {
		return false, nil
	}
	bit, ok := syndromes[s]
	if !ok {
		return false, ErrHEC
	}
	b[bit/8] ^= 0x80 >> (bit % 8)
	return true, nil
}
