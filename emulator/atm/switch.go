package atm

import (
	"slices"
	"time"

	"github.com/atmlab/atmlab/cells"
	"github.com/atmlab/atmlab/emulator"
	"github.com/atmlab/atmlab/emulator/sched"
)

// Discard is what a switch does with the rest of a packet whose cells it
// must drop (Floyd & Romanow 1995; atm.md §3.2). It relies on AAL5's
// end-of-PDU bit, as real switches do.
type Discard int

// Discard policies.
const (
	// DiscardNone drops cells one by one at a full queue: the PDUs they
	// belonged to then fail their CRC at the far end, after wasting the link.
	DiscardNone Discard = iota
	// PPD (partial packet discard): once a cell of a PDU is dropped, drop
	// the rest of it but its last cell, which delimits the next PDU.
	PPD
	// EPD (early packet discard): also refuse whole PDUs, from their first
	// cell, while the output queue is above a threshold.
	EPD
)

// DefaultSwitchQueue is an atm-switch's output queue per port, in cells
// (about 12 ms at OC-3c).
const DefaultSwitchQueue = 4096

// SwitchConfig configures an ATM switch.
type SwitchConfig struct {
	QueueCells   int // output queue per port; 0 = DefaultSwitchQueue
	Discard      Discard
	EPDThreshold int // cells; 0 = three quarters of the queue
}

// Switch is an ATM cell switch: each cell arriving on a port is looked up
// by its VPI (VP switching) or VPI/VCI (VC switching), given the outgoing
// VPI/VCI and a new HEC, and queued at the output port, cell by cell.
// Unmapped cells are dropped and counted, as dynamips' switch does. A port
// takes a train in one call where no other port's cells can come between
// its cells at the outputs it feeds (AcceptsTrains).
type Switch struct {
	s       *sched.Scheduler
	Name    string
	cfg     SwitchConfig
	ports   []*SwitchPort
	vcs     map[inKey]dest
	vps     map[inKey]dest
	touched []*CellLink          // outputs queued to since the last flush
	trainOK map[*SwitchPort]bool // AcceptsTrains, decided at first traffic
}

type inKey struct {
	port     *SwitchPort
	vpi, vci uint16
}

type dest struct {
	port     *SwitchPort
	vpi, vci uint16
}

// SwitchPort is one port of a Switch.
type SwitchPort struct {
	sw    *Switch
	name  string
	out   *CellLink
	pdus  map[inKey]*pduState
	stats emulator.ATMStats
}

// pduState follows the PDU in progress on an incoming VC for the discard
// policies.
type pduState struct {
	inPDU      bool // cells of a PDU have passed; the next is not a first cell
	discarding bool
	early      bool // the discard is EPD's: the last cell goes too
}

// NewSwitch returns an empty switch.
func NewSwitch(s *sched.Scheduler, name string, cfg SwitchConfig) *Switch {
	if cfg.QueueCells == 0 {
		cfg.QueueCells = DefaultSwitchQueue
	}
	if cfg.EPDThreshold == 0 {
		cfg.EPDThreshold = cfg.QueueCells * 3 / 4
	}
	return &Switch{s: s, Name: name, cfg: cfg, vcs: map[inKey]dest{}, vps: map[inKey]dest{}}
}

// QueueCells returns the output queue limit per port.
func (sw *Switch) QueueCells() int { return sw.cfg.QueueCells }

// AddPort adds a port named name ("atm1:p1").
func (sw *Switch) AddPort(name string) *SwitchPort {
	p := &SwitchPort{sw: sw, name: name, pdus: map[inKey]*pduState{}}
	sw.ports = append(sw.ports, p)
	return p
}

// Attach sets the link the port transmits on; its queue is the switch's
// output buffer for the port.
func (p *SwitchPort) Attach(out *CellLink) {
	out.cfg.QueueCells = p.sw.cfg.QueueCells
	p.out = out
	p.sw.trainOK = nil
}

// Name returns the port's name.
func (p *SwitchPort) Name() string { return p.name }

// MapVC switches cells arriving on in with VPI/VCI inVPI/inVCI to out as
// outVPI/outVCI. One direction; a duplex PVC needs a second call.
func (sw *Switch) MapVC(in *SwitchPort, inVPI, inVCI uint16, out *SwitchPort, outVPI, outVCI uint16) {
	sw.vcs[inKey{in, inVPI, inVCI}] = dest{out, outVPI, outVCI}
	sw.trainOK = nil
}

// MapVP switches every cell arriving on in with VPI inVPI to out as outVPI,
// VCI unchanged. VP entries are looked up before VC entries.
func (sw *Switch) MapVP(in *SwitchPort, inVPI uint16, out *SwitchPort, outVPI uint16) {
	sw.vps[inKey{in, inVPI, 0}] = dest{out, outVPI, 0}
	sw.trainOK = nil
}

// ReceiveCell implements CellReceiver.
func (p *SwitchPort) ReceiveCell(c *cells.Cell) {
	p.receive(c, p.sw.s.Now())
	p.sw.flush()
}

// ReceiveTrain implements TrainReceiver: each cell is switched as of its
// arrival time, then the outputs send what they got as trains.
func (p *SwitchPort) ReceiveTrain(train []Arrival) {
	for i := range train {
		p.receive(&train[i].Cell, train[i].At)
	}
	p.sw.flush()
}

