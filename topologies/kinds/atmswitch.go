package kinds

import (
	"github.com/atmlab/atmlab/topologies"
	"github.com/atmlab/atmlab/topologies/defaults"
)

// atmSwitchRow: an ATM switch, its ports on ATM links only, relaying PVCs
// by its cross-connects.
var atmSwitchRow = Row{Kind: topologies.KindATMSwitch, Keys: []string{"queue", "discard", "mappings"}, Media: ATMOnly,
	Start: func(n *topologies.Node) { n.ATMSwitch = &topologies.ATMSwitch{} },
	Defaults: func(n *topologies.Node) {
		if n.ATMSwitch.Queue == 0 {
			n.ATMSwitch.Queue = defaults.ATMSwitchQueue
		}
		if n.ATMSwitch.Discard == "" {
			n.ATMSwitch.Discard = defaults.Discard
		}
	}}
