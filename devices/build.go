// Package devices builds a resolved lab's emulated network (Build) from the
// models in emulator/..., and changes it while it runs (Network.Set).
// Resolve (package topologies/labfile) has checked and planned everything, so
// building cannot fail on input. Each device kind is a unit in its own
// file (host.go, switch.go, hub.go, atmswitch.go, router.go, wire.go),
// each the unit of a row of the one table of kinds (topologies/kinds),
// registered in kinds.go; the rest of the package and its users handle
// nodes as Devices and never name a kind.
package devices

import (
	"fmt"
	"hash/fnv"
	"time"

	"github.com/atmlab/atmlab/emulator"
	"github.com/atmlab/atmlab/emulator/atm"
	"github.com/atmlab/atmlab/emulator/sched"
	"github.com/atmlab/atmlab/topologies"
	"github.com/atmlab/atmlab/topologies/kinds"
	"github.com/atmlab/atmlab/topologies/split"
	"github.com/atmlab/atmlab/wireshark"
)

// Network is a lab's emulated part: every port and link, built on one
// scheduler. Hosts' ports are HostPorts whose TAP side the kernel package
// (or a test) attaches.
type Network struct {
	Sched   *sched.Scheduler
	Hosts   map[string]*emulator.HostPort // by "node:interface"
	Ports   []emulator.Port               // every port, in a stable order
	Links   []*NetLink
	Devices []Device        // every node, in file order
	Lab     *topologies.Lab // what it was built from: atmlab set --reset returns to it

	byName  map[string]Device
	arrival map[arrival]emulator.Receiver // a cut's far end, by cut and part
}

// arrival is a cut's direction by its origin and the part it goes to.
type arrival struct {
	origin uint32
	part   string
}

// Arrival returns what takes the frames of cut origin (1 + its index in
// the plan's cuts) that arrive in part: nil if none.
func (n *Network) Arrival(origin uint32, part string) emulator.Receiver {
	return n.arrival[arrival{origin, part}]
}

