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

	fw    []emulator.Piece // a train's pieces being forwarded
	carve emulator.Carver
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
	p.processed = func(f *emulator.Frame) { sw.input(p, f) }
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
		f.Release()
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
		f.Release()
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
				f.Release()
				return
			}
			out.transmit(f)
			return
		}
	}
	f.Share() // every other port holds it
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
	trainTX  emulator.TrainSender // tx as one, asserted once (see emulator.Channel's trainDst)
	rxFrames uint64
	rxBytes  uint64
	rxErrors uint64
	cpuDrops uint64 // frames the switch's CPU had no room for
	// processed is the switch's input from this port, for its CPU to call
	// once it has processed a frame: made once, not per frame.
	processed func(f *emulator.Frame)
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
	if !p.sw.CPU.Take(f, p.processed) {
		p.cpuDrops++
		f.Release()
	}
}

// AcceptsTrains implements emulator.TrainReceiver: a switch of two ports
// without a CPU takes trains, since nothing but the train's own port
// feeds the output its pieces reach (a switch of more ports steps frame
// by frame: another port's frame may come between two pieces).
func (p *SwitchPort) AcceptsTrains() bool { return p.sw.CPU == nil && len(p.sw.ports) == 2 }

// ReceiveTrain implements emulator.TrainReceiver: each piece is learned
// from, filtered and forwarded as of its arrival, and the pieces leave
// as one train where the output channel can take it, else each is sent
// at its time.
func (p *SwitchPort) ReceiveTrain(ps []emulator.Piece) {
	sw := p.sw
	var out *SwitchPort
	for _, o := range sw.ports {
		if o != p {
			out = o
		}
	}
	fw := sw.fw[:0]
	for _, pc := range ps {
		n := pc.Len()
		p.rxFrames++
		p.rxBytes += uint64(n)
		d := pc.F.Data
		if n < emulator.EtherHeader {
			p.rxErrors++
			continue
		}
		var dst, src MAC
		copy(dst[:], d[0:6])
		copy(src[:], d[6:12])
		if src[0]&1 == 0 {
			sw.table[src] = entry{port: p, seen: pc.At}
		}
		if dst[0] == 0x01 && dst[1] == 0x80 && dst[2] == 0xC2 && dst[3] == 0 && dst[4] == 0 && dst[5]&0xF0 == 0 {
			sw.Filtered++
			continue
		}
		if dst[0]&1 == 0 {
			if e, ok := sw.table[dst]; ok && e.port == p && (sw.Ageing <= 0 || pc.At-e.seen <= sw.Ageing) {
				sw.Filtered++
				continue
			}
		}
		pc.At += sw.Latency
		fw = append(fw, pc)
	}
	sw.fw = fw
	if len(fw) == 0 || out.tx == nil {
		return
	}
	if ts := out.trainTX; ts != nil {
		if ok, _ := ts.SendTrain(fw, false); ok {
			return
		}
	}
	// The closure's own copy: capturing out, assigned in a loop above,
	// moved it to the heap on every train.
	tx := out.tx
	for _, pc := range fw { // frame by frame, each at its time
		f := sw.carve.Cut(pc)
		if pc.At <= sw.s.Now() {
			tx.Send(f)
			continue
		}
		sw.s.At(pc.At, func() { tx.Send(f) })
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
func (p *SwitchPort) SetTX(t emulator.Transmitter) {
	p.tx = t
	p.trainTX, _ = t.(emulator.TrainSender)
}

// Stats implements emulator.Port.
func (p *SwitchPort) Stats() emulator.PortStats {
	row := emulator.RowOf(p.name, p.rxFrames, p.rxBytes, p.tx)
	row.CPUDrops = p.cpuDrops
	return row
}
