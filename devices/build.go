// Package devices builds a resolved lab's emulated network (Build) from the
// models in emulator/..., and changes it while it runs (Network.Set).
// Resolve (package topologies) has checked and planned everything, so
// building cannot fail on input.
package devices

import (
	"fmt"
	"github.com/atmlab/atmlab/topologies"
	"hash/fnv"

	"github.com/atmlab/atmlab/cells"
	"github.com/atmlab/atmlab/emulator"
	"github.com/atmlab/atmlab/emulator/atm"
	"github.com/atmlab/atmlab/emulator/ether"
	"github.com/atmlab/atmlab/emulator/router"
	"github.com/atmlab/atmlab/emulator/sched"
	"github.com/atmlab/atmlab/emulator/units"
	"github.com/atmlab/atmlab/wireshark"
)

// NICRing is the transmit ring of an emulated host NIC, in frames: enough
// that the NIC never idles between frames the kernel hands over, small
// enough that the host's own queues hold any excess (docs/design.md, modelling rule 4).
const NICRing = 64

// RouterQueue is a router interface's output queue, in frames: Linux's
// default txqueuelen. A router feeding a slower link queues at most this
// much and counts the rest as drops.
const RouterQueue = 1000

// Network is a lab's emulated part: every port and link, built on one
// scheduler. Hosts' ports are HostPorts whose TAP side the kernel package
// (or a test) attaches.
type Network struct {
	Sched       *sched.Scheduler
	Hosts       map[string]*emulator.HostPort // by "node:interface"
	Ports       []emulator.Port               // every port, in a stable order
	Links       []*NetLink
	Switches    []*ether.Switch
	Hubs        []*ether.Hub
	ATMSwitches []*atm.Switch
	Routers     map[string]*router.Router
	Lab         *topologies.Lab // what it was built from: atmlab set --reset returns to it
}

// NetLink is a built link: its two channels, AB carrying what A sends, or
// for a link to a hub the hub's station at its end, or an ATM link's cells.
type NetLink struct {
	Link    *topologies.Link
	AB, BA  *emulator.Channel
	Station *ether.Station
	ATM     *ATMLink
}

// pcap link types of captures.
const (
	LinkTypeEthernet = 1
	LinkTypeERF      = atm.LinkTypeERF
	LinkTypeSunATM   = atm.LinkTypeSunATM
)

// Tappers returns what a capture of the link listens to, both directions,
// and the pcap link type of what they hand over. On an ATM link the capture
// holds AAL5 PDUs as ERF records (SunATM records on a VC-mux link, which
// Wireshark decodes to IP), or with cellMode every cell (an AAL3/4 link is
// always captured as cells: ERF's PDU record is AAL5's).
func (l *NetLink) Tappers(cellMode bool) ([]emulator.Tapper, int, error) {
	switch {
	case l.ATM != nil && (cellMode || l.ATM.AAL == atm.AAL34):
		return l.ATM.cellTaps, LinkTypeERF, nil
	case l.ATM != nil && l.ATM.VCMux:
		return l.ATM.pduTaps, LinkTypeSunATM, nil
	case l.ATM != nil:
		return l.ATM.pduTaps, LinkTypeERF, nil
	case cellMode:
		return nil, 0, fmt.Errorf("link %s-%s is Ethernet: --cells is for ATM links", l.Link.A, l.Link.B)
	case l.Station != nil:
		return []emulator.Tapper{l.Station}, LinkTypeEthernet, nil
	}
	return []emulator.Tapper{l.AB, l.BA}, LinkTypeEthernet, nil
}

// CaptureDescription is the pcapng interface description of a capture of
// the link: on an AAL3/4 link, whose cells only atmlab's Lua dissector
// decodes, "atmlab aal34 ENCAP" and the link's ends; "" otherwise (the
// capture is plain pcap).
func (l *NetLink) CaptureDescription() string {
	if l.ATM == nil || l.ATM.AAL != atm.AAL34 {
		return ""
	}
	return fmt.Sprintf("%s %s %s-%s", wireshark.AAL34Description, l.Link.ATM.Encap, l.Link.A, l.Link.B)
}

