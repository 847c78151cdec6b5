package labfile

import (
	"strings"
	"testing"
)

// A point-to-point ATM link with native: true gives both hosts a native
// PVC on the VCI after the link's, beside the Classical IP one.
func TestNativeOnPointToPointLinkTakesTheNextVCI(t *testing.T) {
	lab, err := Parse("p2p.yaml", []byte(`
name: p2p
topology:
  nodes:
    h1: {kind: host, ipv4: 10.0.0.1/24}
    h2: {kind: host, ipv4: 10.0.0.2/24}
  links:
    - {endpoints: ["h1:eth0", "h2:eth0"], atm: {vci: 200, native: true}}
`))
	if err != nil {
		t.Fatal(err)
	}
	vcs := lab.Node("h1").Interface("eth0").VCs
	if len(vcs) != 2 || vcs[0].Native || vcs[0].VCI != 200 || !vcs[1].Native || vcs[1].VCI != 201 || vcs[1].Peer.String() != "10.0.0.2" {
		t.Errorf("h1's VCs = %+v, want 0/200 for IP and 0/201 native to 10.0.0.2", vcs)
	}
}

// native: is refused where it cannot be planned, at the link's line: on
// the last VCI of a point-to-point link, and beside switches' mappings;
// a value that is no boolean is refused at its key.
func TestNativeRefusedWhereItCannotBePlanned(t *testing.T) {
	for _, tt := range []struct{ name, links, want string }{
		{"last VCI", `
    - {endpoints: ["h1:eth0", "h2:eth0"], atm: {vci: 65535, native: true}}
    - {endpoints: ["h3:eth0", "a:p1"], atm: {}}
    - {endpoints: ["h4:eth0", "a:p2"], atm: {}}`, "p.yaml:10: topology.links: link h1:eth0-h2:eth0: native: true takes the VCI after"},
		{"mappings", `
    - {endpoints: ["h1:eth0", "h2:eth0"], atm: {}}
    - {endpoints: ["h3:eth0", "a:p1"], atm: {native: true}}
    - {endpoints: ["h4:eth0", "a:p2"], atm: {native: true}}`, "leave out mappings: (or native:)"},
		{"not a boolean", `
    - {endpoints: ["h1:eth0", "h2:eth0"], atm: {}}
    - {endpoints: ["h3:eth0", "a:p1"], atm: {native: maybe}}
    - {endpoints: ["h4:eth0", "a:p2"], atm: {}}`, "native"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("p.yaml", []byte(`name: p
topology:
  nodes:
    h1: {kind: host, ipv4: 10.0.0.1/24}
    h2: {kind: host, ipv4: 10.0.0.2/24}
    h3: {kind: host, ipv4: 10.0.0.3/24}
    h4: {kind: host, ipv4: 10.0.0.4/24}
    a: {kind: atm-switch, mappings: {"p1:0:100": "p2:0:100"}}
  links:`+tt.links+"\n"))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Parse = %v, want an error containing %q", err, tt.want)
			}
		})
	}
}
