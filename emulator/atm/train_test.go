package atm

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/atmlab/atmlab/cells"
	"github.com/atmlab/atmlab/emulator"
	"github.com/atmlab/atmlab/emulator/sched"
)

// The trains' tests run the same traffic through the same network twice,
// stepped cell by cell (LinkConfig.PerCell) and in trains, and require
// everything observable to be identical: every cell's departure time and
// fate on every link, every capture record and its time, every packet the
// hosts get and when, and every counter.

// observed is what one run shows.
type observed struct {
	Deps     [][]dep     // per link, every cell as it leaves
	Caps     [][]record  // per link, cell records then PDU records
	Rx       [][]record  // per host, the frames it got
	Links    []LinkStats // per link
	Switches [][]emulator.PortStats
	Adapters []emulator.ATMStats
	Sent     []emulator.ChannelStats
	Events   int // not compared: what the trains save
}

type dep struct {
	Cell cells.Cell
	End  time.Duration
	Lost bool
}

type record struct {
	Data []byte
	At   time.Duration
}

// testNet builds a network in one mode and records what it shows.
type testNet struct {
	s        *sched.Scheduler
	perCell  bool
	obs      observed
	links    []*CellLink
	switches []*Switch
	adapters []*Adapter
}

func newTestNet(perCell bool) *testNet { return &testNet{s: sched.New(), perCell: perCell} }

// link returns a link to dst, traced and captured (cells and PDUs).
func (n *testNet) link(cfg LinkConfig, dst CellReceiver) *CellLink {
	cfg.PerCell = n.perCell
	l := NewCellLink(n.s, cfg, dst)
	i := len(n.links)
	n.links = append(n.links, l)
	n.obs.Deps = append(n.obs.Deps, nil)
	n.obs.Caps = append(n.obs.Caps, nil)
	l.trace = func(c *cells.Cell, end time.Duration, lost bool) {
		n.obs.Deps[i] = append(n.obs.Deps[i], dep{*c, end, lost})
	}
	for _, mode := range []bool{true, false} {
		l.NewTap(mode, 0).SetTap(func(f *emulator.Frame, at time.Duration) {
			n.obs.Caps[i] = append(n.obs.Caps[i], record{f.Data, at})
		})
	}
	return l
}

// host returns an adapter whose frames are recorded.
func (n *testNet) host(cfg AdapterConfig) *Adapter {
	i := len(n.obs.Rx)
	n.obs.Rx = append(n.obs.Rx, nil)
	if cfg.MaxSDU == 0 {
		cfg.MaxSDU = 9188
	}
	a := NewAdapter(n.s, cfg, recvFunc(func(f *emulator.Frame) {
		n.obs.Rx[i] = append(n.obs.Rx[i], record{f.Data, n.s.Now()})
	}))
	n.adapters = append(n.adapters, a)
	return a
}

type recvFunc func(f *emulator.Frame)

func (r recvFunc) Receive(f *emulator.Frame) { r(f) }

// feed has a sends frames of the given sizes in turn, as fast as its ring
// takes them, starting at start: a host whose socket always has more.
func (n *testNet) feed(a *Adapter, start time.Duration, sizes []int, count int) {
	sent := 0
	fill := func() {
		for sent < count && !a.Full(0) {
			a.Send(&emulator.Frame{Data: ipFrame(macB, macA, ipA, ipB, sizes[sent%len(sizes)], byte(sent))})
			sent++
		}
	}
	a.SetOnSpace(fill)
	n.s.At(start, fill)
}

// run drains the network and collects the counters.
func (n *testNet) run() observed {
	for n.s.Step() {
		n.obs.Events++
	}
	for _, l := range n.links {
		n.obs.Links = append(n.obs.Links, l.Stats())
	}
	for _, sw := range n.switches {
		n.obs.Switches = append(n.obs.Switches, sw.Stats())
	}
	for _, a := range n.adapters {
		n.obs.Adapters = append(n.obs.Adapters, a.ATM())
		n.obs.Sent = append(n.obs.Sent, a.Stats())
	}
	return n.obs
}

