package emutest

import (
	"net/netip"
	"testing"
	"time"

	"github.com/atmlab/atmlab/cells"
	"github.com/atmlab/atmlab/emulator"
	"github.com/atmlab/atmlab/emulator/atm"
	"github.com/atmlab/atmlab/emulator/ether"
	"github.com/atmlab/atmlab/emulator/router"
	"github.com/atmlab/atmlab/emulator/sched"
	"github.com/atmlab/atmlab/emulator/units"
)

// Every emulator.Transmitter in the emulator tree. (Virtual hosts' NICs
// are emulator.HostPorts, whose transmitter is one of these.)
var transmitters = []TxSubject{
	{Name: "channel", Delivered: true, New: func(s *sched.Scheduler, queue int, rx emulator.Receiver) emulator.Transmitter {
		return emulator.NewChannel(s, emulator.ChannelConfig{Rate: 100 * units.Mbps, Propagation: 5 * time.Microsecond, QueueFrames: queue}, rx)
	}},
	{Name: "channel-10G-jumbo", Delivered: true, Sizes: []int{9014, 64, 4000}, New: func(s *sched.Scheduler, queue int, rx emulator.Receiver) emulator.Transmitter {
		return emulator.NewChannel(s, emulator.ChannelConfig{Rate: 10 * units.Gbps, QueueFrames: queue}, rx)
	}},
	{Name: "impairment-pipe", Delivered: true, Lossy: true, New: func(s *sched.Scheduler, queue int, rx emulator.Receiver) emulator.Transmitter {
		im := emulator.Impair{Delay: time.Millisecond, Jitter: 300 * time.Microsecond, Loss: 0.1, Limit: 6}
		return emulator.NewChannel(s, emulator.ChannelConfig{Rate: 100 * units.Mbps, QueueFrames: queue, Impair: im, Seed: 7}, rx)
	}},
	{Name: "hub-station", New: func(s *sched.Scheduler, queue int, rx emulator.Receiver) emulator.Transmitter {
		h := ether.NewHub(s, "hub", ether.HubConfig{Rate: 10 * units.Mbps, Repeater: 100, Seed: 3})
		st := h.AddStation("a", time.Microsecond, queue, 0, nil)
		h.AddStation("b", 2*time.Microsecond, 0, 0, rx)
		return st
	}},
	atmAdapter(atm.AAL5, cells.LLC, "oc3"),
	atmAdapter(atm.AAL34, cells.VCMux, "e3"),
}

// atmAdapter is a host's adapter sending over a cell link to another
// host's adapter, whose host is the receiver.
func atmAdapter(aal atm.AAL, encap cells.Encap, phy string) TxSubject {
	return TxSubject{Name: "atm-adapter-" + aal.String() + "-" + phy, New: func(s *sched.Scheduler, queue int, rx emulator.Receiver) emulator.Transmitter {
		vc := []atm.VC{{VCI: 100}}
		a := atm.NewAdapter(s, atm.AdapterConfig{AAL: aal, Encap: encap, VCs: vc, Ring: queue, MaxSDU: 9188}, ReceiverDiscard{})
		b := atm.NewAdapter(s, atm.AdapterConfig{AAL: aal, Encap: encap, VCs: vc, MaxSDU: 9188}, rx)
		a.Attach(atm.NewCellLink(s, atm.LinkConfig{PHY: atm.PHYs[phy], Propagation: time.Microsecond}, b))
		return a
	}}
}

// ReceiverDiscard takes frames and drops them.
type ReceiverDiscard struct{}

// Receive implements emulator.Receiver.
func (ReceiverDiscard) Receive(*emulator.Frame) {}

func TestTransmitters(t *testing.T) {
	for _, sub := range transmitters {
		t.Run(sub.Name, func(t *testing.T) { Transmitter(t, sub) })
	}
}

