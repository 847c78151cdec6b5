package devices

import (
	"fmt"
	"net/netip"
	"strings"
	"testing"

	"github.com/atmlab/atmlab/emulator/sched"
	"github.com/atmlab/atmlab/topologies"
	"github.com/atmlab/atmlab/topologies/kinds"
	"github.com/atmlab/atmlab/topologies/labfile"
)

// Build cannot fail on a resolved lab; given what Resolve never makes, it
// panics saying which programming fault it met.
func TestBuildPanicsOnProgrammingFaults(t *testing.T) {
	panics := func(lab *topologies.Lab) (msg string) {
		defer func() { msg = fmt.Sprint(recover()) }()
		Build(lab, sched.New())
		return "no panic"
	}
	toaster := &topologies.Lab{File: "t.yaml", Name: "t", Nodes: []*topologies.Node{{Name: "x1", Kind: "toaster", Line: 4}}}
	if msg := panics(toaster); !strings.Contains(msg, "t.yaml:4: node x1: kind toaster has no unit in the kinds table (a programming fault") {
		t.Errorf("a kind without a unit: %s", msg)
	}
	lab, err := labfile.Parse("r.yaml", []byte(`name: r
topology:
  nodes:
    h1: {kind: host, ipv4: 10.0.0.1/24}
    r1: {kind: router, interfaces: {eth0: {ipv4: 10.0.0.254/24}}, routes: [{to: 10.9.0.0/16, via: 10.0.0.1}]}
  links:
    - {endpoints: ["h1:eth0", "r1:eth0"]}
`))
	if err != nil {
		t.Fatal(err)
	}
	lab.Node("r1").Routes[0].Via = netip.MustParseAddr("10.7.0.1") // what Resolve refuses
	if msg := panics(lab); !strings.Contains(msg, "r.yaml:5: router r1: gateway 10.7.0.1 is on none of its subnets (a programming fault") {
		t.Errorf("an unchecked gateway: %s", msg)
	}
}

// Every row of the one table of kinds has its unit here, and no unit
// builds a kind the table lacks.
func TestEveryKindHasAUnit(t *testing.T) {
	for _, k := range kinds.Table {
		if kindUnits[k.Kind] == nil {
			t.Errorf("kind %s has no unit in kindUnits", k.Kind)
		}
	}
	if len(kindUnits) != len(kinds.Table) {
		t.Errorf("%d units for the table's %d kinds", len(kindUnits), len(kinds.Table))
	}
}