// same runs build in both modes and fails on the first difference.
func same(t *testing.T, build func(n *testNet)) (perCell, trains observed) {
	t.Helper()
	var obs [2]observed
	for i, mode := range []bool{true, false} {
		n := newTestNet(mode)
		build(n)
		obs[i] = n.run()
	}
	a, b := obs[0], obs[1]
	for i := range a.Deps {
		if len(a.Deps[i]) != len(b.Deps[i]) {
			t.Errorf("link %d: %d cells left cell by cell, %d in trains", i, len(a.Deps[i]), len(b.Deps[i]))
		}
		for j := range min(len(a.Deps[i]), len(b.Deps[i])) {
			if a.Deps[i][j] != b.Deps[i][j] {
				t.Errorf("link %d cell %d: cell by cell left at %v (lost %v), in trains at %v (lost %v)",
					i, j, a.Deps[i][j].End, a.Deps[i][j].Lost, b.Deps[i][j].End, b.Deps[i][j].Lost)
				break
			}
		}
	}
	for _, f := range []struct {
		name string
		a, b any
	}{{"captures", a.Caps, b.Caps}, {"host frames", a.Rx, b.Rx}, {"link stats", a.Links, b.Links},
		{"switch stats", a.Switches, b.Switches}, {"adapter stats", a.Adapters, b.Adapters}, {"sent", a.Sent, b.Sent}} {
		if !reflect.DeepEqual(f.a, f.b) {
			t.Errorf("%s differ:\n cell by cell %s\n in trains    %s", f.name, brief(f.a), brief(f.b))
		}
	}
	t.Logf("events: %d cell by cell, %d in trains", a.Events, b.Events)
	return a, b
}

func brief(v any) string {
	s := fmt.Sprintf("%+v", v)
	if len(s) > 600 {
		s = s[:600] + "..."
	}
	return s
}

// sizes crosses cell boundaries on both sides (AAL5 LLC: 40 octets of IP
// fill one cell, 41 take two).
var sizes = []int{40, 41, 88, 89, 552, 1500, 953, 954, 4000, 9180, 28, 200}

