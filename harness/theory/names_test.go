package theory

import (
	"testing"

	"github.com/atmlab/atmlab/topologies/labfile"
)

// A path is named by its hosts and what its links are, as a student reads
// them: the PHY, AAL and encapsulation of an ATM link, an Ethernet link's
// rate (both where they differ).
func TestPathName(t *testing.T) {
	lab, err := labfile.Parse("p.yaml", []byte(`name: p
topology:
  nodes:
    h1: {kind: host, ipv4: 10.0.0.1/24}
    h2: {kind: host, ipv4: 10.0.0.2/24}
    h3: {kind: host, ipv4: 10.0.0.3/24}
    sw1: {kind: switch}
    atm1: {kind: atm-switch}
  links:
    - {endpoints: ["h1:eth0", "atm1:p1"], atm: {phy: oc3, aal: aal34, encap: vcmux}}
    - {endpoints: ["h2:eth0", "atm1:p2"], atm: {phy: oc3, aal: aal34, encap: vcmux}}
    - {endpoints: ["h3:eth0", "sw1:p1"], ethernet: {rate: 100M}}
`))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range [][3]string{
		{"h1", "h2", "h1 → h2 over OC-3c, AAL3/4, VC-mux"},
		{"h3", "h3", "h3 → h3"},
	} {
		if got := PathName(lab, c[0], c[1]); got != c[2] {
			t.Errorf("%s to %s: %q, want %q", c[0], c[1], got, c[2])
		}
	}
	if got := PathName(lab, "h3", "h1"); got != "h3 → h1 over OC-3c, AAL3/4, VC-mux; 100 Mbit/s Ethernet" {
		t.Errorf("h3 to h1: %q", got)
	}
}
