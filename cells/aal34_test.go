package cells

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/atmlab/atmlab/cells/internal/crc"
)

// CRC-10 checks of atm.md §4.3: the catalogue check and the bytewise SAR form.
func TestCRC10(t *testing.T) {
	if got := crc.CRC10([]byte("123456789")); got != 0x199 {
		t.Errorf("CRC-10/ATM check = %#x, want 0x199", got)
	}
	if got := crc.CRC10SAR([]byte("123456789")); got != 0x188 {
		t.Errorf("bytewise form over 123456789 = %#x, want 0x188 (the reference's pitfall)", got)
	}
}

// AAL3/4 vectors of atm.md §4.4, octet for octet.
func TestAAL34Vectors(t *testing.T) {
	cs, err := SegmentAAL34(nil, []byte("123456789"), 0x01, 0, Header{VCI: 32}, UNI)
	if err != nil || len(cs) != 1 {
		t.Fatalf("SSM: %d cells, %v", len(cs), err)
	}
	want := "c000" + "0001000931323334353637383900000000010009" + strings.Repeat("00", 24) + "53fb"
	if got := hex.EncodeToString(cs[0].Payload()); got != want {
		t.Errorf("SSM payload\n got %s\nwant %s", got, want)
	}
	sdu := make([]byte, 100)
	for i := range sdu {
		sdu[i] = byte(i)
	}
	cs, err = SegmentAAL34(nil, sdu, 0x5A, 5, Header{VCI: 32}, UNI)
	if err != nil || len(cs) != 3 || AAL34Cells(100) != 3 {
		t.Fatalf("100 octets: %d cells, %v", len(cs), err)
	}
	for i, w := range []struct{ head, tail string }{{"8005", "b083"}, {"0405", "b20d"}, {"4805", "536b"}} {
		p := cs[i].Payload()
		if hex.EncodeToString(p[:2]) != w.head || hex.EncodeToString(p[46:]) != w.tail {
			t.Errorf("segment %d: % x ... % x, want %s ... %s", i, p[:2], p[46:], w.head, w.tail)
		}
		if crc.CRC10SAR(p) != 0 {
			t.Errorf("segment %d does not verify", i)
		}
	}
	if st, sn, mid, li := cs[2].SAR(); st != SegEOM || sn != 2 || mid != 5 || li != 20 {
		t.Errorf("EOM fields: st %d sn %d mid %d li %d", st, sn, mid, li)
	}
	if !bytes.Equal(cs[0].Payload()[2:6], []byte{0x00, 0x5A, 0x00, 0x64}) {
		t.Errorf("CPCS header % x, want 00 5a 00 64", cs[0].Payload()[2:6])
	}
}

// The AAL3/4 cell count against the reference's table (§7.4) and formula.
func TestAAL34Cells(t *testing.T) {
	for n, want := range map[int]int{512: 12, 1500: 35, 9180: 209, 65535: 1490, 36: 1, 37: 2} {
		if got := AAL34Cells(n); got != want {
			t.Errorf("AAL34Cells(%d) = %d, want %d", n, got, want)
		}
		if cs, _ := SegmentAAL34(nil, make([]byte, n), 0, 0, Header{}, UNI); len(cs) != want {
			t.Errorf("SegmentAAL34(%d) made %d cells, want %d", n, len(cs), want)
		}
	}
}

