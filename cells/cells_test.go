package cells

import (
	"bytes"
	"encoding/hex"
	"errors"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/atmlab/atmlab/cells/internal/crc"
)

func unhex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// HEC vectors of docs/reference.md §1.1.
func TestHECVectors(t *testing.T) {
	for _, tc := range []struct {
		hdr string
		hec byte
	}{
		{"00000000", 0x55}, {"00000001", 0x52}, {"00000050", 0xE2}, {"00000100", 0x40},
		{"00000200", 0x7F}, {"00000202", 0x71}, {"00100640", 0x4E}, {"00100642", 0x40},
		{"00800232", 0xEA}, {"00000641", 0xEB}, {"00000030", 0xC5}, {"0000020A", 0x49},
		{"FFFFFFFF", 0x8B}, {"FFFFFFF0", 0xA6}, {"10000202", 0x16}, {"01234567", 0x95}, {"BAC6F4CA", 0x99},
	} {
		if got := crc.HEC(unhex(t, tc.hdr)); got != tc.hec {
			t.Errorf("HEC(%s) = %#x, want %#x", tc.hdr, got, tc.hec)
		}
	}
}

func TestHeaderLayout(t *testing.T) {
	var c Cell
	c.SetHeader(Header{VPI: 1, VCI: 100, PTI: 1}, UNI)
	if !bytes.Equal(c[:5], unhex(t, "0010064240")) {
		t.Fatalf("UNI 1/100 PTI 1 = % x, want 00 10 06 42 40", c[:5])
	}
	if h := c.Header(UNI); h != (Header{VPI: 1, VCI: 100, PTI: 1}) || !c.LastOfPDU() {
		t.Fatalf("Header() = %+v", h)
	}
	c.SetHeader(Header{VPI: 256, VCI: 32, PTI: 1}, NNI)
	if !bytes.Equal(c[:5], unhex(t, "1000020216")) || c.Header(NNI).VPI != 256 {
		t.Fatalf("NNI 256/32 = % x", c[:5])
	}
	if _, err := ParseHeader([]byte{1, 2, 3}, UNI); !errors.Is(err, ErrShort) {
		t.Fatalf("short header: %v", err)
	}
}

// Every single-bit error in a header is corrected; the reference's negative
// vector (bit 0x08 of octet 3 flipped) has syndrome 0xA8; two-bit errors
// are detected (those that alias a single-bit syndrome are "corrected" to
// another header, as I.432 accepts).
func TestHECCorrection(t *testing.T) {
	good := unhex(t, "0010064240")
	bad := bytes.Clone(good)
	bad[2] ^= 0x08
	if s := crc.CRC8(bad[:4]) ^ bad[4] ^ crc.HECCoset; s != 0xA8 {
		t.Fatalf("syndrome = %#x, want 0xa8", s)
	}
	for bit := range 40 {
		b := bytes.Clone(good)
		b[bit/8] ^= 0x80 >> (bit % 8)
		if fixed, err := CheckHEC(b); !fixed || err != nil || !bytes.Equal(b, good) {
			t.Fatalf("bit %d: corrected=%v err=%v % x", bit, fixed, err, b)
		}
	}
	detected := 0
	for i := range 40 {
		for j := i + 1; j < 40; j++ {
			b := bytes.Clone(good)
			b[i/8] ^= 0x80 >> (i % 8)
			b[j/8] ^= 0x80 >> (j % 8)
			if _, err := CheckHEC(b); errors.Is(err, ErrHEC) {
				detected++
			} else if bytes.Equal(b, good) {
				t.Fatalf("bits %d,%d: a double error was 'corrected' back to the original", i, j)
			}
		}
	}
	if detected < 600 { // 780 double errors; most give syndromes no single bit has
		t.Errorf("only %d of 780 double-bit errors detected", detected)
	}
	if fixed, err := CheckHEC(good); fixed || err != nil {
		t.Fatalf("a good header: %v %v", fixed, err)
	}
}

// Full cells and trailers of atm.md §3.4.
func TestAAL5Vectors(t *testing.T) {
	for _, tc := range []struct {
		name    string
		sdu     []byte
		h       Header
		cells   int
		trailer string
		first   string // the first cell, whole, when given
	}{
		{"123456789", []byte("123456789"), Header{VCI: 32}, 1, "00000009fbb97124",
			"0000020271" + "313233343536373839" + string(bytes.Repeat([]byte("00"), 31)) + "00000009fbb97124"},
		{"40 zeros", make([]byte, 40), Header{VCI: 32}, 1, "00000028864d7f99", ""},
		{"41 zeros", make([]byte, 41), Header{VCI: 32}, 2, "000000295d8eebac", ""},
		{"LLC/SNAP IPv4", unhex(t, "aaaa0300000008004500001400004000400126e70a0000010a000002"), Header{VPI: 1, VCI: 100}, 1, "0000001c70fd15e6", ""},
	} {
		cs, err := SegmentAAL5(nil, tc.sdu, 0, tc.h, UNI)
		if err != nil || len(cs) != tc.cells || AAL5Cells(len(tc.sdu)) != tc.cells {
			t.Fatalf("%s: %d cells (%v), want %d", tc.name, len(cs), err, tc.cells)
		}
		last := cs[len(cs)-1]
		if got := hex.EncodeToString(last[Size-8:]); got != tc.trailer {
			t.Errorf("%s: trailer %s, want %s", tc.name, got, tc.trailer)
		}
		if tc.first != "" && hex.EncodeToString(cs[0][:]) != tc.first {
			t.Errorf("%s: cell % x", tc.name, cs[0][:])
		}
		for i, c := range cs {
			if c.LastOfPDU() != (i == len(cs)-1) {
				t.Errorf("%s: cell %d end-of-PDU bit wrong", tc.name, i)
			}
		}
	}
}

