//go:build linux

package kernel

import (
	"encoding/binary"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/atmlab/atmlab/cells"
	"github.com/atmlab/atmlab/emulator"
	"github.com/atmlab/atmlab/emulator/atm"
	"github.com/atmlab/atmlab/topologies"
	"github.com/atmlab/atmlab/topologies/labfile"
)

// The token bucket in front of a host's TAP bills the slower of its link
// and its CPU: Ethernet framing at the link rate, ATM cells at the cell
// stream rate, or a slow host's copy rate with its per-packet cost as octets.
func TestWireOf(t *testing.T) {
	lab, err := labfile.Parse("w.yaml", []byte(`name: w
topology:
  nodes:
    e1: {kind: host, ipv4: 10.0.0.1/24}
    e2: {kind: host, ipv4: 10.0.0.2/24}
    a1: {kind: host, ipv4: 10.0.1.1/24}
    a2: {kind: host, ipv4: 10.0.1.2/24, cpu: {rate: 77M, per_packet: 10us}}
    p1: {kind: host, ipv4: 10.0.2.1/24, cpu: {per_packet: 59.4us}}
    p2: {kind: host, ipv4: 10.0.2.2/24, cpu: {per_packet: 1us}}
  links:
    - {endpoints: ["e1:eth0", "e2:eth0"], ethernet: {rate: 100M}}
    - {endpoints: ["a1:eth0", "a2:eth0"], atm: {phy: oc3}}
    - {endpoints: ["p1:eth0", "p2:eth0"], ethernet: {rate: 1G}}
`))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		host string
		rate int64
		stab string
	}{
		{"e1", 100_000_000, "overhead 24 mpu 84"},
		{"a1", 149_760_000, "cells"},            // a size table of its own: TestATMSizeTable
		{"a2", 77_000_000, "overhead 96 mpu 1"}, // 10 µs = 96.25 octets at 77 Mbit/s
		// A per-packet cost only: 59.4 µs as 594,000 octets at 80 Gbit/s,
		// slower than the 1G link; 1 µs is faster than the link (12.3 µs).
		{"p1", 80_000_000_000, "overhead 594000 mpu 1"},
		{"p2", 1_000_000_000, "overhead 24 mpu 84"},
	} {
		w := wireOf(lab, topologies.Endpoint{Node: tc.host, Port: "eth0"})
		stab := "cells"
		if w.stab != nil {
			stab = strings.Join(w.stab(lab.Node(tc.host).Interface("eth0").MTU), " ")
		}
		if int64(w.rate) != tc.rate || stab != tc.stab || (w.billed != nil) != (stab == "cells") {
			t.Errorf("%s: rate %d, stab %q; want %d, %q", tc.host, int64(w.rate), stab, tc.rate, tc.stab)
		}
		// The loop's bucket (stage.dateBack) bills a frame as the stab does,
		// less Ethernet's minimum, and none above a full-sized frame.
		mtu := lab.Node(tc.host).Interface("eth0").MTU
		b := w.bucket(mtu)
		for n := emulator.EtherHeader; n <= mtu+emulator.EtherHeader; n++ {
			want := n
			if w.billed != nil {
				want = w.billed(n)
			} else if _, err := fmt.Sscanf(stab, "overhead %d", &want); err == nil {
				want += n
			}
			if got := b.cost(n); got != want || got > b.frame {
				t.Fatalf("%s: a %d-octet frame costs %d, want %d, at most a full frame's %d", tc.host, n, got, want, b.frame)
			}
		}
	}
}

