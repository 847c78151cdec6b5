package kinds

import (
	"fmt"
	"net/netip"

	"github.com/atmlab/atmlab/topologies"
)

var limitedBroadcast = netip.AddrFrom4([4]byte{255, 255, 255, 255})

// AddressProblem says why p cannot be an interface's address of a node of
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
func AddressProblem(p netip.Prefix, kind topologies.Kind) string {
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
