package topologies

import (
	"fmt"
	"net/netip"

	"github.com/atmlab/atmlab/emulator"
	"github.com/atmlab/atmlab/emulator/atm"
	"github.com/atmlab/atmlab/emulator/sched"
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
	lab      *Lab
	s        *sched.Scheduler
	n        *Network
	switches map[string]*atm.Switch
	swPorts  map[Endpoint]*atm.SwitchPort
	vcs      map[Endpoint][]atm.VC // each host end's VCs
	nextVCI  map[*Link]int
}

// buildATM builds the ATM part of a lab: each atm-switch, the PVCs (the
// mappings given, or one between every two hosts the switches join), an
// adapter per host interface on an ATM link, and the cell links.
func buildATM(lab *Lab, s *sched.Scheduler, n *Network) error {
	b := &atmBuild{lab: lab, s: s, n: n, switches: map[string]*atm.Switch{}, swPorts: map[Endpoint]*atm.SwitchPort{},
		vcs: map[Endpoint][]atm.VC{}, nextVCI: map[*Link]int{}}
	explicit := false
	for _, node := range lab.Nodes {
		if node.Kind != KindATMSwitch {
			continue
		}
		sw := atm.NewSwitch(s, node.Name, atm.SwitchConfig{QueueCells: node.ATMSwitch.Queue, Discard: discard(node.ATMSwitch.Discard)})
		b.switches[node.Name] = sw
		n.ATMSwitches = append(n.ATMSwitches, sw)
		explicit = explicit || len(node.ATMSwitch.Mappings) > 0
	}
	var links []*Link
	for _, l := range lab.Links {
		if l.ATM == nil {
			continue
		}
		links = append(links, l)
		for _, e := range []Endpoint{l.A, l.B} {
			if sw := b.switches[e.Node]; sw != nil {
				b.swPorts[e] = sw.AddPort(e.String())
			}
		}
		if b.isHost(l.A) && b.isHost(l.B) { // a point-to-point PVC
			vc := atm.VC{VPI: uint16(l.ATM.VPI), VCI: uint16(l.ATM.VCI)}
			b.vcs[l.A], b.vcs[l.B] = []atm.VC{vc}, []atm.VC{vc}
		}
	}
	if explicit {
		b.mapped()
	} else if err := b.autoPVCs(links); err != nil {
		return err
	}
	for _, l := range links {
		if err := b.link(l); err != nil {
			return err
		}
	}
	return nil
}

func (b *atmBuild) isHost(e Endpoint) bool { return b.lab.Node(e.Node).Kind == KindHost }

// mapped installs the PVCs the lab's mappings give; each host then has its
// link's VPI/VCI as its one PVC.
func (b *atmBuild) mapped() {
	for _, node := range b.lab.Nodes {
		if node.ATMSwitch == nil {
			continue
		}
		sw := b.switches[node.Name]
		for _, m := range node.ATMSwitch.Mappings {
			from, to := b.swPorts[Endpoint{node.Name, m.From.Port}], b.swPorts[Endpoint{node.Name, m.To.Port}]
			if m.From.VCI < 0 {
				sw.MapVP(from, uint16(m.From.VPI), to, uint16(m.To.VPI))
				sw.MapVP(to, uint16(m.To.VPI), from, uint16(m.From.VPI))
				continue
			}
			sw.MapVC(from, uint16(m.From.VPI), uint16(m.From.VCI), to, uint16(m.To.VPI), uint16(m.To.VCI))
			sw.MapVC(to, uint16(m.To.VPI), uint16(m.To.VCI), from, uint16(m.From.VPI), uint16(m.From.VCI))
		}
	}
	for e := range b.hostEnds() {
		l := b.lab.LinkOf(e)
		b.vcs[e] = []atm.VC{{VPI: uint16(l.ATM.VPI), VCI: uint16(l.ATM.VCI)}}
	}
}

// hostEnds returns the host interfaces attached to atm-switches.
func (b *atmBuild) hostEnds() map[Endpoint]Endpoint {
	ends := map[Endpoint]Endpoint{} // host end -> switch end
	for _, l := range b.lab.Links {
		if l.ATM == nil {
			continue
		}
		if b.isHost(l.A) && b.switches[l.B.Node] != nil {
			ends[l.A] = l.B
		} else if b.isHost(l.B) && b.switches[l.A.Node] != nil {
			ends[l.B] = l.A
		}
	}
	return ends
}

