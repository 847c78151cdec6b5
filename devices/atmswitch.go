package devices

import (
	"github.com/atmlab/atmlab/emulator"
	"github.com/atmlab/atmlab/emulator/atm"
	"github.com/atmlab/atmlab/topologies"
)

// atmSwitchUnit builds atm-switches: a cell switch with a port per ATM link
// and the cross-connects Resolve planned.
type atmSwitchUnit struct{}

type atmSwitch struct {
	named
	quiet
	node  *topologies.Node
	sw    *atm.Switch
	ports map[string]*atm.SwitchPort // by port name
}

func (atmSwitchUnit) build(b *builder, nodes []*topologies.Node) []Device {
	var out []Device
	for _, node := range nodes {
		sw := atm.NewSwitch(b.on(node.Name), node.Name, atm.SwitchConfig{QueueCells: node.ATMSwitch.Queue, Discard: discard(node.ATMSwitch.Discard)})
		out = append(out, &atmSwitch{named: named(node.Name), node: node, sw: sw, ports: map[string]*atm.SwitchPort{}})
	}
	return out
}

// cellEnd adds a port to the switch.
func (d *atmSwitch) cellEnd(_ *builder, _ *topologies.Link, e topologies.Endpoint) (atm.CellReceiver, func(*atm.CellLink)) {
	p := d.sw.AddPort(e.String())
	d.ports[e.Port] = p
	return p, p.Attach
}

// finish maps each switch's cross-connects, once its ports exist.
func (atmSwitchUnit) finish(_ *builder, devs []Device) {
	for _, dev := range devs {
		d := dev.(*atmSwitch)
		for _, x := range d.node.ATMSwitch.Cross {
			in, out := d.ports[x.In.Port], d.ports[x.Out.Port]
			if x.In.VCI < 0 {
				d.sw.MapVP(in, uint16(x.In.VPI), out, uint16(x.Out.VPI))
			} else {
				d.sw.MapVC(in, uint16(x.In.VPI), uint16(x.In.VCI), out, uint16(x.Out.VPI), uint16(x.Out.VCI))
			}
		}
	}
}

// rows are the switch's ports' rows (frames are cells).
func (d *atmSwitch) rows() []emulator.PortStats { return d.sw.Stats() }

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
