package devices

import (
	"fmt"
	"time"

	"github.com/atmlab/atmlab/emulator"
	"github.com/atmlab/atmlab/topologies"
)

// WireQueue is a wire's buffer in front of each of its two links, in
// frames: what it holds where a fast link feeds a slow one.
const WireQueue = 64

// wireUnit builds wires: two Ethernet links joined store and forward (a
// media converter), with no repeater, no address learning and no
// filtering. Each frame that has fully arrived on one port is sent on the
// other at once, behind WireQueue frames.
type wireUnit struct{}

type wire struct {
	named
	ports     []*wirePort
	forwarded uint64
}

// wirePort is one end of a wire.
type wirePort struct {
	w                 *wire
	name              string
	tx                emulator.Transmitter
	rxFrames, rxBytes uint64
}

var _ emulator.Port = (*wirePort)(nil)

func (wireUnit) build(_ *builder, nodes []*topologies.Node) []Device {
	var out []Device
	for _, node := range nodes {
		out = append(out, &wire{named: named(node.Name)})
	}
	return out
}

// etherPort adds one of the wire's two ports.
func (w *wire) etherPort(_ *builder, name string) emulator.Port {
	p := &wirePort{w: w, name: w.Name() + ":" + name}
	w.ports = append(w.ports, p)
	return p
}

// queue is the wire's buffer.
func (w *wire) queue() (frames, bytes int) { return WireQueue, 0 }

// Report counts the frames the wire passed on.
func (w *wire) Report(time.Duration) (Report, bool) {
	return Report{Kind: topologies.KindWire, Counters: map[string]uint64{"forwarded": w.forwarded},
		Line: fmt.Sprintf("wire %s: %d frames forwarded", w.Name(), w.forwarded)}, true
}

// Receive implements emulator.Receiver: the frame leaves by the other port.
func (p *wirePort) Receive(f *emulator.Frame) {
	p.rxFrames++
	p.rxBytes += uint64(len(f.Data))
	for _, o := range p.w.ports {
		if o != p && o.tx != nil && o.tx.Send(f) {
			p.w.forwarded++ // one its buffer refused counts as the link's drop
		}
	}
}

// PortName implements emulator.Port.
func (p *wirePort) PortName() string { return p.name }

// SetTX implements emulator.Port.
func (p *wirePort) SetTX(t emulator.Transmitter) { p.tx = t }

// Stats implements emulator.Port.
func (p *wirePort) Stats() emulator.PortStats {
	return emulator.RowOf(p.name, p.rxFrames, p.rxBytes, p.tx)
}
