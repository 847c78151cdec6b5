// Package topologies is the resolved lab (docs/design.md, "Lab files"):
// its nodes, links and typed values, every default applied and every PVC
// planned, as package labfile makes it from a lab file and spec.json
// holds it, with no model imported (TestImportsNoDevice). Package devices
// builds the emulated network of a resolved lab; package kernel runs it
// on Linux.
package topologies

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"time"

	"github.com/atmlab/atmlab/emulator/units"
	"github.com/atmlab/atmlab/topologies/labyaml"
	"github.com/atmlab/atmlab/topologies/study"
)

// Lab is a validated lab file.
type Lab struct {
	File        string
	Name        string
	Seed        uint64
	Nodes       []*Node             // in file order
	Links       []*Link             // in file order
	Experiments []*study.Experiment // in file order
	References  []*study.Reference  // hardware figures, in file order
	Variants    []*Variant          // what-ifs, in file order, then the sweep's grid points
	Sweep       *Sweep              // a parameter grid, nil if none
	Findings    []*study.Finding    // the study's claims, checked by the report
	Grades      *study.Grades       // a study's letter grades for tools, if any
	Notes       string              // Markdown the report shows under its title
	Figures     []*study.Figure     // plots beside the report's default ones
	ToolUses    []study.ToolUse     // the tools the study names, checked by the harness (labrun.CheckTools)
	UDPSizeUses []study.UDPSizeUse  `json:"-"` // the sizes its UDP tests send, checked against their tools (labrun.CheckTools)
	Warnings    []*labyaml.Error    // what is valid but likely a mistake: loops of switches
	Parts       []*Part             // how the lab is split (parts:), in file order; nil: one part

	// Source is the lab file's tree the lab was resolved from, which
	// makes its variants (WithVariant); nil for a lab read from spec.json.
	Source Source `json:"-"`

	// Indexes by name and endpoint, so that validation stays linear; they
	// catch up with whatever was appended to Nodes and Links since.
	nodeIndex              map[string]*Node
	linkIndex              map[Endpoint]*Link
	nodesIndexed, linksIdx int
}

// Node is a host or a device.
type Node struct {
	Name       string
	Kind       Kind
	Line       int
	Interfaces []*Interface // hosts and routers, in name order
	Routes     []Route
	Sysctls    []Sysctl
	Buffer     units.Size    // switch: output queue per port
	Ageing     time.Duration // switch: MAC table ageing
	MPLS       bool          // router
	Repeater   Repeater      // hub: repeater class
	ATMSwitch  *ATMSwitch    // atm-switch
	Router     *Router       // router
	CPU        *FrameCPU     // host or software switch: a processing limit, nil for none
}

// FrameCPU is the processing cost per frame of a slow host (each frame it
// sends or receives) or of a software switch (each frame it forwards).
type FrameCPU struct {
	PerPacket time.Duration
	Copy      units.BitRate // a per-octet cost as a copy rate; 0: none
	Queue     int           // frames waiting; defaults.CPUQueue unless given
}

// Part is one part of a split lab: the nodes one atmlab instance (or one
// scheduler) runs, in the order parts: lists them. Package topologies/split
// makes a plan of a lab's parts and its cut links.
type Part struct {
	Name  string
	Nodes []string
	Line  int
}

// Router is a router's configuration beyond its interfaces and routes.
type Router struct {
	PipeTTL      bool // RFC 3443 pipe model instead of uniform
	ExplicitNull bool // ask for label 0 instead of penultimate-hop popping
	Cost         RouterCost
}

// RouterCost is a software router's CPU time per packet (zero: none).
type RouterCost struct {
	IP, Push, Swap, Pop, PerByte time.Duration
	SharedCPU                    bool // on the one CPU all such routers share, as in GNS3
	Queue                        int  // packets waiting for the CPU; defaults.RouterQueue unless given
}

// ATMSwitch is an atm-switch's configuration.
type ATMSwitch struct {
	Queue    int // output queue per port, cells; defaults.ATMSwitchQueue unless given
	Discard  Discard
	Mappings []Mapping
	Cross    []CrossConnect // every translation the switch makes, planned by Resolve
}

// Mapping is a duplex PVC through an atm-switch as GNS3 writes it:
// "p1:0:100" <-> "p2:0:200", or a VP "p1:1" <-> "p2:2" (VCI -1).
type Mapping struct {
	From, To ATMAddr
	Line     int
}

// ATMAddr is a switch port and a VPI, with a VCI or -1 for a whole VP.
type ATMAddr struct {
	Port     string
	VPI, VCI int
}

func (a ATMAddr) String() string {
	if a.VCI < 0 {
		return fmt.Sprintf("%s:%d", a.Port, a.VPI)
	}
	return fmt.Sprintf("%s:%d:%d", a.Port, a.VPI, a.VCI)
}

