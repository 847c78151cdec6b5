package devices

import (
	"github.com/atmlab/atmlab/emulator"
	"github.com/atmlab/atmlab/emulator/atm"
	"github.com/atmlab/atmlab/topologies"
)

// NICRing is the transmit ring of an emulated host NIC, in frames: enough
// that the NIC never idles between frames the kernel hands over, small
// enough that the host's own queues hold any excess (docs/design.md, modelling rule 4).
const NICRing = 64

// hostUnit builds hosts: a HostPort per interface, whose TAP side the
// kernel package (or a test) attaches; on an ATM link, an adapter in front
// of it.
type hostUnit struct{}

type host struct {
	named
	quiet
	node  *topologies.Node
	ports map[string]*emulator.HostPort // by interface
}

func (hostUnit) build(b *builder, nodes []*topologies.Node) []Device {
	var out []Device
	for _, node := range nodes {
		h := &host{named: named(node.Name), node: node, ports: map[string]*emulator.HostPort{}}
		for _, i := range node.Interfaces {
			hp := &emulator.HostPort{Name: node.Name + ":" + i.Name, CPU: frameCPU(node.CPU, b.on(node.Name))}
			b.n.Hosts[hp.Name] = hp
			h.ports[i.Name] = hp
		}
		out = append(out, h)
	}
	return out
}

// etherPort is the interface's port (Resolve gave the host an interface
// for each of its links).
func (h *host) etherPort(b *builder, name string) emulator.Port { return h.ports[name] }

// queue is the NIC's transmit ring.
func (h *host) queue() (frames, bytes int) { return NICRing, 0 }

// cellEnd puts an adapter (Classical IP over ATM) with the interface's
// PVCs in front of the host's port.
func (h *host) cellEnd(b *builder, l *topologies.Link, e topologies.Endpoint) (atm.CellReceiver, func(*atm.CellLink)) {
	_, aal, encap := l.ATM.Layers()
	hp := h.ports[e.Port]
	iface := h.node.Interface(e.Port)
	a := atm.NewAdapter(b.on(e.Node), atm.AdapterConfig{
		AAL: aal, Encap: encap, VCs: vcs(iface), PCR: l.ATM.PCR,
		Ring: NICRing, MaxSDU: iface.MTU + encap.Overhead(), HostMAC: [6]byte(b.lab.MAC(e)),
	}, hp)
	hp.SetTX(a)
	b.n.Ports = append(b.n.Ports, hp)
	return a, a.Attach
}

// vcs returns a host interface's PVCs as its adapter takes them.
func vcs(i *topologies.Interface) []atm.VC {
	var out []atm.VC
	for _, vc := range i.VCs {
		out = append(out, atm.VC{VPI: uint16(vc.VPI), VCI: uint16(vc.VCI), Peer: vc.Peer, Native: vc.Native})
	}
	return out
}
