package atm

import (
	"fmt"

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

// ParseDiscard reads "none", "ppd" or "epd".
func ParseDiscard(s string) (Discard, error) {
	switch s {
	case "", "none":
		return DiscardNone, nil
	case "ppd":
		return PPD, nil
	case "epd":
		return EPD, nil
	}
	return 0, fmt.Errorf("unknown discard policy %q: use none, ppd or epd", s)
}

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
// Unmapped cells are dropped and counted, as dynamips' switch does.
type Switch struct {
	s     *sched.Scheduler
	Name  string
	cfg   SwitchConfig
	ports []*SwitchPort
	vcs   map[inKey]dest
	vps   map[inKey]dest
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
}

// Name returns the port's name.
func (p *SwitchPort) Name() string { return p.name }

// MapVC switches cells arriving on in with VPI/VCI inVPI/inVCI to out as
// outVPI/outVCI. One direction; a duplex PVC needs a second call.
func (sw *Switch) MapVC(in *SwitchPort, inVPI, inVCI uint16, out *SwitchPort, outVPI, outVCI uint16) {
	sw.vcs[inKey{in, inVPI, inVCI}] = dest{out, outVPI, outVCI}
}

// MapVP switches every cell arriving on in with VPI inVPI to out as outVPI,
// VCI unchanged. VP entries are looked up before VC entries.
func (sw *Switch) MapVP(in *SwitchPort, inVPI uint16, out *SwitchPort, outVPI uint16) {
	sw.vps[inKey{in, inVPI, 0}] = dest{out, outVPI, 0}
}

// ReceiveCell implements CellReceiver.
func (p *SwitchPort) ReceiveCell(c *cells.Cell) {
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
		d.forward(c, h)
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
				d.forward(c, h)
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
	if first && sw.cfg.Discard == EPD && out.Queued() >= sw.cfg.EPDThreshold {
		d.port.stats.EPDDrops++
		st.discarding, st.early = !last, true
		return
	}
	if !d.forward(c, h) && sw.cfg.Discard != DiscardNone && !last {
		st.discarding, st.early = true, false
	}
}

// forward rewrites the header and queues the cell at d's port.
func (d dest) forward(c *cells.Cell, h cells.Header) bool {
	h.VPI, h.VCI = d.vpi, d.vci
	h.Put(c[:], cells.UNI)
	return d.port.out.Send(c, 0)
}

// Stats returns a row per port: frames are cells on an atm-switch.
func (sw *Switch) Stats() []emulator.PortStats {
	rows := make([]emulator.PortStats, 0, len(sw.ports))
	for _, p := range sw.ports {
		st := p.stats
		row := emulator.PortStats{Port: p.name, RxFrames: st.RxCells, RxBytes: st.RxCells * cells.Size}
		if p.out != nil {
			ls := p.out.Stats()
			st.TxCells, st.QueueDrops, st.LostCells = ls.TxCells, ls.QueueDrops, ls.LostCells
			row.TxFrames, row.TxBytes = ls.TxCells, ls.TxCells*cells.Size
			row.Drops = ls.QueueDrops + st.EPDDrops + st.PPDDrops
			row.ImpairDrops = ls.LostCells
			row.QueueHigh = ls.QueueHigh * cells.Size
			row.Busy = ls.BusyTime
		}
		row.ATM = &st
		rows = append(rows, row)
	}
	return rows
}
