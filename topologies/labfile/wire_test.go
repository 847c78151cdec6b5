package labfile

import (
	"strings"
	"testing"

	"github.com/atmlab/atmlab/topologies"
)

// A wire joins two Ethernet links: a third, or a missing one, is an error
// at its line, as is an ATM link or a key of another kind.
func TestWireLab(t *testing.T) {
	lab, err := Parse("wired.yaml", []byte(`name: wired
topology:
  nodes:
    h1: {kind: host, ipv4: 10.0.0.1/24}
    h2: {kind: host, ipv4: 10.0.0.2/24}
    w1: {kind: wire}
  links:
    - {endpoints: ["h1:eth0", "w1:a"], ethernet: {rate: 100M}}
    - {endpoints: ["w1:b", "h2:eth0"], ethernet: {rate: 10M}}
`))
	if err != nil {
		t.Fatal(err)
	}
	if w := lab.Node("w1"); w.Kind != topologies.KindWire || len(w.Interfaces) != 0 {
		t.Errorf("w1 = %+v", w)
	}
	_, err = Parse("bad.yaml", []byte(`name: bad
topology:
  nodes:
    h1: {kind: host, ipv4: 10.0.0.1/24}
    h2: {kind: host, ipv4: 10.0.0.2/24}
    h3: {kind: host, ipv4: 10.0.0.3/24}
    h4: {kind: host, ipv4: 10.0.0.4/24}
    w1: {kind: wire, buffer: 64k}
    w2: {kind: wire}
    w3: {kind: wire}
  links:
    - {endpoints: ["h1:eth0", "w1:a"]}
    - {endpoints: ["h2:eth0", "w1:b"]}
    - {endpoints: ["h3:eth0", "w1:c"]}
    - {endpoints: ["h4:eth0", "w2:a"], atm: {phy: oc3}}
`))
	for _, want := range []string{
		"bad.yaml:8: topology.nodes.w1.buffer: unknown key",
		"bad.yaml:14: topology.links: a third link to wire w1 (the others are on lines 12 and 13): a wire joins two links; use a switch",
		"bad.yaml:15: topology.links: an ATM link joins hosts, atm-switches and routers; w2:a is a wire",
		"bad.yaml:9: topology.nodes.w2: wire w2 has 1 of its two links: frames into it would go nowhere; link both its ends or remove it",
		"bad.yaml:10: topology.nodes.w3: wire w3 has 0 of its two links",
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("errors lack %q: %v", want, err)
		}
	}
}
