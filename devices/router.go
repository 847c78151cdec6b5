package devices

import (
	"fmt"
	"net/netip"
	"slices"

	"github.com/atmlab/atmlab/emulator"
	"github.com/atmlab/atmlab/emulator/atm"
	"github.com/atmlab/atmlab/emulator/router"
	"github.com/atmlab/atmlab/topologies"
)

// RouterQueue is a router interface's output queue, in frames: Linux's
// default txqueuelen. A router feeding a slower link queues at most this
// much and counts the rest as drops.
const RouterQueue = 1000

// routerUnit builds IP/MPLS routers: an interface (port) per link, behind
// an ATM adapter on an ATM link, and, once every link is built, routes and
// label bindings.
type routerUnit struct{}

type ipRouter struct {
	named
	quiet
	node *topologies.Node
	r    *router.Router
}

// build makes the routers with their interfaces; routers whose cost says
// shared CPU share one.
func (routerUnit) build(b *builder, nodes []*topologies.Node) []Device {
	var out []Device
	var shared *router.CPU
	for _, node := range nodes {
		c := node.Router.Cost
		cfg := router.Config{MPLS: node.MPLS, PipeTTL: node.Router.PipeTTL, ExplicitNull: node.Router.ExplicitNull,
			Cost: router.Cost{IP: c.IP, Push: c.Push, Swap: c.Swap, Pop: c.Pop, PerByte: c.PerByte}}
		switch {
		case c.SharedCPU:
			if shared == nil {
				shared = router.NewCPU(b.on(node.Name), c.Queue)
			}
			cfg.CPU = shared
		case cfg.Cost != (router.Cost{}):
			cfg.CPU = router.NewCPU(b.on(node.Name), c.Queue)
		}
		r := router.New(b.on(node.Name), node.Name, cfg)
		for _, i := range node.Interfaces {
			r.AddIface(i.Name, [6]byte(b.lab.MAC(topologies.Endpoint{Node: node.Name, Port: i.Name})), i.IPv4, i.MTU)
		}
		out = append(out, &ipRouter{named: named(node.Name), node: node, r: r})
	}
	return out
}

// etherPort is the router's interface (Resolve gave it one per link).
func (d *ipRouter) etherPort(_ *builder, name string) emulator.Port { return d.iface(name) }

// cellEnd puts an ATM adapter with the interface's PVCs in front of the
// router's interface, as a host's (Classical IP over ATM, ATMARP answered
// per VC); labelled packets cross it as LLC/SNAP routed PDUs of EtherType
// 0x8847 (RFC 2684). Its ring of PDUs is the interface's txqueuelen, as
// on Ethernet (RouterQueue).
func (d *ipRouter) cellEnd(b *builder, l *topologies.Link, e topologies.Endpoint) (atm.CellReceiver, func(*atm.CellLink)) {
	_, aal, encap := l.ATM.Layers()
	i, ti := d.iface(e.Port), d.node.Interface(e.Port)
	a := atm.NewAdapter(b.on(e.Node), atm.AdapterConfig{
		AAL: aal, Encap: encap, VCs: vcs(ti), PCR: l.ATM.PCR,
		Ring: RouterQueue, MaxSDU: ti.MTU + encap.Overhead(), HostMAC: i.MAC,
	}, i)
	i.SetTX(a)
	b.n.Ports = append(b.n.Ports, i)
	return a, a.Attach
}

// iface returns the router's interface name.
func (d *ipRouter) iface(name string) *router.Iface {
	for _, i := range d.r.Ifaces() {
		if i.PortName() == d.Name()+":"+name {
			return i
		}
	}
	panic("devices: router " + d.Name() + " has no interface " + name + " (a programming fault: Resolve gives a router an interface per link)")
}

// queue is the interface's txqueuelen.
func (d *ipRouter) queue() (frames, bytes int) { return RouterQueue, 0 }

// finish installs the routes and labels.
func (routerUnit) finish(b *builder, devs []Device) {
	routers := map[string]*router.Router{}
	for _, d := range devs {
		routers[d.Name()] = d.(*ipRouter).r
	}
	routeAndBind(b.lab, routers)
}

