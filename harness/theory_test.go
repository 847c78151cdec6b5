package harness

import (
	"math"
	"testing"

	"github.com/atmlab/atmlab/emulator/units"
)

// Figures from ../shared/reference/ethernet.md §9.
func TestEthernetCeiling(t *testing.T) {
	for _, tc := range []struct {
		rate         units.BitRate
		mtu, payload int
		proto        string
		want         float64 // Mbit/s
		frames       int
	}{
		{10 * units.Mbps, 1500, 1472, "udp", 9.571, 1},
		{100 * units.Mbps, 1500, 1472, "udp", 95.709, 1},
		{units.Gbps, 1500, 1472, "udp", 957.09, 1},
		{100 * units.Mbps, 1500, 1448, "tcp", 94.148, 1},
		{100 * units.Mbps, 1500, 1460, "tcp-nots", 94.928, 1},
		{100 * units.Mbps, 1500, 18, "udp", 21.429, 1},  // a 64-byte frame
		{100 * units.Mbps, 1500, 8192, "udp", 95.84, 6}, // 6 fragments
		{units.Gbps, 9000, 8972, "udp", 992.70, 1},      // jumbo
		{units.Gbps, 9000, 8948, "tcp", 990.04, 1},
		{100 * units.Mbps, 1500, 65536, "tcp", 94.15, 46}, // a large message is MSS segments
	} {
		c, err := EthernetCeiling(tc.rate, tc.mtu, tc.payload, tc.proto)
		if err != nil {
			t.Fatal(err)
		}
		if got := c.Goodput / 1e6; math.Abs(got-tc.want) > 2e-4*tc.want {
			t.Errorf("EthernetCeiling(%v, %d, %d, %s) = %.3f Mbit/s, want %.3f", tc.rate, tc.mtu, tc.payload, tc.proto, got, tc.want)
		}
		if c.Frames != tc.frames {
			t.Errorf("EthernetCeiling(%v, %d, %d, %s): %d frames, want %d", tc.rate, tc.mtu, tc.payload, tc.proto, c.Frames, tc.frames)
		}
	}
	if _, err := EthernetCeiling(units.Gbps, 1500, 100, "sctp"); err == nil {
		t.Error("sctp accepted")
	}
}
