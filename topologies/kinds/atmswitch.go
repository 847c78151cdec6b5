package kinds

import (
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/atmlab/atmlab/topologies"
	"github.com/atmlab/atmlab/topologies/defaults"
	"github.com/atmlab/atmlab/topologies/labyaml"
)

// atmSwitchRow: an ATM switch, its ports on ATM links only, relaying PVCs
// by its cross-connects.
var atmSwitchRow = Row{Kind: topologies.KindATMSwitch, Keys: []string{"queue", "discard", "mappings"}, Media: ATMOnly,
	Start: func(n *topologies.Node) { n.ATMSwitch = &topologies.ATMSwitch{} },
	Decode: func(d *labyaml.Decoder, n *topologies.Node) []labyaml.Field {
		return []labyaml.Field{
			{Name: "queue", Required: false, Decode: func(key string, v *yaml.Node) { d.IntIn(key, v, 1, 1<<24, &n.ATMSwitch.Queue) }},
			{Name: "discard", Required: false, Decode: func(key string, v *yaml.Node) {
				if s, ok := d.Scalar(key, v); ok {
					switch s := topologies.Discard(s); s {
					case topologies.DiscardNone, topologies.DiscardPPD, topologies.DiscardEPD:
						n.ATMSwitch.Discard = s
					default:
						d.Errorf(v, key, "%q: use none, ppd (partial packet discard) or epd (early packet discard)", s)
					}
				}
			}},
			{Name: "mappings", Required: false, Decode: func(key string, v *yaml.Node) { mappings(d, key, v, n.ATMSwitch) }},
		}
	},
	Defaults: func(n *topologies.Node) {
		if n.ATMSwitch.Queue == 0 {
			n.ATMSwitch.Queue = defaults.ATMSwitchQueue
		}
		if n.ATMSwitch.Discard == "" {
			n.ATMSwitch.Discard = defaults.Discard
		}
	}}

// mappings decodes an atm-switch's PVCs, GNS3's "port:vpi:vci" pairs.
func mappings(d *labyaml.Decoder, path string, n *yaml.Node, sw *topologies.ATMSwitch) {
	if n.Kind != yaml.MappingNode {
		d.Errorf(n, path, "want a mapping such as {\"p1:0:100\": \"p2:0:200\"} (port:vpi:vci, both ways) or {\"p1:1\": \"p2:2\"} (a whole VP)")
		return
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		key := path + "." + k.Value
		from, ok1 := atmAddr(d, key, k)
		s, ok := d.Scalar(key, v)
		if !ok {
			continue
		}
		to, ok2 := atmAddr(d, key, &yaml.Node{Kind: yaml.ScalarNode, Value: s, Line: v.Line})
		if !ok1 || !ok2 {
			continue
		}
		if (from.VCI < 0) != (to.VCI < 0) {
			d.Errorf(k, key, "map a VC (port:vpi:vci) to a VC, or a VP (port:vpi) to a VP")
			continue
		}
		sw.Mappings = append(sw.Mappings, topologies.Mapping{From: from, To: to, Line: k.Line})
	}
}

func atmAddr(d *labyaml.Decoder, key string, v *yaml.Node) (topologies.ATMAddr, bool) {
	parts := strings.Split(v.Value, ":")
	bad := func() (topologies.ATMAddr, bool) {
		d.Errorf(v, key, "%q: write port:vpi:vci (VPI 0-255, VCI 32-65535) or port:vpi", v.Value)
		return topologies.ATMAddr{}, false
	}
	if len(parts) < 2 || len(parts) > 3 || !PortName.MatchString(parts[0]) {
		return bad()
	}
	a := topologies.ATMAddr{Port: parts[0], VCI: -1}
	var err error
	if a.VPI, err = strconv.Atoi(parts[1]); err != nil || a.VPI < 0 || a.VPI > 255 {
		return bad()
	}
	if len(parts) == 3 {
		if a.VCI, err = strconv.Atoi(parts[2]); err != nil || a.VCI < 32 || a.VCI > 65535 {
			return bad()
		}
	}
	return a, true
}
