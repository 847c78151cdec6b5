package kinds

import (
	"github.com/atmlab/atmlab/topologies"
	"github.com/atmlab/atmlab/topologies/defaults"
)

// hubRow: a CSMA/CD hub, one shared medium of an 802.3u repeater class.
var hubRow = Row{Kind: topologies.KindHub, Keys: []string{"repeater"}, Defaults: func(n *topologies.Node) {
	if n.Repeater == "" {
		n.Repeater = defaults.Repeater
	}
}}
