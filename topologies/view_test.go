package topologies_test

import (
	"encoding/json"
	"testing"

	"github.com/atmlab/atmlab/topologies"
	"github.com/atmlab/atmlab/topologies/labfile"
)

func TestSpec(t *testing.T) {
	lab, err := labfile.Parse("spec.yaml", []byte(`name: spec
topology:
  nodes:
    h1: {kind: host, ipv4: 10.0.0.1/24}
    h2: {kind: host, ipv4: 10.0.0.2/24}
    sw1: {kind: switch}
    atm1: {kind: atm-switch}
    h3: {kind: host, ipv4: 10.1.0.3/24}
    h4: {kind: host, ipv4: 10.1.0.4/24}
  links:
    - {endpoints: ["h1:eth0", "sw1:p1"], ethernet: {rate: 100M}, impair: {delay: 5ms}}
    - {endpoints: ["h2:eth0", "sw1:p2"], ethernet: {rate: 10M}}
    - {endpoints: ["h3:eth0", "atm1:p1"], atm: {phy: oc3, aal: aal5, encap: llc}}
    - {endpoints: ["h4:eth0", "atm1:p2"], atm: {phy: oc3, aal: aal5, encap: llc}}
`))
	if err != nil {
		t.Fatal(err)
	}
	got, err := json.Marshal(lab.View())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s", got)
	s := lab.View()
	if len(s.Nodes) != 6 || len(s.Links) != 4 {
		t.Fatalf("view has %d nodes, %d links; want 6, 4", len(s.Nodes), len(s.Links))
	}
	kinds := map[string]topologies.Kind{}
	for _, n := range s.Nodes {
		kinds[n.Name] = n.Kind
	}
	if kinds["sw1"] != topologies.KindSwitch || kinds["atm1"] != topologies.KindATMSwitch || kinds["h1"] != topologies.KindHost {
		t.Errorf("kinds %v", kinds)
	}
	l := s.Links[0]
	if l.A != "h1:eth0" || l.B != "sw1:p1" || l.AB.Rate != 100e6 || l.AB.Text != "100M" || l.AB.Delay != 5 || l.BA.Delay != 5 {
		t.Errorf("link 0 = %+v", l)
	}
	if s.Links[1].BA.Rate != 10e6 {
		t.Errorf("link 1 = %+v", s.Links[1])
	}
	if a := s.Links[2]; a.PHY != "oc3" || a.AAL != "aal5" || a.Enc != "llc" {
		t.Errorf("atm link = %+v", a)
	}
}
