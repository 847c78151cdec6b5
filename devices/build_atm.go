package devices

import (
	"github.com/atmlab/atmlab/emulator"
	"github.com/atmlab/atmlab/emulator/atm"
	"github.com/atmlab/atmlab/emulator/sched"
	"github.com/atmlab/atmlab/topologies"
)

// ATMLink is a built ATM link: a cell link each way and its capture taps.
type ATMLink struct {
	AB, BA   *atm.CellLink
	pduTaps  []emulator.Tapper
	cellTaps []emulator.Tapper
	AAL      atm.AAL
	VCMux    bool // PDUs are captured as SunATM records (atm.LinkTypeSunATM)
}

// atmBuild wires a lab's ATM links, hosts' adapters and atm-switches.
type atmBuild struct {
	lab     *topologies.Lab
	s       *sched.Scheduler
	n       *Network
	swPorts map[topologies.Endpoint]*atm.SwitchPort
}

// buildATM builds the ATM part of a lab: each atm-switch with the
// cross-connects Resolve planned, an adapter per host interface on an ATM
// link with its PVCs, and the cell links.
func buildATM(lab *topologies.Lab, s *sched.Scheduler, n *Network) {
	b := &atmBuild{lab: lab, s: s, n: n, swPorts: map[topologies.Endpoint]*atm.SwitchPort{}}
	switches := map[string]*atm.Switch{}
	for _, node := range lab.Nodes {
		if node.Kind != topologies.KindATMSwitch {
			continue
		}
		sw := atm.NewSwitch(s, node.Name, atm.SwitchConfig{QueueCells: node.ATMSwitch.Queue, Discard: discard(node.ATMSwitch.Discard)})
		switches[node.Name] = sw
		n.ATMSwitches = append(n.ATMSwitches, sw)
	}
	var links []*topologies.Link
	for _, l := range lab.Links {
		if l.ATM == nil {
			continue
		}
		links = append(links, l)
		for _, e := range []topologies.Endpoint{l.A, l.B} {
			if sw := switches[e.Node]; sw != nil {
				b.swPorts[e] = sw.AddPort(e.String())
			}
		}
	}
	for _, node := range lab.Nodes {
		sw := switches[node.Name]
		if sw == nil {
			continue
		}
		for _, x := range node.ATMSwitch.Cross {
			in, out := b.swPorts[topologies.Endpoint{Node: node.Name, Port: x.In.Port}], b.swPorts[topologies.Endpoint{Node: node.Name, Port: x.Out.Port}]
			if x.In.VCI < 0 {
				sw.MapVP(in, uint16(x.In.VPI), out, uint16(x.Out.VPI))
			} else {
				sw.MapVC(in, uint16(x.In.VPI), uint16(x.In.VCI), out, uint16(x.Out.VPI), uint16(x.Out.VCI))
			}
		}
	}
	for _, l := range links {
		b.link(l)
	}
}

// vcs returns a host interface's PVCs as its adapter takes them.
func vcs(i *topologies.Interface) []atm.VC {
	var out []atm.VC
	for _, vc := range i.VCs {
		out = append(out, atm.VC{VPI: uint16(vc.VPI), VCI: uint16(vc.VCI), Peer: vc.Peer})
	}
	return out
}

// link builds both directions of an ATM link and what sits at its ends.
func (b *atmBuild) link(l *topologies.Link) {
	phy, aal, encap := Layers(l.ATM)
	ends := [2]topologies.Endpoint{l.A, l.B}
	dirs := [2]topologies.Direction{l.AB, l.BA}
	var rx [2]atm.CellReceiver
	var adapters [2]*atm.Adapter
	for i, e := range ends {
		if p := b.swPorts[e]; p != nil {
			rx[i] = p
			continue
		}
		hp := b.n.Hosts[e.String()]
		iface := b.lab.Node(e.Node).Interface(e.Port)
		adapters[i] = atm.NewAdapter(b.s, atm.AdapterConfig{
			AAL: aal, Encap: encap, VCs: vcs(iface), PCR: l.ATM.PCR,
			Ring: NICRing, MaxSDU: iface.MTU + encap.Overhead(), HostMAC: [6]byte(b.lab.MAC(e)),
		}, hp)
		hp.SetTX(adapters[i])
		rx[i] = adapters[i]
		b.n.Ports = append(b.n.Ports, hp)
	}
	nl := &NetLink{Link: l, ATM: &ATMLink{AAL: aal, VCMux: l.ATM.Encap == topologies.VCMux}}
	for i := range 2 {
		im := dirs[i].Impair
		cfg := atm.LinkConfig{PHY: phy, Propagation: l.Propagation, Delay: im.Delay, Jitter: im.Jitter, CLR: im.Loss,
			Limit: im.Limit, Seed: seedOf(b.lab.Seed, ends[i].String())}
		cl := atm.NewCellLink(b.s, cfg, rx[1-i])
		if adapters[i] != nil {
			adapters[i].Attach(cl)
		} else {
			b.swPorts[ends[i]].Attach(cl)
		}
		if i == 0 {
			nl.ATM.AB = cl
		} else {
			nl.ATM.BA = cl
		}
		pdus := cl.NewTap(false, byte(i))
		pdus.SunATM = l.ATM.Encap == topologies.VCMux
		nl.ATM.pduTaps = append(nl.ATM.pduTaps, pdus)
		nl.ATM.cellTaps = append(nl.ATM.cellTaps, cl.NewTap(true, byte(i)))
	}
	b.n.Links = append(b.n.Links, nl)
}