// NetLink is a built link: its two channels, AB carrying what A sends, or
// for a link to a shared medium (a hub) the medium's station for the port
// at its other end, or an ATM link's cells.
type NetLink struct {
	Link   *topologies.Link
	AB, BA *emulator.Channel
	// Medium is the station of a link to a shared medium: what a capture
	// of the link listens to; nil on a point-to-point link.
	Medium emulator.Tapper
	ATM    *ATMLink
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
	case l.Medium != nil:
		return []emulator.Tapper{l.Medium}, LinkTypeEthernet, nil
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

// Build makes a resolved lab's emulator objects on s: each node by its
// kind's unit (the kinds table), then the Ethernet links and the ATM links
// in file order. Resolve checked and planned everything that can fail on
// input, so Build cannot fail; it panics on a programming fault (a kind
// without a unit, a link its ends' devices cannot end).
//
// A lab with parts: is built on the one scheduler too, its cut links as
// in a split run (each frame crossing one delivered by an event of its own,
// ordered as one crossing between parts is: BuildSplit), so that the lab
// run whole and run split give the same results.
func Build(lab *topologies.Lab, s *sched.Scheduler) *Network {
	plan, err := split.Of(lab)
	if err != nil {
		panic(fmt.Sprintf("devices: %v (a programming fault: Resolve checked the lab's cuts)", err))
	}
	var sp *Split
	if plan != nil {
		sp = &Split{Plan: plan, Sched: func(string) *sched.Scheduler { return s }}
	}
	return build(lab, s, sp)
}

// Split is how BuildSplit places a split lab: each part's models on a
// scheduler of its own, and what crosses a cut handed from one to the
// other.
type Split struct {
	Plan  *split.Plan
	Sched func(part string) *sched.Scheduler
	// Post hands f, a frame's arrival over cut origin (1 + its index in
	// Plan.Cuts), from part src to part dst, to run there at model time
	// at as an event scheduled at from (window.Group.Post); nil: the
	// parts share a scheduler, which takes it at once (sched.AtFrom).
	Post func(src, dst string, at, from time.Duration, origin uint32, f func())
	// Send, if set, hands the frame itself instead of Post: a part run in
	// a process of its own sends it to the far part's process, which hands
	// it to the cut's far end there (Network.Arrival).
	Send func(src, dst string, at, from time.Duration, origin uint32, f *emulator.Frame)
}

// BuildSplit builds a split lab: each node's models on its part's
// scheduler, and each cut link's two directions on the scheduler of the
// part that sends in it, handing each frame to the far part with its
// arrival time (emulator.ChannelConfig.Cut). Network.Sched is the first
// part's scheduler.
func BuildSplit(lab *topologies.Lab, sp *Split) *Network {
	return build(lab, nil, sp)
}

func build(lab *topologies.Lab, s *sched.Scheduler, sp *Split) *Network {
	n := &Network{Sched: s, Hosts: map[string]*emulator.HostPort{}, Lab: lab, byName: map[string]Device{}}
	if s == nil {
		n.Sched = sp.Sched(sp.Plan.Parts[0].Name)
	}
	b := &builder{lab: lab, s: s, sp: sp, n: n, ports: map[string]emulator.Port{}}
	byKind := map[topologies.Kind][]*topologies.Node{}
	for _, node := range lab.Nodes {
		byKind[node.Kind] = append(byKind[node.Kind], node)
	}
	built := map[topologies.Kind][]Device{}
	for _, k := range kinds.Table {
		u, ok := kindUnits[k.Kind]
		if !ok {
			continue // a kind without a unit: its nodes panic below
		}
		nodes := byKind[k.Kind]
		devs := u.build(b, nodes)
		for i, d := range devs {
			n.byName[nodes[i].Name] = d
		}
		built[k.Kind] = devs
		delete(byKind, k.Kind)
	}
	for kind, nodes := range byKind {
		panic(fmt.Sprintf("devices: %s:%d: node %s: kind %s has no unit in the kinds table (a programming fault: Resolve admits only kinds Build makes)", lab.File, nodes[0].Line, nodes[0].Name, kind))
	}
	for _, node := range lab.Nodes {
		n.Devices = append(n.Devices, n.byName[node.Name])
	}
	for _, l := range lab.Links {
		if l.ATM == nil {
			b.etherLink(l)
		}
	}
	for _, l := range lab.Links {
		if l.ATM != nil {
			b.atmLink(l)
		}
	}
	for _, k := range kinds.Table {
		if f, ok := kindUnits[k.Kind].(finisher); ok {
			f.finish(b, built[k.Kind])
		}
	}
	return n
}

// Device returns the node named name's device, or nil.
func (n *Network) Device(name string) Device { return n.byName[name] }

// etherLink builds an Ethernet link: a channel each way between its ends'
// ports, or, when one end is a shared medium (a hub), that medium's
// station for the port at the other end.
func (b *builder) etherLink(l *topologies.Link) {
	for _, ends := range [2][2]topologies.Endpoint{{l.A, l.B}, {l.B, l.A}} {
		if m, ok := b.n.Device(ends[0].Node).(mediumDevice); ok {
			p := b.etherPort(ends[1])
			b.n.Links = append(b.n.Links, m.join(b, l, ends[1], p))
			b.n.Ports = append(b.n.Ports, p)
			return
		}
	}
	pa, pb := b.etherPort(l.A), b.etherPort(l.B)
	ab := b.n.channelConfig(l.A, l.AB, l)
	ba := b.n.channelConfig(l.B, l.BA, l)
	nl := &NetLink{Link: l}
	if origin := b.cutOrigin(l); origin > 0 {
		ab.Cut = b.cut(l.A.Node, l.B.Node, origin, pb)
		ba.Cut = b.cut(l.B.Node, l.A.Node, origin, pa)
		nl.AB, nl.BA = emulator.NewChannel(b.on(l.A.Node), ab, pb), emulator.NewChannel(b.on(l.B.Node), ba, pa)
		pa.SetTX(nl.AB)
		pb.SetTX(nl.BA)
	} else {
		nl.AB, nl.BA = emulator.Connect(b.on(l.A.Node), pa, pb, ab, ba)
	}
	b.n.Links = append(b.n.Links, nl)
	b.n.Ports = append(b.n.Ports, pa, pb)
}

// cutOrigin returns 1 + the index of l among the plan's cuts, 0 if l is
// not cut.
func (b *builder) cutOrigin(l *topologies.Link) uint32 {
	if b.sp == nil {
		return 0
	}
	for i, c := range b.sp.Plan.Cuts {
		if c.Link == l {
			return uint32(i + 1)
		}
	}
	return 0
}

// cut is a cut direction's hand-off from node from's part to node to's:
// the frame reaches dst at its arrival time, as an event of the far part
// scheduled at the frame's departure (now, in the sending part) by the cut.
func (b *builder) cut(from, to string, origin uint32, dst emulator.Receiver) func(*emulator.Frame, time.Duration) {
	src, far := b.on(from), b.on(to)
	srcPart, dstPart := b.sp.Plan.PartOf(from), b.sp.Plan.PartOf(to)
	post, send := b.sp.Post, b.sp.Send
	if b.n.arrival == nil {
		b.n.arrival = map[arrival]emulator.Receiver{}
	}
	b.n.arrival[arrival{origin, dstPart}] = dst
	return func(f *emulator.Frame, at time.Duration) {
		if send != nil {
			send(srcPart, dstPart, at, src.Now(), origin, f)
			return
		}
		deliver := func() { dst.Receive(f) }
		if post == nil {
			far.AtFrom(at, src.Now(), origin, deliver)
			return
		}
		post(srcPart, dstPart, at, src.Now(), origin, deliver)
	}
}

// channelConfig sets up the direction that from transmits on, with the
// output queue from's device puts in front of it (a host's NIC ring, a
// switch's buffer, a router's txqueuelen).
func (n *Network) channelConfig(from topologies.Endpoint, dir topologies.Direction, l *topologies.Link) emulator.ChannelConfig {
	cfg := emulator.ChannelConfig{
		Rate:        dir.Rate,
		Propagation: l.Propagation,
		Impair:      emulator.Impair(dir.Impair),
		Seed:        seedOf(n.Lab.Seed, from.String()),
	}
	if q, ok := n.Device(from.Node).(queuedDevice); ok {
		cfg.QueueFrames, cfg.QueueBytes = q.queue()
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
	for _, d := range n.Devices {
		if r, ok := d.(rowDevice); ok {
			rows = append(rows, r.rows()...)
		}
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
