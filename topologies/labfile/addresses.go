package labfile

import (
	"net/netip"

	"gopkg.in/yaml.v3"

	"github.com/atmlab/atmlab/topologies"
	"github.com/atmlab/atmlab/topologies/kinds"
)

// address decodes an interface's address, address/prefix length, and
// refuses what no interface can use: a host's or router's address must be
// one unicast address it can send from and be reached at (kinds.AddressProblem).
func (d *decoder) address(key string, v *yaml.Node, kind topologies.Kind) netip.Prefix {
	p := d.prefix(key, v)
	if p.IsValid() {
		if msg := kinds.AddressProblem(p, kind); msg != "" {
			d.Errorf(v, key, "%s: %s", p, msg)
		}
	}
	return p
}
