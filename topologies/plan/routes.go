package plan

import (
	"net/netip"

	"github.com/atmlab/atmlab/topologies"
)

// DefaultRoutes gives a host without routes a default route through a
// router on one of its subnets, if there is one: the first router, in file
// order, with an address in the subnet of the host's first interface that
// has one. Routers' addresses are indexed by subnet, one table per prefix
// length the hosts use, so that this stays linear.
func DefaultRoutes(lab *topologies.Lab) {
	var routerAddrs []netip.Addr
	for _, r := range lab.Nodes {
		if r.Kind != topologies.KindRouter {
			continue
		}
		for _, ri := range r.Interfaces {
			if ri.IPv4.IsValid() {
				routerAddrs = append(routerAddrs, ri.IPv4.Addr())
			}
		}
	}
	bySubnet := map[int]map[netip.Prefix]netip.Addr{} // prefix length -> subnet -> first router address
	for _, h := range lab.Nodes {
		if h.Kind != topologies.KindHost || len(h.Routes) > 0 {
			continue
		}
		for _, hi := range h.Interfaces {
			if !hi.IPv4.IsValid() {
				continue
			}
			bits := hi.IPv4.Bits()
			table, ok := bySubnet[bits]
			if !ok {
				table = map[netip.Prefix]netip.Addr{}
				for _, a := range routerAddrs {
					p := netip.PrefixFrom(a, bits).Masked()
					if _, dup := table[p]; !dup {
						table[p] = a
					}
				}
				bySubnet[bits] = table
			}
			if via, ok := table[hi.IPv4.Masked()]; ok {
				h.Routes = append(h.Routes, topologies.Route{To: netip.MustParsePrefix("0.0.0.0/0"), Via: via, Line: hi.Line})
				break
			}
		}
	}
}
