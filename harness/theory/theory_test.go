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

// Figures from docs/reference.md §6.
func TestEthernetCeiling(t *testing.T) {
	for _, tc := range []struct {
		rate         units.BitRate
		mtu, payload int
		proto        string
		want         float64 // Mbit/s
		frames       float64
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
		{100 * units.Mbps, 1500, 65536, "tcp", 94.15, 65536.0 / 1448}, // a message's share of MSS segments
		{100 * units.Mbps, 1500, 1, "tcp", 94.148, 1.0 / 1448},        // was 1 frame of 1 wire byte
	} {
		c, err := EthernetCeiling(tc.rate, tc.mtu, tc.payload, tc.proto)
		if err != nil {
			t.Fatal(err)
		}
		if got := c.Goodput / 1e6; math.Abs(got-tc.want) > 2e-4*tc.want {
			t.Errorf("EthernetCeiling(%v, %d, %d, %s) = %.3f Mbit/s, want %.3f", tc.rate, tc.mtu, tc.payload, tc.proto, got, tc.want)
		}
		if c.Frames != tc.frames {
			t.Errorf("EthernetCeiling(%v, %d, %d, %s): %g frames, want %g", tc.rate, tc.mtu, tc.payload, tc.proto, c.Frames, tc.frames)
		}
	}
	if _, err := EthernetCeiling(units.Gbps, 1500, 100, "dccp"); err == nil {
		t.Error("dccp accepted")
	}
}

// ATM ceilings against the reference's tables (atm.md §7.2, §7.3, §8).
func TestATMCeiling(t *testing.T) {
	for _, tc := range []struct {
		phy     string
		aal     atm.AAL
		encap   cells.Encap
		mtu     int
		payload int
		proto   string
		want    float64 // Mbit/s
	}{
		{"oc3", atm.AAL5, cells.LLC, 1500, 1472, "udp", 129.98},
		{"oc3", atm.AAL5, cells.LLC, 1500, 1460, "tcp-nots", 128.92},
		{"oc3", atm.AAL5, cells.LLC, 1500, 1448, "tcp", 127.86},
		{"oc3", atm.AAL5, cells.LLC, 9180, 9152, "udp", 134.69},
		{"oc3", atm.AAL5, cells.LLC, 9180, 9140, "tcp-nots", 134.51},
		{"oc3", atm.AAL5, cells.LLC, 9180, 9128, "tcp", 134.34},
		{"oc3", atm.AAL5, cells.LLC, 576, 548, "udp", 119.11},
		{"oc3", atm.AAL34, cells.LLC, 1500, 1472, "udp", 118.84},
		{"oc3", atm.AAL34, cells.LLC, 1500, 1460, "tcp-nots", 117.87},
		{"oc3", atm.AAL34, cells.LLC, 9180, 9140, "tcp-nots", 123.57},
		{"oc3", atm.AAL5, cells.LLC, 9180, 1444, "udp", 131.62},
		{"oc3", atm.AAL5, cells.LLC, 9180, 1445, "udp", 127.60},
		{"oc3", atm.AAL5, cells.LLC, 1500, 1452, "udp", 128.21},
		{"oc3", atm.AAL5, cells.VCMux, 1500, 1452, "udp", 132.35},
		{"oc12", atm.AAL5, cells.LLC, 1500, 1460, "tcp-nots", 515.68},
		{"oc12", atm.AAL34, cells.LLC, 9180, 9140, "tcp-nots", 494.29},
		{"ds3", atm.AAL5, cells.LLC, 1500, 1460, "tcp-nots", 35.04},
		{"e3", atm.AAL5, cells.LLC, 9180, 9152, "udp", 30.51},
		{"atm25", atm.AAL5, cells.LLC, 1500, 1460, "tcp-nots", 21.63},
		{"atm25", atm.AAL34, cells.LLC, 9180, 9140, "tcp-nots", 20.73},
	} {
		c, err := ATMCeiling(atm.PHYs[tc.phy], tc.aal, tc.encap, tc.mtu, tc.payload, tc.proto)
		if err != nil || math.Abs(c.Goodput/1e6-tc.want) > 0.006 {
			t.Errorf("%s %v %v MTU %d %s %d: %.3f Mbit/s (%v), want %.2f", tc.phy, tc.aal, tc.encap, tc.mtu, tc.proto, tc.payload, c.Goodput/1e6, err, tc.want)
		}
	}
}

