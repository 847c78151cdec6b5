package theory

import (
	"github.com/atmlab/atmlab/harness/perf"
	"github.com/atmlab/atmlab/topologies"
)

// NativeCeiling is the goodput ceiling of a native AAL stream (AAL5_STREAM,
// AAL34_STREAM) of sdu-octet SDUs from one host to another: the SDU alone
// is the CPCS-PDU's payload, with no IP and no encapsulation, so each link
// of the path carries sdu octets in AAL.Cells(sdu) of its PHY's cell slots.
// false when the test is no native stream or the path has no ATM link.
func NativeCeiling(lab *topologies.Lab, from, to, test string, sdu int) (float64, bool) {
	if (test != perf.AAL5Stream && test != perf.AAL34Stream) || sdu <= 0 || from == to {
		return 0, false
	}
	_, links := PathLinks(lab, from, to)
	best, found := 0.0, false
	for _, pl := range links {
		if pl.Link.ATM == nil {
			continue
		}
		phy, aal, _ := pl.Link.ATM.Layers()
		c := phy.CellRate() * float64(8*sdu) / float64(aal.Cells(sdu))
		if !found || c < best {
			best, found = c, true
		}
	}
	return best, found
}
