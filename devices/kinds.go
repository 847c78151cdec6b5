package devices

import (
	"time"

	"github.com/atmlab/atmlab/emulator"
	"github.com/atmlab/atmlab/emulator/atm"
	"github.com/atmlab/atmlab/emulator/sched"
	"github.com/atmlab/atmlab/emulator/units"
	"github.com/atmlab/atmlab/topologies"
)

// kindUnits gives each kind of the one table of kinds (topologies/kinds) the
// unit, in its own file, that builds its nodes: the build half of the
// kind's row. Build walks the table in its order; nothing else in the
// package names a kind. A new kind is a row there and a file and a line
// here (TestEveryKindHasAUnit).
var kindUnits = map[topologies.Kind]unit{
	topologies.KindHost:      hostUnit{},
	topologies.KindSwitch:    switchUnit{},
	topologies.KindHub:       hubUnit{},
	topologies.KindATMSwitch: atmSwitchUnit{},
	topologies.KindRouter:    routerUnit{},
	topologies.KindWire:      wireUnit{},
}

// unit is one device kind: it builds the lab's nodes of its kind.
type unit interface {
	// build makes the nodes (the lab's of this kind, in file order) on b,
	// one Device each, in the same order.
	build(b *builder, nodes []*topologies.Node) []Device
}

// finisher is a unit with work after every link is built: an
// atm-switch's cross-connects, the routers' routes and labels. devs are
// the unit's devices, in file order.
type finisher interface {
	finish(b *builder, devs []Device)
}

// Device is a built node as the runtime, `atmlab stats` and the live view
// see it: its name and what it reports beyond its ports' rows.
type Device interface {
	Name() string
	// Report returns what the device counts beyond its ports' rows at
	// model time now (elapsed since the lab started); false for nothing.
	Report(now time.Duration) (Report, bool)
}

// Report is a device's own counters, beyond its ports' rows.
type Report struct {
	Kind     topologies.Kind   `json:"kind"`
	Counters map[string]uint64 `json:"counters,omitempty"`
	// Line is the device's line in `atmlab stats`; empty for none.
	Line string `json:"line,omitempty"`
	// Section names the top-level section of the stats that has held this
	// kind's figures since before per-node reports (hubs, switch_filtered),
	// and Entry is the device's value there, under its name; Section is
	// empty for none.
	Section string `json:"-"`
	Entry   any    `json:"-"`
}

// The parts a device may play in a build; Build asks each device which it
// plays instead of asking its kind.
type (
	// etherDevice ends Ethernet links in ports of its own.
	etherDevice interface {
		etherPort(b *builder, name string) emulator.Port
	}
	// mediumDevice is a shared medium: it builds each link to it, a
	// station for the port p at the other end, dev.
	mediumDevice interface {
		join(b *builder, l *topologies.Link, dev topologies.Endpoint, p emulator.Port) *NetLink
	}
	// cellDevice ends ATM links: the cells for end e arrive at rx, and
	// attach gives it the cell link it sends on.
	cellDevice interface {
		cellEnd(b *builder, l *topologies.Link, e topologies.Endpoint) (rx atm.CellReceiver, attach func(*atm.CellLink))
	}
	// queuedDevice puts an output queue in front of each Ethernet link it
	// sends on (frames or bytes; 0 for no limit).
	queuedDevice interface {
		queue() (frames, bytes int)
	}
	// bufferedDevice's output buffers are what `atmlab set buffer=`
	// changes.
	bufferedDevice interface {
		setBuffer(cfg *emulator.ChannelConfig, size units.Size)
	}
	// rowDevice has port rows of its own (ports that are not the
	// network's emulator.Ports: an atm-switch's).
	rowDevice interface {
		rows() []emulator.PortStats
	}
)

// builder is one Build's state: what every unit builds on.
type builder struct {
	lab *topologies.Lab
	s   *sched.Scheduler // the one scheduler, or nil when the lab is split (sp)
	sp  *Split
	n   *Network
	// ports are the Ethernet ports devices have handed out, by endpoint.
	ports map[string]emulator.Port
}

// on returns the scheduler node's models run on: its part's in a split
// lab, else the one.
func (b *builder) on(node string) *sched.Scheduler {
	if b.sp != nil {
		return b.sp.Sched(b.sp.Plan.PartOf(node))
	}
	return b.s
}

// etherPort returns the Ethernet port at e, from e's device the first time.
func (b *builder) etherPort(e topologies.Endpoint) emulator.Port {
	if p, ok := b.ports[e.String()]; ok {
		return p
	}
	d, ok := b.n.Device(e.Node).(etherDevice)
	if !ok {
		panic("devices: " + e.String() + " ends an Ethernet link but its device has no Ethernet ports (a programming fault: Resolve admits only links its kinds end)")
	}
	p := d.etherPort(b, e.Port)
	b.ports[e.String()] = p
	return p
}

// named is the Name half of a Device.
type named string

func (n named) Name() string { return string(n) }

// quiet is the Report half of a device with nothing beyond its ports' rows.
type quiet struct{}

func (quiet) Report(time.Duration) (Report, bool) { return Report{}, false }