// routeAndBind installs each router's routes (the lab's, or shortest paths
// when it gives none) and, on MPLS routers, the label bindings LDP would
// distribute: a label per router and route prefix (FEC), implicit null (or
// explicit null) for the FECs a router is the egress of, swap entries toward
// the next hop's label, and pushes at the ingress.
func routeAndBind(lab *topologies.Lab, routers map[string]*router.Router) {
	all := sortedRouters(routers)
	owner := map[netip.Addr]*router.Router{}
	var subnets []netip.Prefix
	for _, node := range lab.Nodes {
		for _, i := range node.Interfaces {
			if i.IPv4.IsValid() && !slices.Contains(subnets, i.IPv4.Masked()) {
				subnets = append(subnets, i.IPv4.Masked())
			}
			if r := routers[node.Name]; r != nil {
				owner[i.IPv4.Addr()] = r
			}
		}
	}
	for _, node := range lab.Nodes {
		r := routers[node.Name]
		if r == nil {
			continue
		}
		if len(node.Routes) > 0 {
			for _, rt := range node.Routes {
				iface := ifaceOn(r, rt.Via)
				if iface == nil {
					panic(fmt.Sprintf("devices: %s:%d: router %s: gateway %s is on none of its subnets (a programming fault: Resolve checks every gateway)", lab.File, rt.Line, node.Name, rt.Via))
				}
				r.AddRoute(router.Route{Prefix: rt.To, Via: rt.Via, Iface: iface})
			}
			continue
		}
		for _, p := range subnets {
			if via, ok := firstHop(r, p, all); ok {
				r.AddRoute(router.Route{Prefix: p, Via: via, Iface: ifaceOn(r, via)})
			}
		}
	}
	bind(all, owner)
}

// bind distributes labels (see routeAndBind).
func bind(all []*router.Router, owner map[netip.Addr]*router.Router) {
	type key struct {
		r   *router.Router
		fec netip.Prefix
	}
	local := map[key]uint32{} // the label a router asks its upstream to use for a FEC
	for _, r := range all {
		if !r.Config().MPLS {
			continue
		}
		egress := uint32(router.ImplicitNull)
		if r.Config().ExplicitNull {
			egress = router.ExplicitNull
		}
		next := uint32(router.FirstLabel)
		for _, rt := range r.Routes() {
			if !rt.Via.IsValid() {
				local[key{r, rt.Prefix}] = egress
				continue
			}
			local[key{r, rt.Prefix}] = next
			next++
		}
	}
	for k, in := range local {
		r, fec := k.r, k.fec
		rt, _ := r.Route(fec)
		if !rt.Via.IsValid() {
			continue // the egress: implicit null is never sent, explicit null pops unbound
		}
		out, labelled := local[key{owner[rt.Via], fec}]
		pop := !labelled || out == router.ImplicitNull
		r.Bind(in, router.ILM{Pop: pop, Out: out, Via: rt.Via, Iface: rt.Iface})
		if !pop {
			r.Push(fec, out)
		}
	}
}

// firstHop returns the address of the neighbour a router sends packets for
// p to, along the fewest routers; false if p is connected or unreachable.
func firstHop(r *router.Router, p netip.Prefix, all []*router.Router) (netip.Addr, bool) {
	if connected(r, p) {
		return netip.Addr{}, false
	}
	type step struct {
		r   *router.Router
		via netip.Addr // r's first hop's address
	}
	seen := map[*router.Router]bool{r: true}
	queue := []step{{r, netip.Addr{}}}
	for len(queue) > 0 {
		cur := queue[0]
		queue = queue[1:]
		for _, n := range all {
			if seen[n] {
				continue
			}
			addr, ok := neighbour(cur.r, n)
			if !ok {
				continue
			}
			seen[n] = true
			via := cur.via
			if !via.IsValid() {
				via = addr
			}
			if connected(n, p) {
				return via, true
			}
			queue = append(queue, step{n, via})
		}
	}
	return netip.Addr{}, false
}

// neighbour returns n's address on a subnet it shares with r.
func neighbour(r, n *router.Router) (netip.Addr, bool) {
	for _, a := range r.Ifaces() {
		for _, b := range n.Ifaces() {
			if a.Addr.Masked() == b.Addr.Masked() {
				return b.Addr.Addr(), true
			}
		}
	}
	return netip.Addr{}, false
}

func connected(r *router.Router, p netip.Prefix) bool {
	for _, i := range r.Ifaces() {
		if i.Addr.Masked() == p {
			return true
		}
	}
	return false
}

// ifaceOn returns r's interface whose subnet holds a.
func ifaceOn(r *router.Router, a netip.Addr) *router.Iface {
	for _, i := range r.Ifaces() {
		if i.Addr.Contains(a) {
			return i
		}
	}
	return nil
}

// sortedRouters returns the routers by name, for reproducible choices.
func sortedRouters(routers map[string]*router.Router) []*router.Router {
	var names []string
	for n := range routers {
		names = append(names, n)
	}
	slices.Sort(names)
	out := make([]*router.Router, len(names))
	for i, n := range names {
		out[i] = routers[n]
	}
	return out
}
