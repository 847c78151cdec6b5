package atm

import (
	"encoding/binary"
	"errors"
	"math"
	"net/netip"
	"time"

	"github.com/atmlab/atmlab/cells"
	"github.com/atmlab/atmlab/cells/native"
	"github.com/atmlab/atmlab/emulator"
	"github.com/atmlab/atmlab/emulator/internal/ring"
	"github.com/atmlab/atmlab/emulator/sched"
)

// AAL is an ATM adaptation layer (package cells, which the lab-file
// package and theory read without importing the model).
type AAL = cells.AAL

// Adaptation layers.
const (
	AAL5  = cells.AAL5
	AAL34 = cells.AAL34
)

// ParseAAL reads "aal5" or "aal34".
func ParseAAL(s string) (AAL, error) { return cells.ParseAAL(s) }

// VC is a permanent virtual channel on an adapter's link.
type VC struct {
	VPI, VCI uint16
	// Peer is the address at the VC's far end, which ATMARP resolves to it.
	// A link's only VC may leave it zero: it then carries every packet, as a
	// point-to-point PVC does.
	Peer netip.Addr
	// Native makes the VC one of the native AAL API's (cells/native): its
	// SDUs are the host's own, with no IP and no encapsulation, and reach
	// the host in native frames. Classical IP never uses it.
	Native bool
}

// AdapterConfig configures a host's ATM adapter.
type AdapterConfig struct {
	AAL     AAL
	Encap   cells.Encap
	VCs     []VC
	PCR     float64       // peak cell rate per VC in cells/s; 0 = the line's
	Ring    int           // PDUs the adapter holds before the host must wait; default 64
	MaxSDU  int           // largest SDU it reassembles (the host's MTU plus the encapsulation)
	Timeout time.Duration // reassembly timeout; default 1 s
	// HostMAC is the host interface's address, which delivered frames go to.
	// If zero, the adapter learns it from the host's first frame.
	HostMAC [6]byte
}

// Adapter is a host's ATM NIC running Classical IP over ATM. The host sees
// an Ethernet interface: the adapter takes the IP packet out of each frame,
// encapsulates it (RFC 2684), segments it into cells on the VC that leads
// to its next hop and sends them on Out. Cells coming back are reassembled
// per VC; each good packet reaches the host in a frame. The adapter answers
// the host's ARP requests itself (the ATMARP of RFC 2225): each VC has its
// own MAC address, so the host's neighbour table picks the VC.
//
// It is the host port's Transmitter (emulator.HostPort.SetTX) and the
// receiver of the link coming back.
type Adapter struct {
	s    *sched.Scheduler
	cfg  AdapterConfig
	host emulator.Receiver
	out  *CellLink

	hostMAC [6]byte       // learnt from the host's first frame unless configured
	pool    emulator.Pool // the frames it delivers, reused once the host has them
	vcs     []*vcState
	byMAC   map[[6]byte]*vcState
	byIP    map[netip.Addr]*vcState
	byVC    map[uint32]*vcState

	inFlight int // PDUs queued or being sent
	onSpace  func()
	refused  uint64         // frames refused because the ring was full
	lens     ring.Ring[int] // the lengths of the frames in the ring, oldest first
	tag      byte           // AAL3/4 Btag/Etag
	sdu      []byte
	segs     []cells.Cell

	txPDUs, txBytes uint64
	stats           emulator.ATMStats
}

type vcState struct {
	VC
	mac   [6]byte
	r5    cells.Reassembler
	r34   cells.AAL34Reassembler
	shape float64 // earliest time of its next cell under the PCR, ns
}

var (
	_ emulator.Transmitter = (*Adapter)(nil)
	_ TrainReceiver        = (*Adapter)(nil)
	_ TrainReceiver        = (*SwitchPort)(nil)
)

