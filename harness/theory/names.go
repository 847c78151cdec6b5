package theory

import (
	"fmt"
	"slices"
	"strings"

	"github.com/atmlab/atmlab/cells"
	"github.com/atmlab/atmlab/emulator/atm"
	"github.com/atmlab/atmlab/topologies"
)

// phyNames are the PHYs as the literature writes them.
var phyNames = map[string]string{"oc3": "OC-3c", "oc12": "OC-12c", "ds3": "DS3", "e3": "E3", "atm25": "ATM25"}

// LayersName names an ATM path's layers for a title or legend, as a
// student reads them: "OC-3c, AAL5, LLC/SNAP".
func LayersName(phy atm.PHY, aal atm.AAL, encap cells.Encap) string {
	name := phyNames[phy.Name]
	if name == "" {
		name = strings.ToUpper(phy.Name)
	}
	a := "AAL5"
	if aal == atm.AAL34 {
		a = "AAL3/4"
	}
	e := "LLC/SNAP"
	if encap == cells.VCMux {
		e = "VC-mux"
	}
	return name + ", " + a + ", " + e
}

// PathName names what a stream between two hosts of a lab crosses, for a
// plot's title or legend: the links PathCeiling takes the ceiling from,
// each kind once, e.g. "h1 → h2 over OC-3c, AAL5, LLC/SNAP" or
// "h1 → h3 over 100 Mbit/s Ethernet, MPLS". A loopback is "h1 → h1".
func PathName(lab *topologies.Lab, from, to string) string {
	var parts []string
	add := func(s string) {
		if !slices.Contains(parts, s) {
			parts = append(parts, s)
		}
	}
	for _, l := range lab.Links {
		labelled := lab.Node(l.A.Node).MPLS && lab.Node(l.B.Node).MPLS
		core := atmCore(lab, l)
		if core {
			labelled = labelledCore(lab, l)
		}
		if from == to || !labelled && !core && l.A.Node != from && l.B.Node != from && l.A.Node != to && l.B.Node != to {
			continue
		}
		switch {
		case l.ATM != nil && labelled:
			add(LayersName(l.ATM.Layers()) + ", MPLS")
		case l.ATM != nil:
			add(LayersName(l.ATM.Layers()))
		case labelled:
			add(rateName(l.AB.Rate.String()) + " Ethernet, MPLS")
		default:
			rate := rateName(l.AB.Rate.String())
			if l.BA.Rate != l.AB.Rate {
				rate += "/" + rateName(l.BA.Rate.String())
			}
			add(rate + " Ethernet")
		}
	}
	name := from + " → " + to
	if len(parts) > 0 {
		name += " over " + strings.Join(parts, "; ")
	}
	return name
}

// rateName spells "100M" as "100 Mbit/s".
func rateName(r string) string {
	if n := len(r); n > 0 && strings.ContainsAny(r[n-1:], "kMG") {
		return fmt.Sprintf("%s %sbit/s", r[:n-1], r[n-1:])
	}
	return r + " bit/s"
}