// An ATM host's size table bills every frame length exactly what the
// adapter sends for it: 53 octets for each cell that cells.SegmentAAL5 or
// SegmentAAL34 makes of the frame's packet with its encapsulation, for
// both AALs and encapsulations, as the kernel reads the table.
func TestATMSizeTable(t *testing.T) {
	const mtu = 9180
	frame := make([]byte, mtu)
	for _, aal := range []atm.AAL{atm.AAL5, atm.AAL34} {
		for _, encap := range []cells.Encap{cells.LLC, cells.VCMux} {
			table := newSizeTable(mtu+emulator.EtherHeader, atmBilled(aal, encap))
			if table.sizeLog != 0 || len(table.data) != mtu+emulator.EtherHeader+1 {
				t.Fatalf("%v %v: size_log %d, tsize %d", aal, encap, table.sizeLog, len(table.data))
			}
			var cs []cells.Cell
			for ip := 20; ip <= mtu; ip++ {
				sdu := encap.Encapsulate(nil, 0x0800, frame[:ip])
				var err error
				if aal == atm.AAL34 {
					cs, err = cells.SegmentAAL34(cs[:0], sdu, 0, 0, cells.Header{VCI: 100}, cells.UNI)
				} else {
					cs, err = cells.SegmentAAL5(cs[:0], sdu, 0, cells.Header{VCI: 100}, cells.UNI)
				}
				if err != nil {
					t.Fatal(err)
				}
				if got, want := table.lookup(ip+emulator.EtherHeader), cells.Size*len(cs); got != want {
					t.Fatalf("%v %v: a %d-octet packet is billed %d octets, sent as %d", aal, encap, ip, got, want)
				}
			}
		}
	}
	// AAL3/4 bills 9.4 % more than AAL5 for 1472-octet UDP over LLC/SNAP
	// (35 cells against 32), where tc's `linklayer atm` billed both 32.
	if a5, a34 := atmBilled(atm.AAL5, cells.LLC)(1514), atmBilled(atm.AAL34, cells.LLC)(1514); a5 != 32*53 || a34 != 35*53 {
		t.Errorf("1514-octet frame: AAL5 %d, AAL3/4 %d octets; want %d, %d", a5, a34, 32*53, 35*53)
	}
	// A table past 65535 billed octets a frame shifts its entries and
	// rounds up: never billed less than sent.
	big := newSizeTable(65535, atmBilled(atm.AAL34, cells.LLC))
	if big.sizeLog != 1 || big.lookup(65535) < atmBilled(atm.AAL34, cells.LLC)(65535) || big.lookup(65535)-atmBilled(atm.AAL34, cells.LLC)(65535) > 1 {
		t.Errorf("65535-octet frame: size_log %d, billed %d for %d", big.sizeLog, big.lookup(65535), atmBilled(atm.AAL34, cells.LLC)(65535))
	}
	// The attribute: a tc_sizespec with size_log and tsize, then the table.
	a := newSizeTable(100, atmBilled(atm.AAL5, cells.LLC)).attr().Serialize()
	if len(a) != 4+4+24+4+2*101+2 {
		t.Errorf("TCA_STAB attribute of %d octets", len(a))
	}
}

// The size table for super-frames bills every length as the wire frames
// emulator.Segment cuts it into (TCP/IPv4 with timestamps at MTU 1500:
// 1448 octets a segment, each with 66 octets of headers, FCS, preamble and
// gap), and a frame up to the MTU as the per-frame table does.
func TestGSOStab(t *testing.T) {
	spec, data := gsoStab(1500)
	if spec[0] != 1 || binary.NativeEndian.Uint32(spec[20:]) != uint32(len(data)) || len(data) != 30001 {
		t.Fatalf("tc_sizespec % x for %d entries", spec, len(data))
	}
	// Slots are two octets wide: an odd length is billed as the even one below it.
	for _, n := range []int{60, 64, 1514, 1515, 1516, 3000, 2*1448 + 66, 2*1448 + 67, 2*1448 + 68, 41*1448 + 66, gsoMaxSize} {
		even := n &^ 1
		want, _ := emulator.Ethernet{}.WireBytes(even)
		segs := [][]byte{nil}
		if even > 1514 {
			frame := make([]byte, even)
			binary.BigEndian.PutUint16(frame[12:], 0x0800)
			frame[14], frame[23], frame[46] = 0x45, 6, 0x80 // IPv4, TCP, 32-octet header
			var err error
			if segs, err = emulator.Segment(nil, frame, emulator.VNetHdr{GSOType: emulator.GSOTCPv4, GSOSize: 1448}); err != nil {
				t.Fatal(err)
			}
			want = 0
			for _, s := range segs {
				w, _ := emulator.Ethernet{}.WireBytes(len(s))
				want += w
			}
		}
		if got := int(data[n>>1]); got != want {
			t.Errorf("%d octets (%d segments) billed %d, want %d", n, len(segs), got, want)
		}
	}
}

// A host's TCP buffer maximum is raised to what its link needs and never
// lowered: a machine whose own maximum is larger keeps it.
func TestRaiseMaxKeepsMinimumAndDefault(t *testing.T) {
	for _, tc := range []struct {
		cur  string
		want int
		out  string
		ok   bool
	}{
		{"4096\t131072\t6291456\n", 50 << 20, "4096 131072 52428800", true},
		{"4096\t16384\t4194304\n", 1 << 20, "", false},
		{"4096 16384\n", 1 << 20, "", false},
	} {
		out, ok := raiseMax(tc.cur, tc.want)
		if out != tc.out || ok != tc.ok {
			t.Errorf("raiseMax(%q, %d) = %q, %v; want %q, %v", tc.cur, tc.want, out, ok, tc.out, tc.ok)
		}
	}
}

// A process's CPU time is its stat line's utime and stime, whatever its
// command is called.
func TestStatCPU(t *testing.T) {
	line := "4242 (iperf3 (x) y) S 1 4242 4242 0 -1 4194560 350 0 0 0 731 269 0 0 20 0 1 0 123 1000 200 18446744073709551615\n"
	if d, err := statCPU([]byte(line)); err != nil || d != 10*time.Second {
		t.Errorf("statCPU = %v, %v; want 10s (731 + 269 ticks)", d, err)
	}
	for _, bad := range []string{"", "1 (x) S 1 2", "1 (x) S 1 2 3 4 5 6 7 8 9 10 x 0"} {
		if d, err := statCPU([]byte(bad)); err == nil {
			t.Errorf("statCPU(%q) = %v, no error", bad, d)
		}
	}
}