// Interleaved PDUs on several MIDs come out whole; a lost, corrupted or
// reordered segment, an oversized and a stalled PDU fail with their sentinel.
func TestAAL34Reassembly(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	sizes := []int{1, 36, 37, 100, 1500, 9180, 65535}
	sdus := make([][]byte, len(sizes))
	streams := make([][]Cell, len(sizes))
	for i, n := range sizes {
		sdus[i] = make([]byte, n)
		for j := range sdus[i] {
			sdus[i][j] = byte(rng.IntN(256))
		}
		streams[i], _ = SegmentAAL34(nil, sdus[i], byte(i), uint16(i*100), Header{VCI: 40}, UNI)
	}
	var r AAL34Reassembler
	got := map[int]bool{}
	for left := true; left; {
		left = false
		for i := range streams { // round robin: one cell of each MID in turn
			if len(streams[i]) == 0 {
				continue
			}
			left = true
			sdu, done, err := r.Push(&streams[i][0], 0)
			streams[i] = streams[i][1:]
			if err != nil {
				t.Fatalf("MID %d: %v", i*100, err)
			}
			if done {
				if !bytes.Equal(sdu, sdus[i]) {
					t.Fatalf("MID %d: %d octets differ", i*100, len(sdu))
				}
				got[i] = true
			}
		}
	}
	if len(got) != len(sizes) {
		t.Fatalf("reassembled %d of %d PDUs", len(got), len(sizes))
	}

	cs, _ := SegmentAAL34(nil, make([]byte, 1000), 9, 1, Header{VCI: 40}, UNI)
	run := func(r *AAL34Reassembler, cs []Cell, at time.Duration) (errs []error) {
		for i := range cs {
			if _, _, err := r.Push(&cs[i], at); err != nil {
				errs = append(errs, err)
			}
		}
		return errs
	}
	has := func(errs []error, want error) bool {
		for _, e := range errs {
			if errors.Is(e, want) {
				return true
			}
		}
		return false
	}
	lost := append(append([]Cell{}, cs[:5]...), cs[6:]...)
	if errs := run(&r, lost, 0); !has(errs, ErrSequence) {
		t.Errorf("a lost COM: %v, want ErrSequence", errs)
	}
	bad := append([]Cell{}, cs...)
	bad[3][20] ^= 1
	if errs := run(&r, bad, 0); !has(errs, ErrCRC10) {
		t.Errorf("a corrupted cell: %v, want ErrCRC10", errs)
	}
	noEOM := cs[:len(cs)-1]
	if errs := run(&r, append(append([]Cell{}, noEOM...), cs...), 0); !has(errs, ErrSequence) || len(errs) != 1 {
		t.Errorf("a lost EOM then a whole PDU: %v, want one ErrSequence", errs)
	}
	small := AAL34Reassembler{MaxSDU: 500}
	if errs := run(&small, cs, 0); !has(errs, ErrTooLong) {
		t.Errorf("MaxSDU 500: %v", errs)
	}
	timed := AAL34Reassembler{Timeout: time.Millisecond}
	timed.Push(&cs[0], 0)
	if _, _, err := timed.Push(&cs[1], 2*time.Millisecond); !errors.Is(err, ErrTimeout) {
		t.Errorf("past the timeout: %v", err)
	}
	// A forged EOM whose Etag differs from the Btag is a bad PDU.
	forged := append([]Cell{}, cs...)
	e := forged[len(forged)-1].Payload()
	_, _, _, li := forged[len(forged)-1].SAR()
	e[2+li-3] ^= 0xFF // Etag
	e[46], e[47] = e[46]&0xFC, 0
	c10 := crc.CRC10SAR(e)
	e[46], e[47] = e[46]|byte(c10>>8), byte(c10)
	if errs := run(&AAL34Reassembler{}, forged, 0); !has(errs, ErrLength) {
		t.Errorf("Btag != Etag: %v, want ErrLength", errs)
	}
}

