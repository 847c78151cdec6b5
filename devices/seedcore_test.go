package devices

import (
	"testing"

	"github.com/atmlab/atmlab/emulator/sched"
	"github.com/atmlab/atmlab/topologies/labfile"
)

// TestGNS3ATMCoreSwitchesInTrains: gns3-mpls's ls1010 cross-connects each
// subnet's two ports, so no output is fed by two inputs and every port
// hands its cells on in trains. A planned mesh of PVCs between all eight
// interfaces made every port step cell by cell, 1.8 times the emulator's
// CPU a packet in real time.
func TestGNS3ATMCoreSwitchesInTrains(t *testing.T) {
	lab, err := labfile.Load("../topologies/gns3-mpls.yaml")
	if err != nil {
		t.Fatal(err)
	}
	n := Build(lab, sched.New())
	sw, ok := n.Device("ls1010").(*atmSwitch)
	if !ok || len(sw.ports) != 8 {
		t.Fatalf("ls1010: %T with %d ports", n.Device("ls1010"), len(sw.ports))
	}
	for name, p := range sw.ports {
		if !p.AcceptsTrains() {
			t.Errorf("ls1010 port %s steps cell by cell", name)
		}
	}
}
