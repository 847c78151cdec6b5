// Package ether holds the Ethernet devices: the full-duplex learning switch
// and the CSMA/CD hub.
package ether

import (
	"time"

	"github.com/atmlab/atmlab/emulator"
	"github.com/atmlab/atmlab/emulator/sched"
)

// Defaults of a switch, after IEEE 802.1D and cheap Fast-Ethernet chips.
const (
	DefaultAgeing = 300 * time.Second
	DefaultBuffer = 128 << 10 // bytes per output port
)

// MAC is an Ethernet address.
type MAC [6]byte

// Switch is a store-and-forward learning bridge: it learns source addresses
// with ageing, forwards known unicast to one port, floods broadcast,
// multicast and unknown unicast, never forwards the reserved
// 01-80-C2-00-00-0x group, and queues per output port (the port's channel
// carries the byte limit and tail drop). Call only on the scheduler goroutine.
type Switch struct {
	Name    string
	Ageing  time.Duration
	Latency time.Duration // forwarding decision time after the whole frame arrived
	// CPU, if set, makes it a software switch (GNS3's): every frame costs
	// it processing time before it is forwarded, one frame at a time.
	CPU *emulator.FrameCPU

	s     *sched.Scheduler
	ports []*SwitchPort
	table map[MAC]entry

	Filtered uint64 // frames dropped because their destination is the ingress port or reserved
}

type entry struct {
	port *SwitchPort
	seen time.Duration
}

// NewSwitch returns a switch with no ports.
func NewSwitch(s *sched.Scheduler, name string) *Switch {
	return &Switch{Name: name, Ageing: DefaultAgeing, s: s, table: map[MAC]entry{}}
}

// AddPort adds a port named name ("p1").
func (sw *Switch) AddPort(name string) *SwitchPort {
	p := &SwitchPort{sw: sw, name: sw.Name + ":" + name}
	sw.ports = append(sw.ports, p)
	return p
}

// Ports returns the switch's ports in the order they were added.
func (sw *Switch) Ports() []*SwitchPort { return sw.ports }

// Lookup returns the port a unicast address was learned on, if still fresh.
func (sw *Switch) Lookup(m MAC) (*SwitchPort, bool) {
	e, ok := sw.table[m]
	if !ok {
		return nil, false
	}
	if sw.Ageing > 0 && sw.s.Now()-e.seen > sw.Ageing {
		delete(sw.table, m)
		return nil, false
	}
	return e.port, true
}

func (sw *Switch) input(in *SwitchPort, f *emulator.Frame) {
	if len(f.Data) < emulator.EtherHeader {
		in.rxErrors++
		return
	}
	var dst, src MAC
	copy(dst[:], f.Data[0:6])
	copy(src[:], f.Data[6:12])
	if src[0]&1 == 0 {
		sw.table[src] = entry{port: in, seen: sw.s.Now()}
	}
	if dst[0] == 0x01 && dst[1] == 0x80 && dst[2] == 0xC2 && dst[3] == 0 && dst[4] == 0 && dst[5]&0xF0 == 0 {
		sw.Filtered++
		return
	}
	if sw.Latency > 0 {
		d := dst // captured alone, so dst stays on the stack
		sw.s.After(sw.Latency, func() { sw.forward(in, f, d) })
		return
	}
	sw.forward(in, f, dst) // no closure: a frame allocates nothing here
}

// forward sends f out of the port dst was learned on, or floods it.
func (sw *Switch) forward(in *SwitchPort, f *emulator.Frame, dst MAC) {
	if dst[0]&1 == 0 {
		if out, ok := sw.Lookup(dst); ok {
			if out == in {
				sw.Filtered++
				return
			}
			out.transmit(f)
			return
		}
	}
	for _, out := range sw.ports {
		if out != in {
			out.transmit(f)
		}
	}
}

// SwitchPort is one port of a Switch.
type SwitchPort struct {
	sw       *Switch
	name     string
	tx       emulator.Transmitter
	rxFrames uint64
	rxBytes  uint64
	rxErrors uint64
	cpuDrops uint64 // frames the switch's CPU had no room for
}

var _ emulator.Port = (*SwitchPort)(nil)

// Receive implements emulator.Receiver: a frame has fully arrived.
func (p *SwitchPort) Receive(f *emulator.Frame) {
	p.rxFrames++
	p.rxBytes += uint64(len(f.Data))
	if p.sw.CPU == nil {
		p.sw.input(p, f)
		return
	}
	if !p.sw.CPU.Take(len(f.Data), func() { p.sw.input(p, f) }) {
		p.cpuDrops++
	}
}

func (p *SwitchPort) transmit(f *emulator.Frame) {
	if p.tx != nil {
		p.tx.Send(f)
	}
}

// PortName implements emulator.Port.
func (p *SwitchPort) PortName() string { return p.name }

// SetTX implements emulator.Port.
func (p *SwitchPort) SetTX(t emulator.Transmitter) { p.tx = t }

// Stats implements emulator.Port.
func (p *SwitchPort) Stats() emulator.PortStats {
	row := emulator.RowOf(p.name, p.rxFrames, p.rxBytes, p.tx)
	row.CPUDrops = p.cpuDrops
	return row
}
