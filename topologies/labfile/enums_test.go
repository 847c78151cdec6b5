package labfile

import (
	"testing"

	"github.com/atmlab/atmlab/cells"
	"github.com/atmlab/atmlab/topologies"
)

// An ATM link's layers come back as the models' values.
func TestATMLayers(t *testing.T) {
	for _, tc := range []struct {
		a     topologies.ATM
		aal   cells.AAL
		encap cells.Encap
	}{
		{topologies.ATM{PHY: "oc3", AAL: topologies.AAL5, Encap: topologies.LLC}, cells.AAL5, cells.LLC},
		{topologies.ATM{PHY: "oc12", AAL: topologies.AAL34, Encap: topologies.VCMux}, cells.AAL34, cells.VCMux},
	} {
		p, aal, encap := tc.a.Layers()
		if p.Name != string(tc.a.PHY) || p.LineRate == 0 || aal != tc.aal || encap != tc.encap {
			t.Errorf("%+v: Layers = %+v %v %v, want %s %v %v", tc.a, p, aal, encap, tc.a.PHY, tc.aal, tc.encap)
		}
	}
}