// Build makes a resolved lab's emulator objects on s. Resolve checked and
// planned everything that can fail on input, so an error here is a
// programming fault, never the lab file's.
func Build(lab *topologies.Lab, s *sched.Scheduler) (*Network, error) {
	n := &Network{Sched: s, Hosts: map[string]*emulator.HostPort{}, Lab: lab}
	ports := map[string]emulator.Port{}
	switches := map[string]*ether.Switch{}
	hubs := map[string]*ether.Hub{}
	n.Routers = buildRouters(lab, s)
	for _, r := range n.Routers {
		for _, i := range r.Ifaces() {
			ports[i.PortName()] = i
		}
	}
	for _, node := range lab.Nodes {
		switch node.Kind {
		case topologies.KindHost:
			for _, i := range node.Interfaces {
				hp := &emulator.HostPort{Name: node.Name + ":" + i.Name, CPU: frameCPU(node.CPU, s)}
				n.Hosts[hp.Name] = hp
				ports[hp.Name] = hp
			}
		case topologies.KindSwitch:
			sw := ether.NewSwitch(s, node.Name)
			if node.Ageing > 0 {
				sw.Ageing = node.Ageing
			}
			sw.CPU = frameCPU(node.CPU, s)
			switches[node.Name] = sw
			n.Switches = append(n.Switches, sw)
		case topologies.KindHub:
			repeater := ether.RepeaterClassII
			if node.Repeater == topologies.Class1 {
				repeater = ether.RepeaterClassI
			}
			h := ether.NewHub(s, node.Name, ether.HubConfig{Rate: hubRate(lab, node.Name), Repeater: repeater + ether.DTEPairBits, Seed: seedOf(lab.Seed, node.Name)})
			hubs[node.Name] = h
			n.Hubs = append(n.Hubs, h)
		case topologies.KindATMSwitch, topologies.KindRouter: // built with the ATM links, and above
		default:
			return nil, fmt.Errorf("%s:%d: node %s: kind %s has no constructor (a programming fault: Resolve admits only kinds Build makes)", lab.File, node.Line, node.Name, node.Kind)
		}
	}
	port := func(e topologies.Endpoint) emulator.Port {
		if p, ok := ports[e.String()]; ok {
			return p
		}
		p := switches[e.Node].AddPort(e.Port)
		ports[e.String()] = p
		return p
	}
	for _, l := range lab.Links {
		if l.ATM != nil {
			continue
		}
		if h, dev := hubEnd(hubs, l); h != nil {
			p := port(dev)
			cfg := channelConfig(lab, dev, l.AB, l)
			st := h.AddStation(hubPortName(l, dev), l.Propagation, cfg.QueueFrames, cfg.QueueBytes, p)
			p.SetTX(st)
			n.Links = append(n.Links, &NetLink{Link: l, Station: st})
			n.Ports = append(n.Ports, p)
			continue
		}
		a, b := port(l.A), port(l.B)
		ab := channelConfig(lab, l.A, l.AB, l)
		ba := channelConfig(lab, l.B, l.BA, l)
		nl := &NetLink{Link: l}
		nl.AB, nl.BA = emulator.Connect(s, a, b, ab, ba)
		n.Links = append(n.Links, nl)
		n.Ports = append(n.Ports, a, b)
	}
	buildATM(lab, s, n)
	if err := routeAndBind(lab, n.Routers); err != nil {
		return nil, err
	}
	return n, nil
}

// Layers returns an ATM link's PHY, adaptation layer and encapsulation as
// the models take them; a resolved lab holds only values they have.
func Layers(a *topologies.ATM) (atm.PHY, atm.AAL, cells.Encap) {
	aal, encap := atm.AAL5, cells.LLC
	if a.AAL == topologies.AAL34 {
		aal = atm.AAL34
	}
	if a.Encap == topologies.VCMux {
		encap = cells.VCMux
	}
	return a.PHY.Layer(), aal, encap
}

// discard is an atm-switch's discard policy as the model takes it.
func discard(d topologies.Discard) atm.Discard {
	switch d {
	case topologies.DiscardPPD:
		return atm.PPD
	case topologies.DiscardEPD:
		return atm.EPD
	}
	return atm.DiscardNone
}

// hubEnd returns the hub on a link, if any, and the device at its other end.
func hubEnd(hubs map[string]*ether.Hub, l *topologies.Link) (*ether.Hub, topologies.Endpoint) {
	if h, ok := hubs[l.A.Node]; ok {
		return h, l.B
	}
	if h, ok := hubs[l.B.Node]; ok {
		return h, l.A
	}
	return nil, topologies.Endpoint{}
}

// hubPortName names the hub's end of a link ("hub1:p1").
func hubPortName(l *topologies.Link, dev topologies.Endpoint) string {
	if l.A == dev {
		return l.B.String()
	}
	return l.A.String()
}

// hubRate is the rate of the links to a hub (validation made them equal).
func hubRate(lab *topologies.Lab, hub string) units.BitRate {
	for _, l := range lab.Links {
		if l.A.Node == hub || l.B.Node == hub {
			return l.AB.Rate
		}
	}
	return topologies.DefaultRate
}

// channelConfig sets up the direction that from transmits on: a host's NIC
// ring or a switch's output buffer in front of it.
func channelConfig(lab *topologies.Lab, from topologies.Endpoint, dir topologies.Direction, l *topologies.Link) emulator.ChannelConfig {
	cfg := emulator.ChannelConfig{
		Rate:        dir.Rate,
		Propagation: l.Propagation,
		Impair:      emulator.Impair(dir.Impair),
		Seed:        seedOf(lab.Seed, from.String()),
	}
	switch node := lab.Node(from.Node); node.Kind {
	case topologies.KindHost:
		cfg.QueueFrames = NICRing
	case topologies.KindSwitch:
		cfg.QueueBytes = int(node.Buffer)
	case topologies.KindRouter:
		cfg.QueueFrames = RouterQueue
	}
	return cfg
}

// seedOf gives each direction its own reproducible random stream.
func seedOf(seed uint64, name string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(name))
	return seed ^ h.Sum64()
}

// Link returns the built link that has endpoint e ("h1:eth0"), or nil.
func (n *Network) Link(e string) *NetLink {
	for _, l := range n.Links {
		if l.Link.A.String() == e || l.Link.B.String() == e {
			return l
		}
	}
	return nil
}

// Stats returns a row per port.
func (n *Network) Stats() []emulator.PortStats {
	rows := make([]emulator.PortStats, 0, len(n.Ports))
	for _, p := range n.Ports {
		rows = append(rows, p.Stats())
	}
	for _, sw := range n.ATMSwitches {
		rows = append(rows, sw.Stats()...)
	}
	return rows
}

// frameCPU returns the emulator's CPU for c; nil (no limit) for a nil c.
func frameCPU(c *topologies.FrameCPU, s *sched.Scheduler) *emulator.FrameCPU {
	if c == nil {
		return nil
	}
	return emulator.NewFrameCPU(s, c.PerPacket, c.Copy, c.Queue)
}
