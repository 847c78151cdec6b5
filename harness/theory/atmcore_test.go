package theory

import (
	"math"
	"os"
	"strings"
	"testing"

	"github.com/atmlab/atmlab/cells"
	"github.com/atmlab/atmlab/emulator/atm"
	"github.com/atmlab/atmlab/topologies/labfile"
)

// A label inside LLC/SNAP costs a cell where it crosses a cell boundary:
// a 100-octet UDP datagram is 144 octets of AAL5 CPCS-PDU bare (3 cells)
// and 148 with a label (4); a 1472-octet one is 32 cells either way.
func TestATMMPLSCeiling(t *testing.T) {
	oc3 := atm.PHYs["oc3"]
	for _, tc := range []struct {
		labels, payload int
		want            float64 // Mbit/s
	}{{0, 100, 100 * 8 * 149.76 / (3 * 53 * 8)}, {1, 100, 100 * 8 * 149.76 / (4 * 53 * 8)},
		{0, 1472, 1472 * 8 * 149.76 / (32 * 53 * 8)}, {1, 1472, 1472 * 8 * 149.76 / (32 * 53 * 8)}} {
		c, err := ATMMPLSCeiling(oc3, atm.AAL5, cells.LLC, 1500, tc.labels, tc.payload, "udp")
		if err != nil || math.Abs(c.Goodput/1e6-tc.want) > 1e-6 {
			t.Errorf("%d labels, UDP %d: %.6f Mbit/s (%v), want %.6f", tc.labels, tc.payload, c.Goodput/1e6, err, tc.want)
		}
	}
}

// A stream between hosts on either side of an ATM core of routers is
// bounded by the core's cells, with a label on every core hop when the
// routers run MPLS; the path is named so.
func TestATMCorePathCeiling(t *testing.T) {
	b, err := os.ReadFile("../../topologies/testdata/atm-core.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		keys   string
		labels int
		name   string
	}{
		{"", 0, "h1 → h2 over 1 Gbit/s Ethernet; OC-3c, AAL5, LLC/SNAP"},
		{"mpls: true,", 1, "h1 → h2 over 1 Gbit/s Ethernet; OC-3c, AAL5, LLC/SNAP, MPLS"},
	} {
		lab, err := labfile.Parse("core.yaml", []byte(strings.NewReplacer("NAME", "core", "KEYS", tc.keys).Replace(string(b))))
		if err != nil {
			t.Fatal(err)
		}
		for _, size := range []int{100, 1472} {
			want, _ := ATMMPLSCeiling(atm.PHYs["oc3"], atm.AAL5, cells.LLC, 1500, tc.labels, size, "udp")
			if got, ok := PathCeiling(lab, "h1", "h2", "UDP_STREAM", size); !ok || got != want.Goodput {
				t.Errorf("%q UDP %d: ceiling %.4f Mbit/s, want the core's %.4f", tc.keys, size, got/1e6, want.Goodput/1e6)
			}
		}
		if got := PathName(lab, "h1", "h2"); got != tc.name {
			t.Errorf("%q: path %q, want %q", tc.keys, got, tc.name)
		}
	}
}
