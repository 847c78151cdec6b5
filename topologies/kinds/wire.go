package kinds

import (
	"gopkg.in/yaml.v3"

	"github.com/atmlab/atmlab/topologies"
	"github.com/atmlab/atmlab/topologies/labyaml"
)

// wireRow: a wire, two Ethernet links joined store and forward.
var wireRow = Row{Kind: topologies.KindWire, Check: func(d *labyaml.Decoder, lab *topologies.Lab, n *topologies.Node) {
	var lines []int
	for _, l := range lab.Links {
		if l.A.Node == n.Name || l.B.Node == n.Name {
			lines = append(lines, l.Line)
		}
	}
	switch {
	case len(lines) > 2:
		d.Errorf(&yaml.Node{Line: lines[2]}, "topology.links", "a third link to wire %s (the others are on lines %d and %d): a wire joins two links; use a switch", n.Name, lines[0], lines[1])
	case len(lines) < 2:
		d.Errorf(&yaml.Node{Line: n.Line}, "topology.nodes."+n.Name, "wire %s has %d of its two links: frames into it would go nowhere; link both its ends or remove it", n.Name, len(lines))
	}
}}
