package theory

import (
	"math"
	"testing"

	"github.com/atmlab/atmlab/harness/perf"
	"github.com/atmlab/atmlab/topologies/labfile"
)

// A native AAL stream's ceiling is the SDU's octets over its own cells at
// the PHY's cell rate, with nothing of IP or LLC/SNAP: on OC-3c (149.76
// Mbit/s of cell slots, 353,207.547 cells/s) 9160 octets in 191 AAL5 cells
// and 9161 in 192; AAL3/4 takes 209 for 9160.
func TestNativeCeilingIsTheSDUsCells(t *testing.T) {
	const cellRate = 149.76e6 / 424
	for _, tt := range []struct {
		aal, test  string
		sdu, cells int
	}{
		{"aal5", perf.AAL5Stream, 9160, 191},
		{"aal5", perf.AAL5Stream, 9161, 192},
		{"aal5", perf.AAL5Stream, 952, 20},
		{"aal34", perf.AAL34Stream, 9160, 209},
	} {
		lab, err := labfile.Parse("n.yaml", []byte(`name: n
topology:
  nodes:
    h1: {kind: host, ipv4: 10.0.0.1/24}
    h2: {kind: host, ipv4: 10.0.0.2/24}
    asx: {kind: atm-switch}
  links:
    - {endpoints: ["h1:eth0", "asx:p1"], atm: {phy: oc3, aal: `+tt.aal+`, native: true}}
    - {endpoints: ["h2:eth0", "asx:p2"], atm: {phy: oc3, aal: `+tt.aal+`, native: true}}
`))
		if err != nil {
			t.Fatal(err)
		}
		got, ok := PathCeiling(lab, "h1", "h2", tt.test, tt.sdu)
		want := cellRate * float64(8*tt.sdu) / float64(tt.cells)
		if !ok || math.Abs(got-want) > 1e-6*want {
			t.Errorf("PathCeiling(%s, %d) = %.0f, %v, want %.0f", tt.test, tt.sdu, got, ok, want)
		}
	}
	if _, ok := PathCeiling(nil, "h1", "h1", perf.AAL5RR, 40); ok {
		t.Error("AAL5_RR has a stream ceiling")
	}
}
