// Package crc holds the three CRCs of ATM, MSB-first as the standards
// define them (hash/crc32 is reflected and gives wrong AAL5 trailers):
// the HEC's CRC-8 (ITU-T I.432), AAL5's CRC-32 (I.363.5) and AAL3/4's
// CRC-10 (I.363.3).
package crc

import "encoding/binary"

// Specification constants.
const (
	HECPoly   = 0x07       // x^8 + x^2 + x + 1
	HECCoset  = 0x55       // added to the remainder (x^6 + x^4 + x^2 + 1)
	AAL5Poly  = 0x04C11DB7 // the Ethernet polynomial, processed MSB-first
	AAL5Check = 0xC704DD7B // residue of a whole PDU under CRC-32/MPEG-2
	CRC10Poly = 0x233      // x^10 + x^9 + x^5 + x^4 + x + 1 without x^10
)

var crc8Table, crc32Table = func() ([256]byte, [256]uint32) {
	var t8 [256]byte
	var t32 [256]uint32
	for i := range 256 {
		s := byte(i)
		for range 8 {
			if s&0x80 != 0 {
				s = s<<1 ^ HECPoly
			} else {
				s <<= 1
			}
		}
		t8[i] = s
		c := uint32(i) << 24
		for range 8 {
			if c&0x80000000 != 0 {
				c = c<<1 ^ AAL5Poly
			} else {
				c <<= 1
			}
		}
		t32[i] = c
	}
	return t8, t32
}()

// CRC8 is the HEC's CRC over b without the coset: init 0, MSB-first.
func CRC8(b []byte) byte {
	var acc byte
	for _, x := range b {
		acc = crc8Table[acc^x]
	}
	return acc
}

// HEC returns the header error control octet for the first four header
// octets: CRC-8 XOR the coset 0x55.
func HEC(h []byte) byte { return CRC8(h[:4]) ^ HECCoset }

// crc32Slices[k][i] is the register after byte i followed by k zero bytes:
// slicing-by-8 folds eight input bytes per step.
var crc32Slices = func() (t [8][256]uint32) {
	t[0] = crc32Table
	for k := 1; k < 8; k++ {
		for i := range 256 {
			p := t[k-1][i]
			t[k][i] = p<<8 ^ crc32Table[p>>24]
		}
	}
	return t
}()

// CRC32Update continues an MSB-first CRC-32 register over b.
func CRC32Update(crc uint32, b []byte) uint32 {
	t := &crc32Slices
	for len(b) >= 8 {
		hi := crc ^ binary.BigEndian.Uint32(b)
		lo := binary.BigEndian.Uint32(b[4:])
		crc = t[7][hi>>24] ^ t[6][byte(hi>>16)] ^ t[5][byte(hi>>8)] ^ t[4][byte(hi)] ^
			t[3][lo>>24] ^ t[2][byte(lo>>16)] ^ t[1][byte(lo>>8)] ^ t[0][byte(lo)]
		b = b[8:]
	}
	for _, x := range b {
		crc = crc<<8 ^ crc32Table[byte(crc>>24)^x]
	}
	return crc
}

// AAL5 is AAL5's CRC-32 (CRC-32/BZIP2): preset all ones, MSB-first,
// complemented.
func AAL5(b []byte) uint32 { return ^CRC32Update(0xFFFFFFFF, b) }

// CRC10 is AAL3/4's CRC-10 over b, bit by bit (init 0, MSB-first, no xor).
func CRC10(b []byte) uint16 {
	var r uint16
	for _, x := range b {
		for bit := 7; bit >= 0; bit-- {
			in := uint16(x>>uint(bit)) & 1
			top := (r >> 9) & 1
			r = (r << 1) & 0x3FF
			if top^in != 0 {
				r ^= CRC10Poly
			}
		}
	}
	return r
}

// polyMod returns v * x^k mod the CRC-10 generator, bit by bit.
func polyMod(v uint64, k int) uint16 {
	v <<= k
	for bit := 63; bit >= 10; bit-- {
		if v&(1<<bit) != 0 {
			v ^= (0x400 | CRC10Poly) << (bit - 10)
		}
	}
	return uint16(v)
}

// crc10Slices fold four octets into the 10-bit remainder per step:
// acc' = acc*x^32 + b0*x^24 + b1*x^16 + b2*x^8 + b3 (mod G).
var crc10Acc, crc10Slices = func() (acc [1024]uint16, t [3][256]uint16) {
	for i := range 1024 {
		acc[i] = polyMod(uint64(i), 32)
	}
	for i := range 256 {
		t[0][i], t[1][i], t[2][i] = polyMod(uint64(i), 24), polyMod(uint64(i), 16), polyMod(uint64(i), 8)
	}
	return acc, t
}()

// CRC10SAR is the remainder of b, read as a polynomial, modulo CRC-10's
// generator (Wireshark's bytewise form, four octets a step). Over an AAL3/4
// SAR-PDU or OAM cell payload of 48 octets whose CRC field is zero it
// returns the CRC to put there; over a received 48 octets, 0 if intact. It
// is not the catalogue algorithm on arbitrary input (CRC10 is).
func CRC10SAR(b []byte) uint16 {
	var acc uint16
	t := &crc10Slices
	for len(b) >= 4 {
		acc = crc10Acc[acc&0x3FF] ^ t[0][b[0]] ^ t[1][b[1]] ^ t[2][b[2]] ^ uint16(b[3])
		b = b[4:]
	}
	for _, x := range b {
		acc = polyMod(uint64(acc), 8) ^ uint16(x)
	}
	return acc
}