func TestEncap(t *testing.T) {
	ip := unhex(t, "4500001400004000400126e70a0000010a000002")
	sdu := LLC.Encapsulate(nil, EtherTypeIPv4, ip)
	if hex.EncodeToString(sdu) != "aaaa030000000800"+hex.EncodeToString(ip) {
		t.Fatalf("LLC/SNAP SDU % x", sdu)
	}
	for _, e := range []Encap{LLC, VCMux} {
		sdu := e.Encapsulate(nil, EtherTypeIPv4, ip)
		if len(sdu) != len(ip)+e.Overhead() {
			t.Errorf("%v: %d octets", e, len(sdu))
		}
		et, pkt, err := e.Decapsulate(sdu)
		if err != nil || et != EtherTypeIPv4 || !bytes.Equal(pkt, ip) {
			t.Errorf("%v round trip: %#x %v", e, et, err)
		}
	}
	v6 := []byte{0x60, 0, 0, 0}
	if et, _, _ := VCMux.Decapsulate(v6); et != EtherTypeIPv6 {
		t.Errorf("VC-mux IPv6 guessed as %#x", et)
	}
	if _, _, err := LLC.Decapsulate([]byte{0xAA, 0xAA, 0x03, 0x00, 0x80, 0xC2, 0x00, 0x07}); !errors.Is(err, ErrEncap) {
		t.Errorf("bridged PDU on a routed VC: %v", err)
	}
	if _, _, err := VCMux.Decapsulate([]byte{0x00}); !errors.Is(err, ErrEncap) {
		t.Errorf("VC-mux garbage: %v", err)
	}
}

func FuzzAAL34(f *testing.F) {
	f.Add([]byte("123456789"), byte(1), uint16(0))
	f.Add(make([]byte, 100), byte(0x5A), uint16(5))
	f.Fuzz(func(t *testing.T, sdu []byte, tag byte, mid uint16) {
		mid &= MaxMID
		if len(sdu) == 0 || len(sdu) > MaxAAL5SDU {
			return
		}
		cs, err := SegmentAAL34(nil, sdu, tag, mid, Header{VCI: 42}, UNI)
		if err != nil {
			t.Fatal(err)
		}
		var r AAL34Reassembler
		for i := range cs {
			got, done, err := r.Push(&cs[i], 0)
			if i == len(cs)-1 && (!done || err != nil || !bytes.Equal(got, sdu)) {
				t.Fatalf("round trip of %d octets: %v", len(sdu), err)
			}
		}
		// Arbitrary cells, even with a valid CRC-10, never panic it.
		var c Cell
		copy(c[HeaderSize:], sdu)
		r.Push(&c, 0)
		p := c.Payload()
		p[46], p[47] = p[46]&0xFC, 0
		c10 := crc.CRC10SAR(p)
		p[46], p[47] = p[46]|byte(c10>>8), byte(c10)
		r.Push(&c, 0)
	})
}

func FuzzDecapsulate(f *testing.F) {
	f.Add([]byte{0xAA, 0xAA, 0x03, 0, 0, 0, 0x08, 0x00, 0x45})
	f.Fuzz(func(t *testing.T, sdu []byte) {
		for _, e := range []Encap{LLC, VCMux} {
			et, pkt, err := e.Decapsulate(sdu)
			if err == nil && !bytes.Equal(e.Encapsulate(nil, et, pkt), sdu) {
				t.Fatalf("%v: encapsulate(decapsulate(% x)) differs", e, sdu)
			}
		}
	})
}

// BenchmarkSAR segments and reassembles SDUs on one core: MB/s and Gbit/s
// are of SDU octets.
func BenchmarkSAR(b *testing.B) {
	for _, aal := range []string{"aal5", "aal34"} {
		for _, n := range []int{40, 1500, 9180} {
			b.Run(fmt.Sprintf("%s/%d", aal, n), func(b *testing.B) {
				sdu := make([]byte, n)
				cs := make([]Cell, 0, AAL34Cells(n))
				var r5 Reassembler
				var r34 AAL34Reassembler
				b.SetBytes(int64(n))
				b.ReportAllocs()
				for b.Loop() {
					if aal == "aal5" {
						cs, _ = SegmentAAL5(cs[:0], sdu, 0, Header{VCI: 100}, UNI)
						for i := range cs {
							r5.Push(&cs[i], 0)
						}
					} else {
						cs, _ = SegmentAAL34(cs[:0], sdu, 0, 0, Header{VCI: 100}, UNI)
						for i := range cs {
							r34.Push(&cs[i], 0)
						}
					}
				}
				b.ReportMetric(float64(n*8*b.N)/b.Elapsed().Seconds()/1e9, "Gbit/s")
			})
		}
	}
}