// VC is a permanent virtual circuit at a host's ATM interface: its VPI and
// VCI and, on a PVC the lab planned between two hosts, the address at its
// far end (so that the adapter answers ATMARP for it).
type VC struct {
	VPI, VCI int
	Peer     netip.Addr `json:",omitzero"`
	// Native marks a PVC of the native AAL API: SDUs with no IP and no
	// encapsulation (atm: native: true on both hosts' links).
	Native bool `json:",omitzero"`
}

// CrossConnect is one direction of an atm-switch's translation: cells in
// on In leave on Out (a whole VP where In.VCI is -1).
type CrossConnect struct {
	In, Out ATMAddr
}

// Interface is a host's or router's interface.
type Interface struct {
	Name string
	IPv4 netip.Prefix // zero if none
	MTU  int
	Line int
	VCs  []VC `json:",omitempty"` // a host's ATM interface: its PVCs, planned by Resolve
}

// Route is a static route.
type Route struct {
	To   netip.Prefix
	Via  netip.Addr
	Line int
}

// Sysctl is a setting written in the host's namespace (net.* only).
type Sysctl struct {
	Key, Value string
	Line       int
}

// Endpoint names one end of a link: node and interface or port.
type Endpoint struct{ Node, Port string }

func (e Endpoint) String() string { return e.Node + ":" + e.Port }

// Direction is what one direction of a link does: its rate and impairments.
type Direction struct {
	Rate   units.BitRate
	Impair Impair
}

// ATM is an ATM link's configuration.
type ATM struct {
	PHY      PHY
	AAL      AAL
	Encap    Encap
	VPI, VCI int
	PCR      float64 // peak cell rate of the hosts' VCs on this link, cells/s; 0 = line rate
	// Native gives the host on this link, besides its Classical IP PVCs, a
	// PVC of the native AAL API (null encapsulation, no IP) to each host
	// whose link says so too, planned along the same links and switches.
	Native bool `json:",omitzero"`
}

// Link joins two endpoints.
type Link struct {
	Line        int
	A, B        Endpoint
	Propagation time.Duration // from the cable length
	AB, BA      Direction     // AB is what A sends
	ATM         *ATM          // nil for Ethernet
}

// Node returns the node named name (the first, if two share it), or nil.
func (l *Lab) Node(name string) *Node {
	if l.nodeIndex == nil || l.nodesIndexed > len(l.Nodes) {
		l.nodeIndex, l.nodesIndexed = map[string]*Node{}, 0
	}
	for ; l.nodesIndexed < len(l.Nodes); l.nodesIndexed++ {
		n := l.Nodes[l.nodesIndexed]
		if _, dup := l.nodeIndex[n.Name]; !dup {
			l.nodeIndex[n.Name] = n
		}
	}
	return l.nodeIndex[name]
}

// LinkOf returns the link that has endpoint e (the first, if two share
// it), or nil.
func (l *Lab) LinkOf(e Endpoint) *Link {
	if l.linkIndex == nil || l.linksIdx > len(l.Links) {
		l.linkIndex, l.linksIdx = map[Endpoint]*Link{}, 0
	}
	for ; l.linksIdx < len(l.Links); l.linksIdx++ {
		k := l.Links[l.linksIdx]
		for _, end := range []Endpoint{k.A, k.B} {
			if _, dup := l.linkIndex[end]; !dup {
				l.linkIndex[end] = k
			}
		}
	}
	return l.linkIndex[e]
}

// CheckReferences is the step after Resolve that reads the file system:
// each reference's result file must be a regular file under the lab
// file's directory, of at most study.MaxReferenceBytes. All problems come
// back at once, joined, each an *labyaml.Error.
func (l *Lab) CheckReferences() error {
	return errors.Join(study.FileErrors(l.File, l.References)...)
}

// Interface returns the interface named name, or nil.
func (n *Node) Interface(name string) *Interface {
	for _, i := range n.Interfaces {
		if i.Name == name {
			return i
		}
	}
	return nil
}

// Namespace returns the network namespace a host of this lab lives in.
func (l *Lab) Namespace(node string) string { return l.Name + "-" + node }

// MAC is the stable, locally administered address of a host interface,
// derived from the lab and endpoint names: the kernel gives it to the TAP,
// and an ATM adapter addresses the frames it delivers to it.
func (l *Lab) MAC(e Endpoint) net.HardwareAddr {
	sum := sha256.Sum256([]byte(l.Name + "/" + e.String()))
	return net.HardwareAddr{0x02, sum[0], sum[1], sum[2], sum[3], sum[4]}
}

// Address returns a host's first IPv4 address, or "".
func (n *Node) Address() string {
	for _, i := range n.Interfaces {
		if i.IPv4.IsValid() {
			return i.IPv4.Addr().String()
		}
	}
	return ""
}

// Other returns the node at the far end of l from node n, "" if n ends
// neither side of it.
func (l *Link) Other(n string) string {
	switch n {
	case l.A.Node:
		return l.B.Node
	case l.B.Node:
		return l.A.Node
	}
	return ""
}
