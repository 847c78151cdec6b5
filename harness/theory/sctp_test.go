package theory

import (
	"math"
	"testing"

	"github.com/atmlab/atmlab/cells"
	"github.com/atmlab/atmlab/emulator/atm"
	"github.com/atmlab/atmlab/emulator/units"
	"github.com/atmlab/atmlab/harness/perf"
	"github.com/atmlab/atmlab/internal/labtest"
	"github.com/atmlab/atmlab/topologies/labfile"
)

// An SCTP stream's packets are IP 20 + common header 12 + DATA chunk
// header 16 + the data padded to 4 octets, one chunk to a packet: at MTU
// 9000 a chunk carries 8952 octets (a 9000-octet packet, 9038 octets on
// the wire), so 1 Gbit/s carries 8952/9038 of it, 990.485 Mbit/s; a
// 65536-octet message is 7 full packets and one of 2872 octets (2920 of
// IP, 2958 on the wire); 1001 octets pad to 1004 (a 1052-octet packet);
// one octet pads to 4 (a 52-octet packet, a 70-octet frame, 90 on the
// wire); at MTU 1499 a chunk carries 1448, the MTU less 48 rounded down.
func TestSCTPCeilingCountsChunkHeadersAndPadding(t *testing.T) {
	for _, tc := range []struct {
		name         string
		mtu, payload int
		packets      []int
		wire         float64
		goodput      float64 // bit/s at 1 Gbit/s
	}{
		{"one full chunk", 9000, 8952, []int{9000}, 9038, 1e9 * 8952 / 9038},
		{"64 KiB message", 9000, 65536, []int{9000, 9000, 9000, 9000, 9000, 9000, 9000, 2920}, 7*9038 + 2958, 1e9 * 65536 / 66224},
		{"padded", 1500, 1001, []int{1052}, 1090, 1e9 * 1001 / 1090},
		{"one octet", 1500, 1, []int{52}, 90, 1e9 * 1 / 90},
		{"MTU not a multiple of 4", 1499, 1452, []int{1496, 52}, 1534 + 90, 1e9 * 1452 / 1624},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := SCTPPackets(tc.mtu, tc.payload); !equalInts(got, tc.packets) {
				t.Errorf("SCTPPackets(%d, %d) = %v, want %v", tc.mtu, tc.payload, got, tc.packets)
			}
			c, err := EthernetCeiling(units.BitRate(1e9), tc.mtu, tc.payload, "sctp")
			if err != nil || c.WireBytes != tc.wire || c.Frames != float64(len(tc.packets)) || math.Abs(c.Goodput-tc.goodput) > 1e-6 {
				t.Errorf("EthernetCeiling(1G, %d, %d, sctp) = %+v, %v, want %v wire octets, goodput %.3f", tc.mtu, tc.payload, c, err, tc.wire, tc.goodput)
			}
		})
	}
	if SCTPData(9000) != 8952 || SCTPData(1500) != 1452 || SCTPData(1499) != 1448 {
		t.Errorf("SCTPData(9000, 1500, 1499) = %d, %d, %d, want 8952, 1452, 1448", SCTPData(9000), SCTPData(1500), SCTPData(1499))
	}
	// Over ATM each packet is its own AAL5 PDU: 9000 + 8 LLC/SNAP + 8
	// trailer = 9016 octets in 188 cells of OC-3c's 149.76e6/424 a second.
	c, err := ATMCeiling(atm.PHYs["oc3"], atm.AAL5, cells.LLC, 9000, 8952, "sctp")
	if want := 149.76e6 * 8952 / (188 * 53); err != nil || math.Abs(c.Goodput-want) > 1e-3 {
		t.Errorf("ATMCeiling(oc3, 9000, 8952, sctp) = %.0f, %v, want %.0f", c.Goodput, err, want)
	}
}

// A lab's SCTP_STREAM has the path's SCTP ceiling: two hosts on 100 Mbit/s
// Ethernet at MTU 1500 carry 1452 of every 1538 octets.
func TestSCTPStreamHasAPathCeiling(t *testing.T) {
	lab, err := labfile.Parse("l.yaml", []byte(labtest.Lab("two-hosts", "l")))
	if err != nil {
		t.Fatal(err)
	}
	if got, ok := PathCeiling(lab, "h1", "h2", perf.SCTPStream, 1452); !ok || math.Abs(got-100e6*1452/1538) > 1e-6 {
		t.Errorf("PathCeiling(SCTP_STREAM, 1452) = %.0f, %v, want %.0f", got, ok, 100e6*1452/1538)
	}
	if _, ok := PathCeiling(lab, "h1", "h2", perf.SCTPRR, 1); ok {
		t.Error("SCTP_RR has a stream ceiling")
	}
}

// pion's packets stop at 8192 octets of SCTP (8212 of IP) on a 9000-octet
// path: an 8952-octet message is a full chunk of 8164 octets and one of
// 788 (an 836-octet packet), both packets' headers paid: 8250 + 874 =
// 9124 octets on the wire, 1 Gbit/s carrying 8952/9124 of it, 981.149
// Mbit/s; the kernel's one 9000-octet packet keeps 990.485.
func TestSCTPStackCeilingCountsPionsTwoPackets(t *testing.T) {
	pion := perf.SCTPPacketMTU(perf.PionImplementation, 9000)
	if got := SCTPPackets(pion, 8952); !equalInts(got, []int{8212, 836}) {
		t.Errorf("pion's packets for 8952 octets at MTU 9000 = %v, want [8212 836]", got)
	}
	lab, err := labfile.Parse("l.yaml", []byte("name: l\ntopology:\n  nodes:\n    h1: {kind: host, ipv4: 10.0.0.1/24, mtu: 9000}\n    h2: {kind: host, ipv4: 10.0.0.2/24, mtu: 9000}\n  links:\n    - {endpoints: [\"h1:eth0\", \"h2:eth0\"], ethernet: {rate: 1G}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		implementation string
		want           float64
	}{
		{perf.PionImplementation, 1e9 * 8952 / 9124},
		{perf.PionImplementation + " (client), kernel (server)", 1e9 * 8952 / 9124},
		{"kernel", 1e9 * 8952 / 9038},
		{"", 1e9 * 8952 / 9038},
	} {
		if got, ok := StackCeiling(lab, "h1", "h2", perf.SCTPStream, 8952, tc.implementation); !ok || math.Abs(got-tc.want) > 1e-6 {
			t.Errorf("StackCeiling(%q) = %.0f, %v, want %.0f", tc.implementation, got, ok, tc.want)
		}
	}
	if got, _ := StackCeiling(lab, "h1", "h2", perf.TCPStream, 8952, perf.PionImplementation); got != 1e9*8948/9038 {
		t.Errorf("a TCP stream's ceiling changed with an SCTP stack: %.0f", got)
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
