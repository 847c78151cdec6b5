package kinds

import (
	"github.com/atmlab/atmlab/topologies"
	"github.com/atmlab/atmlab/topologies/defaults"
)

// switchRow: a learning Ethernet switch with an output buffer per port.
var switchRow = Row{Kind: topologies.KindSwitch, Keys: []string{"buffer", "ageing", "cpu"}, Defaults: func(n *topologies.Node) {
	if n.Buffer == 0 {
		n.Buffer = defaults.SwitchBuffer
	}
}}