// The sawtooth's steps over LLC/SNAP lie at UDP payloads 48k-44 (atm.md §8),
// and the drop at 952 -> 953 octets of SDU (UDP 916 -> 917) is about 4.7 %.
func TestSawtooth(t *testing.T) {
	steps, err := Sawtooth(atm.PHYs["oc3"], atm.AAL5, cells.LLC, 1500, 1, 1472)
	if err != nil {
		t.Fatal(err)
	}
	if len(steps) != 31 {
		t.Fatalf("%d steps from 1 to 1472, want 31 (4, 52, ..., 1444)", len(steps))
	}
	for k, s := range steps {
		if s.Size != 48*(k+1)-44 || s.Cells != k+1 {
			t.Fatalf("step %d at %d (%d cells), want %d (%d cells)", k, s.Size, s.Cells, 48*(k+1)-44, k+1)
		}
	}
	if s := steps[19]; s.Size != 916 || math.Abs(s.Drop-0.047) > 0.002 {
		t.Errorf("step at %d drops %.4f, want 916 and about 0.047", s.Size, s.Drop)
	}
	vcmux, _ := Sawtooth(atm.PHYs["oc3"], atm.AAL5, cells.VCMux, 1500, 1, 1472)
	if vcmux[0].Size != 12 || vcmux[len(vcmux)-1].Size != 1452 {
		t.Errorf("VC-mux steps from %d to %d, want 12 .. 1452", vcmux[0].Size, vcmux[len(vcmux)-1].Size)
	}
	a34, _ := Sawtooth(atm.PHYs["oc3"], atm.AAL34, cells.LLC, 1500, 1, 1472)
	if d := a34[1].Size - a34[0].Size; d != 44 {
		t.Errorf("AAL3/4 steps %d apart, want 44", d)
	}
}

// One label at MTU 1500 and 100M: UDP 1472 goes from 95.709 to 95.460 Mbit/s
// (1522-byte frames), UDP 1468 at IP MTU 1496 to 95.449 (mpls.md §1).
func TestMPLSCeiling(t *testing.T) {
	for _, tc := range []struct {
		mtu, labels, payload int
		want                 float64
	}{{1500, 0, 1472, 95.709}, {1500, 1, 1472, 95.460}, {1496, 1, 1468, 95.449}} {
		c, err := MPLSCeiling(units.BitRate(100e6), tc.mtu, tc.labels, tc.payload, "udp")
		if err != nil || math.Abs(c.Goodput/1e6-tc.want) > 0.0006 {
			t.Errorf("MTU %d, %d labels, UDP %d: %.4f Mbit/s (%v), want %.3f", tc.mtu, tc.labels, tc.payload, c.Goodput/1e6, err, tc.want)
		}
	}
}

// A test from a host to itself runs over its loopback and has no ceiling
// (labrun's TestLoopbackTarget: it goes to 127.0.0.1).
func TestLoopbackPoint(t *testing.T) {
	lab, err := labfile.Parse("l.yaml", []byte(labtest.Lab("two-hosts", "l")))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := PathCeiling(lab, "h1", "h1", perf.UDPStream, 1472); ok {
		t.Error("a loopback test has a ceiling")
	}
	if c, ok := PathCeiling(lab, "h1", "h2", perf.UDPStream, 1472); !ok || math.Abs(c/1e6-95.709) > 0.001 {
		t.Errorf("h1 -> h2 ceiling %.3f", c/1e6)
	}
}
