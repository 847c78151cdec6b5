package labfile

import (
	"fmt"
	"github.com/atmlab/atmlab/topologies"
	"net/netip"
	"slices"

	"gopkg.in/yaml.v3"
)

// address decodes an interface's address, address/prefix length, and
// refuses what no interface can use: a host's or router's address must be
// one unicast address it can send from and be reached at (addressProblem).
func (d *decoder) address(key string, v *yaml.Node, kind topologies.Kind) netip.Prefix {
	p := d.prefix(key, v)
	if p.IsValid() {
		if msg := addressProblem(p, kind); msg != "" {
			d.Errorf(v, key, "%s: %s", p, msg)
		}
	}
	return p
}

var limitedBroadcast = netip.AddrFrom4([4]byte{255, 255, 255, 255})

// addressProblem says why p cannot be an interface's address of a node of
// kind, or "". Refused: a /0; 0.0.0.0/8 ("this network", RFC 1122, a
// source only while booting); loopback 127/8, which never leaves a host;
// multicast 224/4, a group and no interface; the limited broadcast
// 255.255.255.255; a subnet's own network and broadcast addresses where
// the subnet has them, prefixes up to /30 (a /31 has no such addresses,
// RFC 3021, and a /32 is one address, so every address of both is
// usable); and, on a router, link-local 169.254/16, which routers must
// not forward (RFC 3927). A host may use link-local addresses on its own
// segment, as hosts without DHCP do. 240/4, reserved but routed by
// Linux, is left alone.
func addressProblem(p netip.Prefix, kind topologies.Kind) string {
	a := p.Addr()
	const fix = "give a unicast address such as 10.0.0.1/24"
	switch {
	case p.Bits() == 0:
		return "a /0 is every IPv4 address, not a subnet: give the subnet's prefix length, such as /24"
	case a.As4()[0] == 0:
		return "0.0.0.0/8 is \"this network\" (RFC 1122), no interface's address; " + fix
	case a.IsLoopback():
		return "127.0.0.0/8 is loopback, which never leaves a host (every host has 127.0.0.1 already); " + fix
	case a.IsMulticast():
		return "224.0.0.0/4 is multicast: a group's address, not an interface's; " + fix
	case a == limitedBroadcast:
		return "255.255.255.255 is the limited broadcast address; " + fix
	case kind == topologies.KindRouter && a.IsLinkLocalUnicast():
		return "169.254.0.0/16 is link-local, which routers do not forward (RFC 3927); give the router a subnet such as 10.0.0.254/24"
	case p.Bits() <= 30 && a == p.Masked().Addr():
		return fmt.Sprintf("the network address of subnet %s, no interface's; give one from %s to %s", p.Masked(), p.Masked().Addr().Next(), broadcast(p).Prev())
	case p.Bits() <= 30 && a == broadcast(p):
		return fmt.Sprintf("the broadcast address of subnet %s, no interface's; give one from %s to %s", p.Masked(), p.Masked().Addr().Next(), broadcast(p).Prev())
	}
	return ""
}

// broadcast returns the last address of p's subnet.
func broadcast(p netip.Prefix) netip.Addr {
	b := p.Masked().Addr().As4()
	for i := p.Bits(); i < 32; i++ {
		b[i/8] |= 0x80 >> (i % 8)
	}
	return netip.AddrFrom4(b)
}

// checkRouterSubnets refuses a router with two interfaces on one subnet
// (or on overlapping ones): it could not tell which of them reaches an
// address there. Prefixes nest or are apart, so, sorted by first address
// (the wider first), each overlaps an earlier one only if it overlaps the
// one that reaches furthest.
func (d *decoder) checkRouterSubnets(n *topologies.Node) {
	var ifs []*topologies.Interface
	for _, i := range n.Interfaces {
		if i.IPv4.IsValid() {
			ifs = append(ifs, i)
		}
	}
	slices.SortFunc(ifs, func(a, b *topologies.Interface) int {
		if c := a.IPv4.Masked().Addr().Compare(b.IPv4.Masked().Addr()); c != 0 {
			return c
		}
		return a.IPv4.Bits() - b.IPv4.Bits()
	})
	var widest *topologies.Interface
	for _, i := range ifs {
		if widest != nil && widest.IPv4.Masked().Overlaps(i.IPv4.Masked()) {
			first, second := widest, i
			if second.Line < first.Line {
				first, second = second, first
			}
			on := "one subnet, " + i.IPv4.Masked().String()
			if widest.IPv4.Bits() != i.IPv4.Bits() {
				on = fmt.Sprintf("overlapping subnets, %s and %s", first.IPv4.Masked(), second.IPv4.Masked())
			}
			d.Errorf(&yaml.Node{Line: second.Line}, "topology.nodes."+n.Name+".interfaces",
				"%s (%s) and %s (%s) are on %s: a router's interfaces each need a subnet of their own, or it cannot tell which one reaches an address there; give %s another subnet, or join the two links with a switch",
				first.Name, first.IPv4, second.Name, second.IPv4, on, second.Name)
			continue
		}
		if widest == nil || broadcast(i.IPv4).Compare(broadcast(widest.IPv4)) > 0 {
			widest = i
		}
	}
}