// A chain host - OC-12c - switch - OC-3c with cable, delay, jitter and a
// seeded cell loss - switch - OC-3c - host, with the first switch's small
// queue overrun at the OC-12c/OC-3c step, under each discard policy, each
// AAL and encapsulation, with and without a PCR, with stray cells whose
// headers have one (corrected) or two (dropped) bit errors, and traffic
// back the other way: identical cell by cell and in trains.
func TestTrainsChain(t *testing.T) {
	for _, tc := range []struct {
		name    string
		discard Discard
		aal     AAL
		encap   cells.Encap
		pcr     float64
		drops   func(st *emulator.ATMStats) uint64 // the bottleneck's discards the case must see
	}{
		{"none", DiscardNone, AAL5, cells.LLC, 0, func(st *emulator.ATMStats) uint64 { return st.QueueDrops }},
		{"ppd", PPD, AAL5, cells.LLC, 0, func(st *emulator.ATMStats) uint64 { return st.PPDDrops }},
		{"epd", EPD, AAL5, cells.LLC, 0, func(st *emulator.ATMStats) uint64 { return st.EPDDrops }},
		// (AAL3/4 has no end-of-PDU bit in the header for PPD and EPD.)
		{"none-aal34-vcmux", DiscardNone, AAL34, cells.VCMux, 0, func(st *emulator.ATMStats) uint64 { return st.QueueDrops }},
		// Shaped to 300 000 cells/s, below OC-3c's 353 208: no discards.
		{"ppd-pcr", PPD, AAL5, cells.LLC, 300_000, func(st *emulator.ATMStats) uint64 {
			return 1 - min(1, st.QueueDrops+st.PPDDrops)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, b := same(t, func(n *testNet) {
				oc3, oc12 := LinkConfig{PHY: PHYs["oc3"]}, LinkConfig{PHY: PHYs["oc12"]}
				mid := LinkConfig{PHY: PHYs["oc3"], Propagation: 3 * time.Microsecond, Delay: 20 * time.Microsecond,
					Jitter: 5 * time.Microsecond, CLR: 0.002, Limit: 8, Seed: 7} // about 9 cells in flight: some limit drops
				sw1 := NewSwitch(n.s, "sw1", SwitchConfig{QueueCells: 120, Discard: tc.discard, EPDThreshold: 60})
				sw2 := NewSwitch(n.s, "sw2", SwitchConfig{})
				n.switches = []*Switch{sw1, sw2}
				s1a, s1b := sw1.AddPort("sw1:p1"), sw1.AddPort("sw1:p2")
				s2a, s2b := sw2.AddPort("sw2:p1"), sw2.AddPort("sw2:p2")
				vc := []VC{{VPI: 0, VCI: 100}}
				cfg := AdapterConfig{AAL: tc.aal, Encap: tc.encap, VCs: vc, Ring: 8, PCR: tc.pcr}
				h1, h2 := n.host(cfg), n.host(cfg)
				h1.Attach(n.link(oc12, s1a))
				s1a.Attach(n.link(oc12, h1))
				s1b.Attach(n.link(mid, s2a))
				s2a.Attach(n.link(mid, s1b))
				s2b.Attach(n.link(oc3, h2))
				h2.Attach(n.link(oc3, s2b))
				sw1.MapVC(s1a, 0, 100, s1b, 0, 200)
				sw1.MapVC(s1b, 0, 200, s1a, 0, 100)
				sw2.MapVC(s2a, 0, 200, s2b, 0, 100)
				sw2.MapVC(s2b, 0, 100, s2a, 0, 200)
				n.feed(h1, 0, sizes, 300)
				n.feed(h2, 50*time.Microsecond, []int{40, 1500}, 100)
				// Stray cells on h1's line: one bit wrong in the header
				// (corrected), two (dropped).
				for i, bits := range [][]byte{{0x10}, {0x30}, {0x01}, {0x03}} {
					n.s.At(time.Duration(i+1)*700*time.Microsecond, func() {
						var c cells.Cell
						c.SetHeader(cells.Header{VCI: 100}, cells.UNI)
						c[1] ^= bits[0]
						h1.out.Send(&c, 0)
					})
				}
			})
			sw := a.Switches[0][1].ATM
			hec := a.Switches[0][0].ATM
			if a.Links[0].TxCells < 5000 || a.Links[2].LostCells == 0 || a.Links[2].LimitDrops == 0 || hec.HECCorrected != 2 || hec.HECDrops != 2 ||
				a.Adapters[1].CRCErrors+a.Adapters[1].SeqErrors+a.Adapters[1].LengthErrors == 0 {
				t.Errorf("the traffic missed a case: links %+v, switch %+v, h2 %+v", a.Links, hec, a.Adapters[1])
			}
			if tc.drops(sw) == 0 {
				t.Errorf("%s: the bottleneck's discards: %+v", tc.name, sw)
			}
			if b.Events*10 > a.Events {
				t.Errorf("trains took %d events, cell by cell %d: want a tenth or less", b.Events, a.Events)
			}
		})
	}
}