func TestSawtoothBoundaries(t *testing.T) {
	for k := range 200 {
		if AAL5Cells(48*k+40) != k+1 || AAL5Cells(48*k+41) != k+2 {
			t.Fatalf("k=%d: %d and %d cells", k, AAL5Cells(48*k+40), AAL5Cells(48*k+41))
		}
	}
}

// Reassemble(Segment(sdu)) == sdu; a lost cell, a corrupted one, an
// oversized PDU and a stalled one each fail with their sentinel.
func TestReassembly(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var r Reassembler
	for _, n := range []int{1, 40, 41, 1500, 9180, 65535} {
		sdu := make([]byte, n)
		for i := range sdu {
			sdu[i] = byte(rng.IntN(256))
		}
		cs, _ := SegmentAAL5(nil, sdu, 7, Header{VCI: 100}, UNI)
		for i := range cs {
			got, done, err := r.Push(&cs[i], 0)
			if i < len(cs)-1 && (done || err != nil) {
				t.Fatalf("n=%d cell %d: done=%v err=%v", n, i, done, err)
			}
			if i == len(cs)-1 && (!done || err != nil || !bytes.Equal(got, sdu)) {
				t.Fatalf("n=%d: reassembled %d octets, err %v", n, len(got), err)
			}
		}
	}
	cs, _ := SegmentAAL5(nil, make([]byte, 1000), 0, Header{VCI: 100}, UNI)
	push := func(cs []Cell, at time.Duration) (err error) {
		for i := range cs {
			_, _, err = r.Push(&cs[i], at)
		}
		return err
	}
	lost := append(append([]Cell{}, cs[:5]...), cs[6:]...)
	if err := push(lost, 0); !errors.Is(err, ErrCRC) {
		t.Errorf("a lost cell: %v, want ErrCRC", err)
	}
	bad := append([]Cell{}, cs...)
	bad[3][20] ^= 1
	if err := push(bad, 0); !errors.Is(err, ErrCRC) {
		t.Errorf("a corrupted cell: %v, want ErrCRC", err)
	}
	small := Reassembler{MaxSDU: 500}
	for i := range cs {
		_, _, err := small.Push(&cs[i], 0)
		if i == len(cs)-1 && !errors.Is(err, ErrTooLong) {
			t.Errorf("a 1000-octet PDU with MaxSDU 500: %v", err)
		}
	}
	timed := Reassembler{Timeout: time.Millisecond}
	timed.Push(&cs[0], 0)
	_, _, err := timed.Push(&cs[1], time.Millisecond) // at the timeout: still fine
	if err != nil {
		t.Errorf("at the timeout: %v", err)
	}
	if _, _, err := timed.Push(&cs[2], time.Millisecond+1); !errors.Is(err, ErrTimeout) {
		t.Errorf("past the timeout: %v, want ErrTimeout", err)
	}
	if _, err := SegmentAAL5(nil, make([]byte, 65536), 0, Header{}, UNI); !errors.Is(err, ErrLength) {
		t.Errorf("65536-octet SDU: %v", err)
	}
}

func FuzzHeader(f *testing.F) {
	f.Add([]byte{0x00, 0x10, 0x06, 0x42, 0x40}, false)
	f.Add([]byte{0xFF, 0xFF, 0xFF, 0xF0, 0xA6}, true)
	f.Fuzz(func(t *testing.T, b []byte, nni bool) {
		format := UNI
		if nni {
			format = NNI
		}
		h, err := ParseHeader(b, format)
		if err != nil {
			return
		}
		var out [5]byte
		h.Put(out[:], format)
		if !bytes.Equal(out[:4], b[:4]) {
			t.Fatalf("encode(decode(% x)) = % x", b[:4], out[:4])
		}
		if len(b) >= 5 {
			c := bytes.Clone(b[:5])
			CheckHEC(c) // never panics, whatever the octets
		}
	})
}

func FuzzAAL5(f *testing.F) {
	f.Add([]byte("123456789"), byte(0))
	f.Add(make([]byte, 41), byte(3))
	f.Fuzz(func(t *testing.T, sdu []byte, uu byte) {
		if len(sdu) == 0 || len(sdu) > MaxAAL5SDU {
			return
		}
		cs, err := SegmentAAL5(nil, sdu, uu, Header{VCI: 42}, UNI)
		if err != nil {
			t.Fatal(err)
		}
		var r Reassembler
		for i := range cs {
			got, done, err := r.Push(&cs[i], 0)
			if i == len(cs)-1 && (!done || err != nil || !bytes.Equal(got, sdu)) {
				t.Fatalf("round trip of %d octets: %v", len(sdu), err)
			}
		}
		// Arbitrary cells never panic the reassembler.
		var c Cell
		copy(c[:], sdu)
		r.Push(&c, 0)
	})
}

func BenchmarkHeaderDecode(b *testing.B) {
	c := Cell{0x00, 0x10, 0x06, 0x42, 0x40}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := CheckHEC(c[:5]); err != nil {
			b.Fatal(err)
		}
		_ = c.Header(UNI)
	}
}