// autoPVCs sets up a duplex PVC between every two hosts that atm-switches
// join, along the shortest path of switches. Each link hands out VCIs from
// its atm.vci upwards on its atm.vpi; each host's adapter learns which VC
// leads to which address, for ATMARP.
func (b *atmBuild) autoPVCs(links []*Link) error {
	ends := b.hostEnds()
	var hosts []Endpoint
	for _, node := range b.lab.Nodes {
		for _, i := range node.Interfaces {
			if _, ok := ends[Endpoint{node.Name, i.Name}]; ok {
				hosts = append(hosts, Endpoint{node.Name, i.Name})
			}
		}
	}
	for i, h1 := range hosts {
		for _, h2 := range hosts[i+1:] {
			a1, a2 := b.addr(h1), b.addr(h2)
			if !a1.IsValid() || !a2.IsValid() {
				continue
			}
			path := b.path(ends[h1], ends[h2], links)
			if path == nil {
				continue // switches not joined: no PVC, as on hardware
			}
			l1, l2 := b.lab.LinkOf(h1), b.lab.LinkOf(h2)
			if l1.ATM.AAL != l2.ATM.AAL || l1.ATM.Encap != l2.ATM.Encap {
				return fmt.Errorf("%s:%d: %s and %s would share a PVC but their links' aal/encap differ (%s/%s and %s/%s); make them equal",
					b.lab.File, l2.Line, h1, h2, l1.ATM.AAL, l1.ATM.Encap, l2.ATM.AAL, l2.ATM.Encap)
			}
			// hops: h1's link, the switch-to-switch links, h2's link.
			hops := append(append([]*Link{l1}, path...), l2)
			vc := make([]atm.VC, len(hops))
			for k, l := range hops {
				vci := b.nextVCI[l]
				if vci == 0 {
					vci = l.ATM.VCI
				}
				if vci > 65535 {
					return fmt.Errorf("%s:%d: link %s-%s has run out of VCIs for automatic PVCs", b.lab.File, l.Line, l.A, l.B)
				}
				b.nextVCI[l] = vci + 1
				vc[k] = atm.VC{VPI: uint16(l.ATM.VPI), VCI: uint16(vci)}
			}
			// At each switch the PVC enters on hop k and leaves on hop k+1.
			at := ends[h1]
			for k := 0; k+1 < len(hops); k++ {
				in := at
				out := b.switchEnd(hops[k+1], at.Node)
				sw := b.switches[at.Node]
				pin, pout := b.swPorts[in], b.swPorts[out]
				sw.MapVC(pin, vc[k].VPI, vc[k].VCI, pout, vc[k+1].VPI, vc[k+1].VCI)
				sw.MapVC(pout, vc[k+1].VPI, vc[k+1].VCI, pin, vc[k].VPI, vc[k].VCI)
				if k+2 < len(hops) {
					at = otherEnd(hops[k+1], out)
				}
			}
			first, last := vc[0], vc[len(vc)-1]
			first.Peer, last.Peer = a2, a1
			b.vcs[h1] = append(b.vcs[h1], first)
			b.vcs[h2] = append(b.vcs[h2], last)
		}
	}
	return nil
}

// switchEnd returns link l's endpoint on switch node sw.
func (b *atmBuild) switchEnd(l *Link, sw string) Endpoint {
	if l.A.Node == sw {
		return l.A
	}
	return l.B
}

func otherEnd(l *Link, e Endpoint) Endpoint {
	if l.A == e {
		return l.B
	}
	return l.A
}

// path returns the switch-to-switch links from switch port from to switch
// port to (breadth first: fewest hops), or nil if none join them.
func (b *atmBuild) path(from, to Endpoint, links []*Link) []*Link {
	if from.Node == to.Node {
		return []*Link{}
	}
	prev := map[string]*Link{from.Node: nil}
	queue := []string{from.Node}
	for len(queue) > 0 {
		cur := queue[0]
		queue = queue[1:]
		for _, l := range links {
			if b.switches[l.A.Node] == nil || b.switches[l.B.Node] == nil {
				continue
			}
			var next string
			switch cur {
			case l.A.Node:
				next = l.B.Node
			case l.B.Node:
				next = l.A.Node
			default:
				continue
			}
			if _, seen := prev[next]; seen {
				continue
			}
			prev[next] = l
			if next == to.Node {
				var p []*Link
				for n := next; prev[n] != nil; {
					l := prev[n]
					p = append([]*Link{l}, p...)
					if l.A.Node == n {
						n = l.B.Node
					} else {
						n = l.A.Node
					}
				}
				return p
			}
			queue = append(queue, next)
		}
	}
	return nil
}

// addr returns a host interface's IPv4 address, if it has one.
func (b *atmBuild) addr(e Endpoint) netip.Addr {
	if i := b.lab.Node(e.Node).Interface(e.Port); i != nil && i.IPv4.IsValid() {
		return i.IPv4.Addr()
	}
	return netip.Addr{}
}

// link builds both directions of an ATM link and what sits at its ends.
func (b *atmBuild) link(l *Link) error {
	phy, aal, encap := Layers(l.ATM)
	ends := [2]Endpoint{l.A, l.B}
	dirs := [2]Direction{l.AB, l.BA}
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
			AAL: aal, Encap: encap, VCs: b.vcs[e], PCR: l.ATM.PCR,
			Ring: NICRing, MaxSDU: iface.MTU + encap.Overhead(), HostMAC: [6]byte(b.lab.MAC(e)),
		}, hp)
		hp.SetTX(adapters[i])
		rx[i] = adapters[i]
		b.n.Ports = append(b.n.Ports, hp)
	}
	nl := &NetLink{Link: l, ATM: &ATMLink{AAL: aal, VCMux: l.ATM.Encap == VCMux}}
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
		pdus.SunATM = l.ATM.Encap == VCMux
		nl.ATM.pduTaps = append(nl.ATM.pduTaps, pdus)
		nl.ATM.cellTaps = append(nl.ATM.cellTaps, cl.NewTap(true, byte(i)))
	}
	b.n.Links = append(b.n.Links, nl)
	return nil
}