// A switch where cells of several VCs meet at one output (h1 and h3 to h2,
// every line on the same OC-3c slot grid with no cable, so cells reach the
// switch in the same nanosecond) beside VCs that have their outputs to
// themselves (h4 to h5 on OC-12c, h2 back to h1): the meeting VCs step cell
// by cell, the others travel in trains, and every cell still leaves when
// and as it does cell by cell.
func TestTrainsMix(t *testing.T) {
	var accepts []bool
	a, b := same(t, func(n *testNet) {
		oc3, oc12 := LinkConfig{PHY: PHYs["oc3"]}, LinkConfig{PHY: PHYs["oc12"]}
		sw := NewSwitch(n.s, "sw", SwitchConfig{QueueCells: 300, Discard: EPD})
		n.switches = []*Switch{sw}
		p := make([]*SwitchPort, 6)
		for i := range p {
			p[i] = sw.AddPort(fmt.Sprintf("sw:p%d", i+1))
		}
		one := []VC{{VCI: 100}}
		h1, h3, h4, h5 := n.host(AdapterConfig{VCs: one}), n.host(AdapterConfig{VCs: one}),
			n.host(AdapterConfig{VCs: one}), n.host(AdapterConfig{VCs: one})
		h2 := n.host(AdapterConfig{VCs: []VC{{VCI: 101, Peer: ipA}, {VCI: 103, Peer: ipB}}})
		hosts := []*Adapter{h1, h2, h3, h4, h5}
		for i, h := range hosts {
			cfg := oc3
			if i >= 3 {
				cfg = oc12
			}
			h.Attach(n.link(cfg, p[i]))
			p[i].Attach(n.link(cfg, h))
		}
		sw.MapVC(p[0], 0, 100, p[1], 0, 101)
		sw.MapVC(p[2], 0, 100, p[1], 0, 103)
		sw.MapVC(p[1], 0, 101, p[0], 0, 100)
		sw.MapVC(p[3], 0, 100, p[4], 0, 100)
		n.feed(h1, 0, sizes, 200)
		n.feed(h3, 0, []int{1500, 40, 9180}, 150)
		n.feed(h4, 0, sizes, 200)
		n.feed(h2, 0, []int{552}, 100)
		if !n.perCell {
			accepts = []bool{p[0].AcceptsTrains(), p[1].AcceptsTrains(), p[2].AcceptsTrains(), p[3].AcceptsTrains()}
		}
	})
	if fmt.Sprint(accepts) != "[false true false true]" {
		t.Errorf("ports p1..p4 take trains: %v, want [false true false true]", accepts)
	}
	if st := a.Switches[0][1].ATM; st.EPDDrops == 0 {
		t.Errorf("the meeting VCs never overran the output: %+v", st)
	}
	// Cell by cell, every cell costs an event on every link; in trains a
	// PDU costs one on each of the four links the VCs have to themselves,
	// and one more on the two that lead to the shared output.
	pdus, alone := 0, 0
	for _, i := range []int{1, 2, 6, 9} {
		alone += len(a.Deps[i])
	}
	for _, st := range a.Sent {
		pdus += int(st.TxFrames)
	}
	if saved := a.Events - b.Events; saved < alone-4*pdus {
		t.Errorf("trains saved %d events of %d cells on the VCs' own links (%d PDUs)", saved, alone, pdus)
	}
}

// One PDU from host to host through a switch costs one event per hop in
// trains (the cells' departures and arrivals coincide without cable), one
// per cell per hop cell by cell.
func TestTrainEvents(t *testing.T) {
	a, b := same(t, func(n *testNet) {
		oc3 := LinkConfig{PHY: PHYs["oc3"]}
		sw := NewSwitch(n.s, "sw", SwitchConfig{})
		n.switches = []*Switch{sw}
		p1, p2 := sw.AddPort("p1"), sw.AddPort("p2")
		h1, h2 := n.host(AdapterConfig{VCs: []VC{{VCI: 100}}}), n.host(AdapterConfig{VCs: []VC{{VCI: 100}}})
		h1.Attach(n.link(oc3, p1))
		p1.Attach(n.link(oc3, h1))
		p2.Attach(n.link(oc3, h2))
		h2.Attach(n.link(oc3, p2))
		sw.MapVC(p1, 0, 100, p2, 0, 100)
		n.s.At(0, func() { h1.Send(&emulator.Frame{Data: ipFrame(macB, macA, ipA, ipB, 1500, 0)}) })
	})
	// 1500 octets of IP, 8 of LLC/SNAP and 8 of trailer: 32 cells; plus
	// the event that sends the frame.
	if a.Events != 1+2*32 || b.Events != 1+2 {
		t.Errorf("events: %d cell by cell, %d in trains; want %d and %d", a.Events, b.Events, 1+2*32, 1+2)
	}
	if len(b.Rx[1]) != 1 || b.Rx[1][0].At != PHYs["oc3"].SlotEnd(32) {
		t.Errorf("the packet arrived %+v, want at slot 32's end", b.Rx[1])
	}
}