// NewAdapter returns an adapter that hands frames to host.
func NewAdapter(s *sched.Scheduler, cfg AdapterConfig, host emulator.Receiver) *Adapter {
	if cfg.Ring == 0 {
		cfg.Ring = 64
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = time.Second
	}
	a := &Adapter{s: s, cfg: cfg, host: host, byMAC: map[[6]byte]*vcState{}, byIP: map[netip.Addr]*vcState{}, byVC: map[uint32]*vcState{},
		hostMAC: cfg.HostMAC}
	for _, v := range cfg.VCs {
		vc := &vcState{VC: v, mac: VCMAC(v.VPI, v.VCI)}
		vc.r5 = cells.Reassembler{MaxSDU: cfg.MaxSDU, Timeout: cfg.Timeout}
		vc.r34 = cells.AAL34Reassembler{MaxSDU: cfg.MaxSDU, Timeout: cfg.Timeout}
		a.byVC[vcKey(v.VPI, v.VCI)] = vc
		if v.Native {
			continue // not for IP: no MAC of its own in ATMARP's answers
		}
		a.vcs = append(a.vcs, vc)
		a.byMAC[vc.mac] = vc
		if v.Peer.IsValid() {
			a.byIP[v.Peer] = vc
		}
	}
	return a
}

// Attach sets the link the adapter sends its cells on.
func (a *Adapter) Attach(out *CellLink) {
	a.out = out
	out.OnSent = a.sent
}

// VCMAC is the MAC address ATMARP gives a VC: locally administered, 02:a7
// then the VPI and VCI.
func VCMAC(vpi, vci uint16) [6]byte { return native.VCMAC(vpi, vci) }

func vcKey(vpi, vci uint16) uint32 { return uint32(vpi)<<16 | uint32(vci) }

// Send implements emulator.Transmitter: the host sent a frame. An ARP
// request is answered; an IP packet is segmented onto its VC. Send returns
// false for a frame it drops, each counted: the ring is full
// (ChannelStats.QueueDrops), no VC leads to its destination (NoVC), it is
// too long for the AAL (TooLong), or it is neither IP nor ARP (NotIP). A
// router's labelled frame (EtherType 0x8847) travels as an LLC/SNAP routed
// PDU of that EtherType (RFC 2684), the form MPLS over AAL5 PVCs takes.
// A frame it drops it releases (emulator.Transmitter).
func (a *Adapter) Send(f *emulator.Frame) bool {
	if !a.send(f) {
		f.Release()
		return false
	}
	return true
}

func (a *Adapter) send(f *emulator.Frame) bool {
	d := f.Data
	if len(d) < emulator.EtherHeader {
		a.stats.NotIP++
		return false
	}
	if a.Full(len(d)) {
		a.refused++
		return false
	}
	if a.hostMAC == [6]byte{} {
		a.hostMAC = [6]byte(d[6:12])
	}
	etherType := binary.BigEndian.Uint16(d[12:])
	payload := d[emulator.EtherHeader:]
	var vc *vcState
	switch etherType {
	case native.EtherType:
		h, sdu, err := native.Parse(payload)
		if err != nil {
			a.stats.BadNative++
			return false
		}
		if vc = a.byVC[vcKey(h.VPI, h.VCI)]; vc == nil || !vc.Native {
			a.stats.NoVC++
			return false
		}
		a.sdu = append(a.sdu[:0], sdu...)
		return a.segment(f, vc)
	case emulator.EtherTypeARP:
		a.arp(payload)
		return true
	case cells.EtherTypeIPv4:
		if len(payload) >= 20 {
			payload = payload[:min(len(payload), int(binary.BigEndian.Uint16(payload[2:])))]
		}
	case cells.EtherTypeIPv6:
		if len(payload) >= 40 {
			payload = payload[:min(len(payload), 40+int(binary.BigEndian.Uint16(payload[4:])))]
		}
	case cells.EtherTypeMPLS:
		if a.cfg.Encap != cells.LLC {
			a.stats.NotIP++ // a VC-mux PVC tells IP by its version nibble only
			return false
		}
	default:
		a.stats.NotIP++ // CLIP carries IP (and, with LLC/SNAP, labelled IP)
		return false
	}
	vc = a.byMAC[[6]byte(d[:6])]
	if vc == nil && len(a.vcs) == 1 {
		vc = a.vcs[0]
	}
	if vc == nil {
		a.stats.NoVC++
		return false
	}
	a.sdu = a.cfg.Encap.Encapsulate(a.sdu[:0], etherType, payload)
	return a.segment(f, vc)
}

