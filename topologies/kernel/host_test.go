//go:build linux

package kernel

import (
	"strings"
	"testing"

	"github.com/atmlab/atmlab/cells"
	"github.com/atmlab/atmlab/emulator"
	"github.com/atmlab/atmlab/emulator/atm"
	"github.com/atmlab/atmlab/topologies"
)

// The token bucket in front of a host's TAP bills the slower of its link
// and its CPU: Ethernet framing at the link rate, ATM cells at the cell
// stream rate, or a slow host's copy rate with its per-packet cost as octets.
func TestWireOf(t *testing.T) {
	lab, err := topologies.Parse("w.yaml", []byte(`name: w
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
