package kinds

import (
	"gopkg.in/yaml.v3"

	"github.com/atmlab/atmlab/emulator/units"
	"github.com/atmlab/atmlab/topologies"
	"github.com/atmlab/atmlab/topologies/defaults"
	"github.com/atmlab/atmlab/topologies/labyaml"
	"github.com/atmlab/atmlab/topologies/settings"
)

// switchRow: a learning Ethernet switch with an output buffer per port.
var switchRow = Row{Kind: topologies.KindSwitch, Keys: []string{"buffer", "ageing", "cpu"},
	Decode: func(d *labyaml.Decoder, n *topologies.Node) []labyaml.Field {
		return []labyaml.Field{
			{Name: "buffer", Required: false, Decode: func(key string, v *yaml.Node) { DecodeBuffer(d, key, v, &n.Buffer) }},
			{Name: "ageing", Required: false, Decode: func(key string, v *yaml.Node) { d.DurationIn(key, v, settings.MaxDuration, &n.Ageing) }},
			cpuField(d, n),
		}
	},
	Defaults: func(n *topologies.Node) {
		if n.Buffer == 0 {
			n.Buffer = defaults.SwitchBuffer
		}
	}}

// DecodeBuffer decodes a switch's output buffer per port, a node's or a
// variant's.
func DecodeBuffer(d *labyaml.Decoder, key string, v *yaml.Node, into *units.Size) {
	labyaml.Parsed(d, key, v, settings.ParseBuffer, into)
}
