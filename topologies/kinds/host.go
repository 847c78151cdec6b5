package kinds

import (
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/atmlab/atmlab/topologies"
	"github.com/atmlab/atmlab/topologies/labyaml"
)

// hostRow: a host, a network namespace with its own kernel, on Ethernet
// NICs or ATM adapters (Classical IP).
var hostRow = Row{Kind: topologies.KindHost, Keys: []string{"ipv4", "mtu", "interfaces", "routes", "sysctls", "cpu"}, Media: EthernetAndATM,
	Decode: func(d *labyaml.Decoder, n *topologies.Node) []labyaml.Field {
		return []labyaml.Field{{Name: "sysctls", Required: false, Decode: func(key string, v *yaml.Node) { decodeSysctls(d, key, v, n) }}, cpuField(d, n)}
	}}

// decodeSysctls decodes a host's sysctls: {net.ipv4.tcp_congestion_control:
// cubic}, its namespace's own net.* ones only.
func decodeSysctls(d *labyaml.Decoder, key string, v *yaml.Node, n *topologies.Node) {
	if v.Kind != yaml.MappingNode {
		d.Errorf(v, key, "want a mapping such as {net.ipv4.tcp_congestion_control: cubic}")
		return
	}
	for i := 0; i+1 < len(v.Content); i += 2 {
		k, val := v.Content[i], v.Content[i+1]
		if !strings.HasPrefix(k.Value, "net.") || strings.ContainsAny(k.Value, "/ ") {
			d.Errorf(k, key+"."+k.Value, "only the namespace's own net.* sysctls can be set per host")
			continue
		}
		if s, ok := d.Scalar(key+"."+k.Value, val); ok {
			n.Sysctls = append(n.Sysctls, topologies.Sysctl{Key: k.Value, Value: s, Line: k.Line})
		}
	}
}