// AcceptsTrains implements TrainReceiver: a port takes trains when every
// output its VCs and VPs lead to is fed by this port alone (no other cell
// can come between a train's cells there) and hands its cells on in trains
// too (nothing downstream needs a cell before the train's last has come).
func (p *SwitchPort) AcceptsTrains() bool {
	sw := p.sw
	if sw.trainOK == nil {
		sw.trainOK = map[*SwitchPort]bool{}
	}
	if ok, known := sw.trainOK[p]; known {
		return ok
	}
	sw.trainOK[p] = false // a loop of VCs back to p steps cell by cell
	ok := true
	for _, o := range sw.outputs(p) {
		if !sw.fedBy(o, p) || o.out == nil || !o.out.trains() {
			ok = false
			break
		}
	}
	sw.trainOK[p] = ok
	return ok
}

// outputs returns the ports that p's VCs and VPs lead to.
func (sw *Switch) outputs(p *SwitchPort) []*SwitchPort {
	var outs []*SwitchPort
	for _, m := range []map[inKey]dest{sw.vcs, sw.vps} {
		for k, d := range m {
			if k.port == p && !slices.Contains(outs, d.port) {
				outs = append(outs, d.port)
			}
		}
	}
	return outs
}

// fedBy reports whether only p's VCs and VPs lead to o.
func (sw *Switch) fedBy(o, p *SwitchPort) bool {
	for _, m := range []map[inKey]dest{sw.vcs, sw.vps} {
		for k, d := range m {
			if d.port == o && k.port != p {
				return false
			}
		}
	}
	return true
}

// flush ends the trains queued at the outputs.
func (sw *Switch) flush() {
	for _, l := range sw.touched {
		l.flush()
	}
	sw.touched = sw.touched[:0]
}

// receive switches a cell that arrived at t.
func (p *SwitchPort) receive(c *cells.Cell, t time.Duration) {
	p.stats.RxCells++
	if fixed, err := cells.CheckHEC(c[:]); err != nil {
		p.stats.HECDrops++
		return
	} else if fixed {
		p.stats.HECCorrected++
	}
	sw := p.sw
	h := c.Header(cells.UNI)
	d, ok := sw.vps[inKey{p, h.VPI, 0}]
	if ok {
		d.vci = h.VCI
	} else if d, ok = sw.vcs[inKey{p, h.VPI, h.VCI}]; !ok {
		p.stats.UnknownVC++
		return
	}
	if h.PTI >= 4 { // OAM and RM cells: switched, never discarded with a PDU
		d.forward(c, h, t)
		return
	}
	key := inKey{p, h.VPI, h.VCI}
	st := p.pdus[key]
	if st == nil {
		st = &pduState{}
		p.pdus[key] = st
	}
	last := c.LastOfPDU()
	first := !st.inPDU
	st.inPDU = !last
	if st.discarding {
		if last {
			st.discarding = false
			if !st.early { // PPD keeps the last cell: it ends the PDU at the far end
				d.forward(c, h, t)
				return
			}
		}
		if st.early {
			d.port.stats.EPDDrops++
		} else {
			d.port.stats.PPDDrops++
		}
		return
	}
	out := d.port.out
	if first && sw.cfg.Discard == EPD && out.queuedAt(t) >= sw.cfg.EPDThreshold {
		d.port.stats.EPDDrops++
		st.discarding, st.early = !last, true
		return
	}
	if !d.forward(c, h, t) && sw.cfg.Discard != DiscardNone && !last {
		st.discarding, st.early = true, false
	}
}

// forward rewrites the header and queues the cell at d's port as of t.
func (d dest) forward(c *cells.Cell, h cells.Header, t time.Duration) bool {
	h.VPI, h.VCI = d.vpi, d.vci
	h.Put(c[:], cells.UNI)
	out := d.port.out
	if tc := d.port.sw.touched; len(tc) == 0 || tc[len(tc)-1] != out {
		d.port.sw.touched = append(tc, out)
	}
	return out.enqueue(c, t, 0)
}

// Stats returns a row per port: frames are cells on an atm-switch.
func (sw *Switch) Stats() []emulator.PortStats {
	rows := make([]emulator.PortStats, 0, len(sw.ports))
	for _, p := range sw.ports {
		st := p.stats
		row := emulator.PortStats{Port: p.name, RxFrames: st.RxCells, RxBytes: st.RxCells * cells.Size}
		if p.out != nil {
			ls := p.out.Stats()
			st.TxCells, st.QueueDrops, st.LostCells, st.LimitDrops = ls.TxCells, ls.QueueDrops, ls.LostCells, ls.LimitDrops
			row.TxFrames, row.TxBytes = ls.TxCells, ls.TxCells*cells.Size
			row.Drops = ls.QueueDrops + st.EPDDrops + st.PPDDrops
			row.ImpairDrops = ls.LostCells + ls.LimitDrops
			row.QueueHigh = ls.QueueHigh * cells.Size
			row.Busy = ls.BusyTime
		}
		row.ATM = &st
		rows = append(rows, row)
	}
	return rows
}