// Every emulator.Port in the emulator tree.
var ports = []PortSubject{
	{Name: "host-port", New: func(s *sched.Scheduler) (emulator.Port, func(seq, n int)) {
		h := &emulator.HostPort{Name: "h1:eth0"}
		return h, func(seq, n int) { h.Input(Frame(seq, n, MACB)) }
	}},
	{Name: "host-port-cpu", New: func(s *sched.Scheduler) (emulator.Port, func(seq, n int)) {
		h := &emulator.HostPort{Name: "h1:eth0", CPU: emulator.NewFrameCPU(s, 10*time.Microsecond, 0, 0)}
		// A reader that waits for CanAccept, as the kernel's and vhost's
		// do, a while: the suite's transmitter never makes room.
		return h, func(seq, n int) {
			tries := 0
			var send func()
			send = func() {
				if !h.CanAccept() && tries < 100 {
					tries++
					s.After(time.Microsecond, send)
					return
				}
				h.Input(Frame(seq, n, MACB))
			}
			s.At(s.Now()+time.Duration(seq)*time.Nanosecond, send)
		}
	}},
	{Name: "switch-port", New: func(s *sched.Scheduler) (emulator.Port, func(seq, n int)) {
		sw := ether.NewSwitch(s, "sw")
		p, q := sw.AddPort("sw:p1"), sw.AddPort("sw:p2")
		return p, func(seq, n int) { q.Receive(Frame(seq, n, MACB)) } // unknown unicast: flooded to p
	}},
	{Name: "router-iface", Dst: [6]byte{2, 1, 0, 0, 0, 1}, New: func(s *sched.Scheduler) (emulator.Port, func(seq, n int)) {
		r := router.New(s, "r1", router.Config{})
		p := r.AddIface("eth0", [6]byte{2, 1, 0, 0, 0, 1}, netip.MustParsePrefix("10.0.5.1/24"), 1500)
		q := r.AddIface("eth1", [6]byte{2, 1, 0, 0, 0, 2}, netip.MustParsePrefix("10.0.0.254/24"), 1500)
		// p learns its neighbour 10.0.5.2 from an ARP request it is sent.
		req := emulator.ARP{Op: emulator.ARPRequest, SHA: MACB, SPA: netip.MustParseAddr("10.0.5.2"), TPA: netip.MustParseAddr("10.0.5.1")}
		p.Receive(&emulator.Frame{Data: req.Frame()})
		return p, func(seq, n int) { q.Receive(FrameTo(seq, n, q.MAC, [4]byte{10, 0, 5, 2})) }
	}},
}

func TestPorts(t *testing.T) {
	for _, sub := range ports {
		t.Run(sub.Name, func(t *testing.T) { Port(t, sub) })
	}
}

// Every cell transmitter: an ATM link direction in trains, to a receiver
// that takes trains and to one that takes a cell at a time, stepped cell by
// cell, and with line loss, delay, jitter and a pipe limit.
var cellLinks = []CellSubject{
	{Name: "cell-link-trains", Trains: true, New: cellLink(atm.LinkConfig{PHY: atm.PHYs["oc3"], Propagation: time.Microsecond})},
	{Name: "cell-link-per-cell-receiver", New: cellLink(atm.LinkConfig{PHY: atm.PHYs["oc3"]})},
	{Name: "cell-link-stepped", Trains: true, New: cellLink(atm.LinkConfig{PHY: atm.PHYs["atm25"], PerCell: true})},
	{Name: "cell-link-impaired", Trains: true, Lossy: true, New: cellLink(atm.LinkConfig{PHY: atm.PHYs["oc3"],
		Delay: time.Millisecond, Jitter: 50 * time.Microsecond, CLR: 0.05, Limit: 20, Seed: 5})},
}

func cellLink(cfg atm.LinkConfig) func(s *sched.Scheduler, queue int, rx atm.CellReceiver) CellTransmitter {
	return func(s *sched.Scheduler, queue int, rx atm.CellReceiver) CellTransmitter {
		cfg.QueueCells = queue
		return atm.NewCellLink(s, cfg, rx)
	}
}

func TestCellLinks(t *testing.T) {
	for _, sub := range cellLinks {
		t.Run(sub.Name, func(t *testing.T) { Cells(t, sub) })
	}
}