// segment sends a.sdu on vc as one PDU and takes frame f's place in the
// ring; false if the AAL cannot carry it.
func (a *Adapter) segment(f *emulator.Frame, vc *vcState) bool {
	h := cells.Header{VPI: vc.VPI, VCI: vc.VCI}
	var err error
	if a.cfg.AAL == AAL34 {
		a.tag++
		a.segs, err = cells.SegmentAAL34(a.segs[:0], a.sdu, a.tag, 0, h, cells.UNI)
	} else {
		a.segs, err = cells.SegmentAAL5(a.segs[:0], a.sdu, 0, h, cells.UNI)
	}
	if err != nil {
		a.stats.TooLong++
		return false
	}
	now := float64(a.s.Now())
	interval := 0.0
	if a.cfg.PCR > 0 {
		interval = 1e9 / a.cfg.PCR
	}
	for i := range a.segs {
		vc.shape = max(vc.shape, now)
		a.out.enqueue(&a.segs[i], a.s.Now(), time.Duration(math.Ceil(vc.shape)))
		vc.shape += interval
	}
	a.out.flush() // the PDU leaves as one train
	a.inFlight++
	a.lens.Push(len(f.Data))
	f.Release() // its cells are copies
	return true
}

// sent runs as each of the adapter's cells leaves: the last cell of a PDU
// frees its place in the ring.
func (a *Adapter) sent(c *cells.Cell) {
	last := c.LastOfPDU()
	if a.cfg.AAL == AAL34 {
		st, _, _, _ := c.SAR()
		last = st == cells.SegEOM || st == cells.SegSSM
	}
	if !last {
		return
	}
	wasFull := a.inFlight >= a.cfg.Ring
	a.inFlight--
	a.txPDUs++
	a.txBytes += uint64(a.lens.Pop())
	if wasFull && a.onSpace != nil {
		a.onSpace()
	}
}

// arp answers an ARP request for an address behind one of the VCs.
func (a *Adapter) arp(p []byte) {
	req, ok := emulator.ParseARP(p)
	if !ok || req.Op != emulator.ARPRequest || req.TPA == req.SPA { // the latter is gratuitous
		return
	}
	vc := a.byIP[req.TPA]
	if vc == nil && len(a.vcs) == 1 && !a.vcs[0].Peer.IsValid() {
		vc = a.vcs[0]
	}
	if vc == nil {
		return
	}
	a.stats.ARPReplies++
	f := &emulator.Frame{Data: req.Reply(vc.mac).Frame(), Born: a.s.Now()}
	a.s.At(a.s.Now(), func() { a.host.Receive(f) })
}

// ReceiveCell implements CellReceiver: a cell arrived from the network.
func (a *Adapter) ReceiveCell(c *cells.Cell) { a.receive(c, a.s.Now()) }

// AcceptsTrains implements TrainReceiver: an adapter reassembles each VC on
// its own, and a PDU's packet reaches the host when its last cell arrives.
func (a *Adapter) AcceptsTrains() bool { return true }

// ReceiveTrain implements TrainReceiver.
func (a *Adapter) ReceiveTrain(train []Arrival) {
	for i := range train {
		a.receive(&train[i].Cell, train[i].At)
	}
}

