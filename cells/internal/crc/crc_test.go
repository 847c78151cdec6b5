package crc

import (
	"hash/crc32"
	"testing"
)

// Known answers from docs/reference.md §1.1, §2, §3.
func TestCheckValues(t *testing.T) {
	check := []byte("123456789")
	if got := CRC8(check) ^ HECCoset; got != 0xA1 {
		t.Errorf("CRC-8/I-432-1(123456789) = %#x, want 0xa1", got)
	}
	if got := AAL5(check); got != 0xFC891918 {
		t.Errorf("AAL5(123456789) = %#x, want 0xfc891918", got)
	}
	if wrong := crc32.ChecksumIEEE(check); wrong == AAL5(check) || wrong != 0xCBF43926 {
		t.Errorf("hash/crc32 IEEE = %#x: it must differ from AAL5's", wrong)
	}
	if got := CRC10(check); got != 0x199 {
		t.Errorf("CRC10(123456789) = %#x, want 0x199", got)
	}
	for i, want := range map[int]byte{1: 0x07, 2: 0x0E, 0x10: 0x70, 0x20: 0xE0, 0x40: 0xC7, 0x80: 0x89, 0xFF: 0xF3} {
		if crc8Table[i] != want {
			t.Errorf("T[%#x] = %#x, want %#x", i, crc8Table[i], want)
		}
	}
}

func TestAAL5Vector(t *testing.T) {
	pdu := append([]byte{0x00, 0x00, 0x10, 0x0A, 0x00, 0x0B, 0x04, 0x01, 0x80}, make([]byte, 30)...)
	pdu = append(pdu, 0x01, 0x00, 0x00, 0x00, 0x28)
	if got := AAL5(pdu); got != 0x651AD04F {
		t.Fatalf("AAL5(44-octet vector) = %#x, want 0x651ad04f", got)
	}
	whole := append(pdu, 0x65, 0x1A, 0xD0, 0x4F)
	if got := CRC32Update(0xFFFFFFFF, whole); got != AAL5Check {
		t.Fatalf("residue = %#x, want %#x", got, AAL5Check)
	}
}

// The four-octet CRC10SAR equals the reference's bytewise routine (table
// of (i<<2) pushed through 8 steps; acc' = (acc<<8 mod 2^10) ^ T[acc>>2] ^ b)
// on any input, and the CRC-32 slicing equals byte-at-a-time.
func TestSlicedEqualsBytewise(t *testing.T) {
	var t10 [256]uint16
	for i := range 256 {
		r := uint16(i) << 2
		for range 8 {
			r <<= 1
			if r&0x400 != 0 {
				r ^= 0x633
			}
		}
		t10[i] = r
	}
	bytewise := func(b []byte) uint16 {
		var acc uint16
		for _, x := range b {
			acc = (acc<<8)&0x3FF ^ t10[byte(acc>>2)] ^ uint16(x)
		}
		return acc
	}
	crc32Bytewise := func(b []byte) uint32 {
		c := uint32(0xFFFFFFFF)
		for _, x := range b {
			c = c<<8 ^ crc32Table[byte(c>>24)^x]
		}
		return ^c
	}
	b := make([]byte, 100)
	for n := range len(b) {
		for i := range b {
			b[i] = byte(i*131 + n*7)
		}
		if got, want := CRC10SAR(b[:n]), bytewise(b[:n]); got != want {
			t.Fatalf("CRC10SAR over %d octets = %#x, bytewise %#x", n, got, want)
		}
		if got, want := AAL5(b[:n]), crc32Bytewise(b[:n]); got != want {
			t.Fatalf("AAL5 over %d octets = %#x, bytewise %#x", n, got, want)
		}
	}
	if got := CRC10SAR([]byte("123456789")); got != 0x188 {
		t.Errorf("CRC10SAR(123456789) = %#x, want 0x188 (atm.md §4.3's pitfall)", got)
	}
}
