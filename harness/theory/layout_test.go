package theory

import (
	"fmt"
	"testing"

	"github.com/atmlab/atmlab/cells"
	"github.com/atmlab/atmlab/emulator/atm"
)

func cellString(c []Part) string {
	s := ""
	for _, p := range c {
		s += fmt.Sprintf("%s%d ", p.Kind, p.Bytes)
	}
	return s
}

// TestLayoutKnown lays out small and fragmenting messages by hand.
func TestLayoutKnown(t *testing.T) {
	oc3, atm25 := atm.PHYs["oc3"], atm.PHYs["atm25"]
	for _, tc := range []struct {
		phy     atm.PHY
		aal     atm.AAL
		encap   cells.Encap
		mtu, n  int
		want    []string // cells of the first packet
		packets int
	}{
		// 8+20+8+1 = 37 octets, 3 of pad, the 8-octet trailer: one cell.
		{oc3, atm.AAL5, cells.LLC, 9180, 1, []string{"atm5 llc8 ip20 udp8 payload1 pad3 trailer8 "}, 1},
		// 1444+28+8 = 1480, +8 = 1488 = 31 x 48: full, no pad.
		{oc3, atm.AAL5, cells.LLC, 9180, 1444, nil, 1},
		{oc3, atm.AAL5, cells.VCMux, 9180, 9, []string{"atm5 ip20 udp8 payload9 pad3 trailer8 "}, 1},
		// AAL3/4: CPCS header 4, SDU 37 padded to 40, trailer 4: 48 > 44, two cells.
		{oc3, atm.AAL34, cells.LLC, 9180, 1, []string{"atm5 sar2 cpcs4 llc8 ip20 udp8 payload1 pad3 sar2 ", "atm5 sar2 trailer4 pad40 sar2 "}, 1},
		{atm25, atm.AAL5, cells.VCMux, 9180, 1, []string{"phy1 atm5 ip20 udp8 payload1 pad11 trailer8 "}, 1},
		// 1473 bytes at MTU 1500: 1480 + 1 of UDP data, two fragments.
		{oc3, atm.AAL5, cells.VCMux, 1500, 1473, nil, 2},
	} {
		pkts, err := Layout(tc.phy, tc.aal, tc.encap, tc.mtu, tc.n)
		if err != nil {
			t.Fatal(err)
		}
		if len(pkts) != tc.packets {
			t.Errorf("%v %v %d: %d packets, want %d", tc.aal, tc.encap, tc.n, len(pkts), tc.packets)
			continue
		}
		for i, w := range tc.want {
			if got := cellString(pkts[0].Cells[i]); got != w {
				t.Errorf("%s %v %v %d: cell %d %q, want %q", tc.phy.Name, tc.aal, tc.encap, tc.n, i, got, w)
			}
		}
	}
	p, _ := Layout(oc3, atm.AAL5, cells.LLC, 9180, 1444)
	if len(p[0].Cells) != 31 || cellString(p[0].Cells[30]) != "atm5 payload40 trailer8 " {
		t.Errorf("1444: %d cells, last %q", len(p[0].Cells), cellString(p[0].Cells[30]))
	}
	p, _ = Layout(oc3, atm.AAL5, cells.VCMux, 1500, 1473)
	if p[0].IP != 1500 || p[1].IP != 21 || cellString(p[1].Cells[0]) != "atm5 ip20 payload1 pad19 trailer8 " {
		t.Errorf("1473 at MTU 1500: packets %d and %d, second %q", p[0].IP, p[1].IP, cellString(p[1].Cells[0]))
	}
	if _, err := Layout(oc3, atm.AAL5, cells.LLC, 9180, 0); err == nil {
		t.Error("payload 0 laid out")
	}
}

// TestLayoutCounts: for every PHY, AAL and encapsulation, the layout has
// the cells ATMCeiling counts, each the PHY's octets, and carries the
// message's bytes exactly once.
func TestLayoutCounts(t *testing.T) {
	for _, name := range atm.PHYNames() {
		phy := atm.PHYs[name]
		for _, aal := range []atm.AAL{atm.AAL5, atm.AAL34} {
			for _, encap := range []cells.Encap{cells.LLC, cells.VCMux} {
				step := 11
				if name == "oc3" && encap == cells.LLC {
					step = 1 // every size of both AALs' periods
				}
				for n := 1; n <= 9300; n += step {
					pkts, err := Layout(phy, aal, encap, 9180, n)
					if err != nil {
						t.Fatal(err)
					}
					c, _ := ATMCeiling(phy, aal, encap, 9180, n, "udp")
					total, bytes := 0, map[string]int{}
					for _, pk := range pkts {
						total += len(pk.Cells)
						for _, cell := range pk.Cells {
							sum := 0
							for _, p := range cell {
								sum += p.Bytes
								bytes[p.Kind] += p.Bytes
							}
							if sum != phy.CellOctets {
								t.Fatalf("%s %v %v %d: cell of %d octets %q", name, aal, encap, n, sum, cellString(cell))
							}
						}
					}
					if float64(total*phy.CellOctets) != c.WireBytes || len(pkts) != int(c.Frames) {
						t.Fatalf("%s %v %v %d: %d cells in %d packets, ceiling has %v octets in %v", name, aal, encap, n, total, len(pkts), c.WireBytes, c.Frames)
					}
					if bytes["payload"] != n || bytes["udp"] != UDPHeader || bytes["ip"] != IPv4Header*len(pkts) || bytes["llc"] != encap.Overhead()*len(pkts) {
						t.Fatalf("%s %v %v %d: carries %v", name, aal, encap, n, bytes)
					}
				}
			}
		}
	}
}