// receive takes a cell that arrived at t.
func (a *Adapter) receive(c *cells.Cell, t time.Duration) {
	a.stats.RxCells++
	if fixed, err := cells.CheckHEC(c[:]); err != nil {
		a.stats.HECDrops++
		return
	} else if fixed {
		a.stats.HECCorrected++
	}
	h := c.Header(cells.UNI)
	vc := a.byVC[vcKey(h.VPI, h.VCI)]
	if vc == nil {
		a.stats.UnknownVC++
		return
	}
	var sdu []byte
	var done bool
	var err error
	if a.cfg.AAL == AAL34 {
		sdu, done, err = vc.r34.Push(c, t)
	} else {
		sdu, done, err = vc.r5.Push(c, t)
	}
	if err != nil {
		a.count(err)
	}
	if done {
		a.deliver(vc, sdu)
	}
}

func (a *Adapter) count(err error) {
	switch {
	case errors.Is(err, cells.ErrCRC), errors.Is(err, cells.ErrCRC10):
		a.stats.CRCErrors++
	case errors.Is(err, cells.ErrSequence):
		a.stats.SeqErrors++
	case errors.Is(err, cells.ErrTimeout):
		a.stats.Timeouts++
	case errors.Is(err, cells.ErrTooLong):
		a.stats.TooLong++
	default:
		a.stats.LengthErrors++
	}
}

// deliver hands a reassembled packet to the host in a frame; a native
// VC's SDU goes as it is, in a native frame.
func (a *Adapter) deliver(vc *vcState, sdu []byte) {
	if vc.Native {
		a.deliverNative(vc, sdu)
		return
	}
	etherType, pkt, err := a.cfg.Encap.Decapsulate(sdu)
	if err != nil {
		a.stats.EncapErrors++
		return
	}
	f := a.frameTo(vc, etherType, len(pkt))
	copy(f.Data[emulator.EtherHeader:], pkt)
	a.host.Receive(f)
}

// deliverNative hands a native VC's SDU to the host in a native frame.
func (a *Adapter) deliverNative(vc *vcState, sdu []byte) {
	f := a.frameTo(vc, native.EtherType, native.HeaderLen+len(sdu))
	native.Append(f.Data[emulator.EtherHeader:emulator.EtherHeader], vc.VPI, vc.VCI, sdu)
	a.host.Receive(f)
}

// frameTo returns a frame from vc to the host with an Ethernet header and
// room for n octets after it.
func (a *Adapter) frameTo(vc *vcState, etherType uint16, n int) *emulator.Frame {
	f := a.pool.Get(emulator.EtherHeader + n)
	f.Born = a.s.Now()
	d := f.Data
	dst := a.hostMAC
	if dst == [6]byte{} {
		dst = [6]byte{0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF}
	}
	copy(d, dst[:])
	copy(d[6:], vc.mac[:])
	binary.BigEndian.PutUint16(d[12:], etherType)
	return f
}

// Full implements emulator.Transmitter: the adapter's ring of PDUs is
// full, whatever the frame's size.
func (a *Adapter) Full(int) bool { return a.inFlight >= a.cfg.Ring }

// SetOnSpace implements emulator.Transmitter.
func (a *Adapter) SetOnSpace(f func()) { a.onSpace = f }

// Stats implements emulator.Transmitter: frames are the PDUs sent.
func (a *Adapter) Stats() emulator.ChannelStats {
	ls := a.out.Stats()
	return emulator.ChannelStats{
		TxFrames: a.txPDUs, TxBytes: a.txBytes, QueueDrops: a.refused, ImpairDrops: ls.LostCells, LimitDrops: ls.LimitDrops,
		QueueHigh: ls.QueueHigh * cells.Size, BusyTime: ls.BusyTime,
	}
}

// ATM returns the adapter's cell counters.
func (a *Adapter) ATM() emulator.ATMStats {
	st := a.stats
	ls := a.out.Stats()
	st.TxCells, st.LostCells, st.LimitDrops = ls.TxCells, ls.LostCells, ls.LimitDrops
	return st
}
