package kinds

import (
	"gopkg.in/yaml.v3"

	"github.com/atmlab/atmlab/topologies"
	"github.com/atmlab/atmlab/topologies/defaults"
	"github.com/atmlab/atmlab/topologies/labyaml"
)

// hubRow: a CSMA/CD hub, one shared medium of an 802.3u repeater class.
var hubRow = Row{Kind: topologies.KindHub, Keys: []string{"repeater"},
	Decode: func(d *labyaml.Decoder, n *topologies.Node) []labyaml.Field {
		return []labyaml.Field{{Name: "repeater", Required: false, Decode: func(key string, v *yaml.Node) {
			if s, ok := d.Scalar(key, v); ok {
				if s := topologies.Repeater(s); s != topologies.Class1 && s != topologies.Class2 {
					d.Errorf(v, key, "%q: use class1 or class2 (802.3u repeater classes)", s)
					return
				}
				n.Repeater = topologies.Repeater(s)
			}
		}}}
	},
	Defaults: func(n *topologies.Node) {
		if n.Repeater == "" {
			n.Repeater = defaults.Repeater
		}
	}}
