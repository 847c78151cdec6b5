package emulator

import (
	"time"

	"github.com/atmlab/atmlab/emulator/internal/ring"
	"github.com/atmlab/atmlab/emulator/sched"
	"github.com/atmlab/atmlab/emulator/units"
)

// HostPort is a host's NIC as the emulator sees it: frames the host sends
// (read from its TAP) go out through TX; frames delivered to the port go to
// Sink (written to the TAP).
//
// The NIC pushes back like a real one (docs/design.md, modelling rule 4): TX has a
// small ring (QueueFrames), and the TAP reader asks CanAccept before taking
// another frame from the kernel, so the host's own queues hold the excess.
type HostPort struct {
	Name string // "node:interface"
	TX   Transmitter
	Sink func(f *Frame)
	// CPU, if set, makes the host as slow as a host of the past: every
	// frame it sends or receives costs it processing time first.
	CPU *FrameCPU

	RxFrames, RxBytes uint64 // delivered to the host
	onSpace           func()
	// sendFn and deliverFn are send and deliver, as the CPU calls them
	// (bindCPU).
	sendFn, deliverFn func(*Frame)
	// segments of a super-frame the NIC has taken but not yet queued
	// for TX: a TSO engine works through one descriptor at a time.
	pending ring.Ring[*Frame]
	txOf    Transmitter // the TX txTrain was asserted from
	txTrain TrainSender
	ps      []Piece
	carve   Carver

	// trains towards the host (SetSinkTrain)
	sinkTrain func(f *Frame, first, n int)
	hold      time.Duration
	sched     *sched.Scheduler
	groups    ring.Ring[group]
	groupAt   *sched.Timer
}

// group is what the host is handed in one go: segments first to
// first+n-1 of f (n 0: f itself, a wire frame), from when the first
// arrived (start) to when the last did (at).
type group struct {
	f         *Frame
	first, n  int
	start, at time.Duration
}

// SetSinkTrain makes the port take trains (when it has no CPU limit): a
// TCP super-frame's segments that arrive back to back, within hold of the
// first, go to sink together when the last has arrived, as a NIC's GRO
// would hand them over (each up to hold after it arrived); anything else
// goes to Sink at its own arrival, in order.
func (h *HostPort) SetSinkTrain(s *sched.Scheduler, hold time.Duration, sink func(f *Frame, first, n int)) {
	h.sinkTrain, h.hold, h.sched = sink, hold, s
	h.groupAt = s.NewTimer(h.handGroups)
}

// AcceptsTrains implements TrainReceiver.
func (h *HostPort) AcceptsTrains() bool { return h.sinkTrain != nil && h.CPU == nil }

// ReceiveTrain implements TrainReceiver: the pieces are grouped as GRO
// would join them and handed on when each group's last has arrived.
func (h *HostPort) ReceiveTrain(ps []Piece) {
	for _, p := range ps {
		if d := h.groups.Len(); d > 0 && p.K > 0 {
			g := h.groups.At(d - 1)
			if g.f == p.F && g.n > 0 && g.first+g.n == p.K && p.At-g.start <= h.hold {
				g.n++
				g.at = p.At
				continue
			}
		}
		if p.K < 0 || !p.F.GSO.TCP() {
			h.groups.Push(group{f: h.carve.Cut(p), start: p.At, at: p.At})
			if p.K >= 0 && p.K == p.F.GSO.Segs-1 {
				p.F.Release() // its last segment cut: the host holds copies
			}
			continue
		}
		h.groups.Push(group{f: p.F, first: p.K, n: 1, start: p.At, at: p.At})
	}
	if h.groups.Len() > 0 && !h.groupAt.Pending() {
		h.groupAt.Reset(h.groups.Peek().at)
	}
}

// handGroups hands the host the groups complete by now.
func (h *HostPort) handGroups() {
	now := h.sched.Now()
	for h.groups.Len() > 0 && h.groups.Peek().at <= now {
		g := h.groups.Pop()
		if g.n == 0 {
			h.deliver(g.f)
			continue
		}
		h.RxFrames += uint64(g.n)
		h.RxBytes += uint64(g.f.GSO.WireLen(len(g.f.Data), g.first, g.n))
		h.sinkTrain(g.f, g.first, g.n)
	}
	if h.groups.Len() > 0 {
		h.groupAt.Reset(h.groups.Peek().at)
	}
}

// CanAccept reports whether the NIC ring has room for another frame (and
// the host's CPU is free to hand it over) and no super-frame's segments
// are still waiting for it.
func (h *HostPort) CanAccept() bool {
	return h.pending.Len() == 0 && h.ringFree()
}

func (h *HostPort) ringFree() bool {
	return !h.TX.Full(0) && (h.CPU == nil || !h.CPU.sending)
}

// SetOnSpace sets what runs when the port can accept frames again.
func (h *HostPort) SetOnSpace(f func()) {
	h.onSpace = f
	h.TX.SetOnSpace(h.space)
}

// space runs when the ring or the CPU has room again: a super-frame's
// waiting segments go first, then the reader may bring more.
func (h *HostPort) space() {
	for h.pending.Len() > 0 && h.ringFree() {
		h.input(h.pending.Pop())
	}
	if h.onSpace != nil && h.CanAccept() {
		h.onSpace()
	}
}

// InputSegments takes the wire frames of one super-frame (see Segment) in
// order. They enter the NIC ring one by one as it has room, each at the
// instant a reader handing over frames singly would have given it, so
// they depart exactly as the same frames sent one at a time would; until
// the last has entered, CanAccept is false.
func (h *HostPort) InputSegments(fs []*Frame) {
	for _, f := range fs {
		h.pending.Push(f)
	}
	for h.pending.Len() > 0 && h.ringFree() {
		h.input(h.pending.Pop())
	}
}

// InputSuper takes a frame read from the host that may be a super-frame
// (Frame.GSO). Its segments enter the NIC ring as InputSegments' do, at
// the same instants, but as one train: the transmitter times them all at
// once and the frame is cut only where a wire frame must exist. A host
// with a CPU limit, or a transmitter that cannot take a train now, gets
// the segments cut here, one frame each. CanAccept stays false while the
// train's segments wait for the ring.
func (h *HostPort) InputSuper(f *Frame) {
	if f.GSO.Segs == 0 {
		h.input(f)
		return
	}
	if ts := h.trainSender(); ts != nil && h.CPU == nil && h.pending.Len() == 0 {
		h.ps = Pieces(h.ps[:0], f, 0) // as of now: the channel starts none earlier
		if ok, _ := ts.SendTrain(h.ps, true); ok {
			return
		}
	}
	for k := range f.GSO.Segs {
		h.pending.Push(h.carve.Cut(Piece{f, k, 0}))
	}
	f.Release() // cut: its segments are copies
	h.InputSegments(nil)
}

// trainSender returns TX as a TrainSender, or nil, asserting it only when
// TX changed (see Channel's trainDst).
func (h *HostPort) trainSender() TrainSender {
	if h.TX != h.txOf {
		h.txOf = h.TX
		h.txTrain, _ = h.TX.(TrainSender)
	}
	return h.txTrain
}

// Input takes a frame from the host. It returns false if the ring was full,
// which a well-behaved reader never lets happen (it checks CanAccept).
func (h *HostPort) Input(f *Frame) bool {
	return h.input(f)
}

func (h *HostPort) input(f *Frame) bool {
	if h.CPU == nil {
		return h.TX.Send(f)
	}
	h.bindCPU()
	h.CPU.sending = true
	h.CPU.process(len(f.Data), f.Born, f, h.sendFn, false)
	return true
}

// bindCPU makes, once, the functions the CPU calls when it has processed
// a frame, so that no frame allocates one.
func (h *HostPort) bindCPU() {
	if h.sendFn == nil {
		h.sendFn, h.deliverFn = h.send, h.deliver
	}
}

// send sends a frame the host's CPU has processed, and frees the CPU for
// the next.
func (h *HostPort) send(f *Frame) {
	h.CPU.sending = false
	h.TX.Send(f)
	h.space()
}

// Receive implements Receiver: the frame is handed to the host, after its
// CPU, if it has a limit, has processed it.
func (h *HostPort) Receive(f *Frame) {
	if h.CPU == nil {
		h.deliver(f)
		return
	}
	h.bindCPU()
	if !h.CPU.Take(f, h.deliverFn) {
		f.Release() // an overrun: the host never sees it
	}
}

func (h *HostPort) deliver(f *Frame) {
	h.RxFrames++
	h.RxBytes += uint64(len(f.Data))
	if h.Sink != nil {
		h.Sink(f)
	}
}

// FrameCPU is a processor that spends a cost on every frame, one frame at a
// time: a slow host's (the CERNET study's 75 MHz SPARCstation copying at 77
// Mbit/s), whose frames in both directions cost PerPacket plus their octets
// copied at Copy, or a software switch's (GNS3's). Frames waiting for it
// queue, Queue of them at most (more are overruns).
type FrameCPU struct {
	PerPacket time.Duration
	Copy      units.BitRate // a per-octet cost as a copy rate (8 bits an octet at it); 0: none
	Queue     int           // frames waiting for the CPU

	s         *sched.Scheduler
	busyUntil time.Duration
	sending   bool
	waiting   int
	Overruns  uint64      // frames dropped because the CPU was behind
	free      []*frameJob // finished jobs, for the next frames
}

// frameJob is one frame's processing: done(f) runs when it ends, from
// the job's own timer, which process schedules as sched.At would, so
// that it keeps its place among simultaneous events. Jobs are reused
// (FrameCPU.free): a frame allocates no event and no closure.
type frameJob struct {
	c     *FrameCPU
	t     *sched.Timer
	f     *Frame
	done  func(*Frame)
	taken bool // by Take: it counts in waiting until it ends
}

// end frees the job for the next frame, then hands its frame on.
func (j *frameJob) end() {
	c, f, done := j.c, j.f, j.done
	if j.taken {
		c.waiting--
	}
	*j = frameJob{c: c, t: j.t}
	c.free = append(c.free, j)
	done(f)
}

// DefaultFrameQueue is FrameCPU.Queue unless given.
const DefaultFrameQueue = 64

// NewFrameCPU returns an idle CPU.
func NewFrameCPU(s *sched.Scheduler, perPacket time.Duration, copyRate units.BitRate, queue int) *FrameCPU {
	if queue == 0 {
		queue = DefaultFrameQueue
	}
	return &FrameCPU{PerPacket: perPacket, Copy: copyRate, Queue: queue, s: s}
}

// process runs done(f) once the CPU has spent a frame of n octets' cost
// on it, starting after the work already queued and no earlier than ready
// (a frame that waited for the CPU while the real-time loop ran late is
// worked on from when it was ready, so the lateness does not slow the host
// down). taken: the frame counts in waiting until then.
func (c *FrameCPU) process(n int, ready time.Duration, f *Frame, done func(*Frame), taken bool) {
	if ready <= 0 || ready > c.s.Now() {
		ready = c.s.Now() // not said, or not yet
	}
	c.busyUntil = max(c.busyUntil, ready) + c.PerPacket
	if c.Copy > 0 {
		c.busyUntil += c.Copy.TxTime(8 * int64(n))
	}
	var j *frameJob
	if k := len(c.free); k > 0 {
		j, c.free = c.free[k-1], c.free[:k-1]
	} else {
		j = &frameJob{c: c}
		j.t = c.s.NewTimer(j.end)
	}
	j.f, j.done, j.taken = f, done, taken
	j.t.Reset(c.busyUntil)
}

// Take queues a frame that arrived for the CPU; done(f) runs once it is
// processed. A full queue refuses it (an overrun) and returns false. done
// is best made once, not per frame: Take itself allocates nothing.
func (c *FrameCPU) Take(f *Frame, done func(*Frame)) bool {
	if c.waiting >= c.Queue {
		c.Overruns++
		return false
	}
	c.waiting++
	c.process(len(f.Data), c.s.Now(), f, done, true)
	return true
}

// PortStats is one row of `atmlab stats`: a port of a node and the channel
// that transmits from it.
type PortStats struct {
	Port        string `json:"port"`
	RxFrames    uint64 `json:"rx_frames"`
	RxBytes     uint64 `json:"rx_bytes"`
	TxFrames    uint64 `json:"tx_frames"`
	TxBytes     uint64 `json:"tx_bytes"`
	Drops       uint64 `json:"drops"`        // queue (tail) drops at this port's transmitter
	ImpairDrops uint64 `json:"impair_drops"` // loss and limit drops on the link leaving it
	QueueHigh   int    `json:"queue_high_bytes"`
	Queue       int    `json:"queue_bytes"` // queued now, for the live view
	// HostDrops are frames a host's own kernel dropped at its TAP's ring:
	// the emulator, not the model, fell behind (filled in by the kernel package).
	HostDrops uint64 `json:"host_drops,omitempty"`
	// QdiscDrops are frames the host's qdisc in front of its TAP dropped
	// (a sender faster than its link, as a real NIC's queue would), and
	// QdiscRequeues those the TAP handed back to it (filled in by the kernel
	// package).
	QdiscDrops    uint64 `json:"qdisc_drops,omitempty"`
	QdiscRequeues uint64 `json:"qdisc_requeues,omitempty"`
	// LateDropped are the frames for this host the emulator dropped rather
	// than hand them over later than its release bound (filled in by the
	// kernel package); a flooded frame counts at each port it was late for.
	LateDropped uint64 `json:"late_dropped,omitempty"`
	// HostOverruns are frames a host with a CPU limit could not take in time.
	HostOverruns uint64 `json:"host_overruns,omitempty"`
	// CPUDrops are frames arriving at a software switch's port that its
	// CPU had no room for.
	CPUDrops uint64 `json:"cpu_drops,omitempty"`
	// HalfDuplex holds a port's CSMA/CD counters when it is on a hub.
	HalfDuplex *HalfDuplexStats `json:"half_duplex,omitempty"`
	// ATM holds a port's cell counters when it is on an ATM link.
	ATM *ATMStats `json:"atm,omitempty"`
	// Router holds a router interface's forwarding counters, for the
	// packets that arrived on it.
	Router *RouterStats  `json:"router,omitempty"`
	Busy   time.Duration `json:"busy_ns"`
}

// PortName implements Port.
func (h *HostPort) PortName() string { return h.Name }

// SetTX implements Port.
func (h *HostPort) SetTX(t Transmitter) { h.TX = t }

// Stats implements Port.
func (h *HostPort) Stats() PortStats {
	row := RowOf(h.Name, h.RxFrames, h.RxBytes, h.TX)
	if h.CPU != nil {
		row.HostOverruns = h.CPU.Overruns
	}
	return row
}

// Port is one attachment point of a node: frames arrive through Receive,
// leave through the transmitter the network gives it with SetTX.
type Port interface {
	Receiver
	PortName() string
	SetTX(t Transmitter)
	Stats() PortStats
}

// Transmitter sends a port's frames: one direction of a point-to-point
// link (a Channel) or a station on a shared medium (a hub's). Every
// implementation passes the emutest conformance suite.
//
// Send never blocks. It returns whether it took f: a frame it does not
// take (no room, or one its medium cannot carry, such as a non-IP frame on
// an ATM adapter) is dropped and counted, in Stats().QueueDrops when there
// was no room. The frames it takes reach the far end in the order sent,
// or are counted as ImpairDrops or LimitDrops on the way. Either way f is
// the transmitter's from the call on: a frame it drops, there or on the
// way, it releases (Frame.Release), so that a pooled frame is reused
// rather than left to the collector (a full hour-long delay pipe dropped
// ~8,000 frames a second at 100M, 18 MB of garbage a second).
//
// Full(n) reports whether Send would refuse a frame of n octets for want of
// room now. The transmitter is full while Full(0) holds (a frame-limited
// queue at its limit; a byte limit alone never makes it so): the function
// given to SetOnSpace runs once each time it stops being full, so a reader
// that waits for room is woken exactly once.
type Transmitter interface {
	Send(f *Frame) bool
	Full(n int) bool
	Stats() ChannelStats
	SetOnSpace(f func())
}

// Tapper is a capture point: the function given to SetTap sees every
// frame the component delivers, at its delivery time, and replaces the one
// given before (nil removes it); a capture that fans out to several
// readers does so in its one function (control's capture). A component
// with several capture points has a Tapper for each: an ATM cell link
// gives every atm.Tap its own. What the Frame's Data holds is the capture's
// record in its link type: an Ethernet frame from Ethernet components, an
// ERF or SunATM record from an atm.Tap.
type Tapper interface {
	SetTap(tap func(f *Frame, at time.Duration))
}

var (
	_ Transmitter = (*Channel)(nil)
	_ Tapper      = (*Channel)(nil)
	_ Port        = (*HostPort)(nil)
)

// HalfDuplexStats are an 802.3 half-duplex MAC's counters, named as NIC
// drivers report them.
type HalfDuplexStats struct {
	Collisions         uint64 `json:"collisions"`                // collisions this station took part in
	SingleCollision    uint64 `json:"single_collision_frames"`   // frames sent after exactly one collision
	MultipleCollision  uint64 `json:"multiple_collision_frames"` // frames sent after two to fifteen
	ExcessiveCollision uint64 `json:"excessive_collisions"`      // frames dropped after the attempt limit
	LateCollisions     uint64 `json:"late_collisions"`           // collisions detected after the first 512 bits
	Deferred           uint64 `json:"deferred"`                  // transmissions that waited for the medium
}

// Connect joins two ports with a full-duplex link: one channel each way.
// ab configures the direction a sends in, ba the other.
func Connect(s *sched.Scheduler, a, b Port, ab, ba ChannelConfig) (aToB, bToA *Channel) {
	aToB = NewChannel(s, ab, b)
	bToA = NewChannel(s, ba, a)
	a.SetTX(aToB)
	b.SetTX(bToA)
	return aToB, bToA
}

// RowOf fills a PortStats from receive counters and the port's transmitter.
func RowOf(name string, rxFrames, rxBytes uint64, tx Transmitter) PortStats {
	row := PortStats{Port: name, RxFrames: rxFrames, RxBytes: rxBytes}
	if tx != nil {
		st := tx.Stats()
		row.TxFrames, row.TxBytes = st.TxFrames, st.TxBytes
		row.Drops = st.QueueDrops
		row.ImpairDrops = st.ImpairDrops + st.LimitDrops
		row.QueueHigh, row.Queue = st.QueueHigh, st.Queue
		row.Busy = st.BusyTime
		if hd, ok := tx.(interface{ HalfDuplex() HalfDuplexStats }); ok {
			h := hd.HalfDuplex()
			row.HalfDuplex = &h
		}
		if a, ok := tx.(interface{ ATM() ATMStats }); ok {
			st := a.ATM()
			row.ATM = &st
		}
	}
	return row
}

// ATMStats are an ATM port's cell-level counters: a host's adapter (its SAR
// and ATMARP) or an atm-switch port. Cells are counted where they leave
// (Tx, on the link leaving the port) and arrive (Rx).
type ATMStats struct {
	TxCells      uint64 `json:"tx_cells"`
	RxCells      uint64 `json:"rx_cells"`
	QueueDrops   uint64 `json:"queue_drops,omitempty"`   // cells refused by a full output queue
	EPDDrops     uint64 `json:"epd_drops,omitempty"`     // cells of PDUs discarded early (EPD)
	PPDDrops     uint64 `json:"ppd_drops,omitempty"`     // cells of PDUs discarded partially (PPD)
	LostCells    uint64 `json:"lost_cells,omitempty"`    // lost on the link leaving the port
	LimitDrops   uint64 `json:"limit_drops,omitempty"`   // dropped at the pipe's limit on the link leaving the port
	HECCorrected uint64 `json:"hec_corrected,omitempty"` // single-bit header errors corrected
	HECDrops     uint64 `json:"hec_drops,omitempty"`     // cells with uncorrectable headers
	UnknownVC    uint64 `json:"unknown_vc,omitempty"`    // cells on no configured VC
	CRCErrors    uint64 `json:"crc_errors,omitempty"`    // PDUs (AAL5) or cells (AAL3/4) failing their CRC
	LengthErrors uint64 `json:"length_errors,omitempty"` // PDUs whose length or CPCS fields disagree
	EncapErrors  uint64 `json:"encap_errors,omitempty"`  // PDUs without a routed RFC 2684 header (the ends' encapsulations differ)
	SeqErrors    uint64 `json:"seq_errors,omitempty"`    // AAL3/4 segments out of sequence
	Timeouts     uint64 `json:"timeouts,omitempty"`      // PDUs whose cells stopped coming
	TooLong      uint64 `json:"too_long,omitempty"`      // PDUs over the receiver's maximum SDU
	NoVC         uint64 `json:"no_vc,omitempty"`         // frames from the host with no VC to their destination
	NotIP        uint64 `json:"not_ip,omitempty"`        // frames from the host that are neither IP nor ARP (Classical IP carries IP only)
	BadNative    uint64 `json:"bad_native,omitempty"`    // native AAL API frames from the host whose header does not parse (cells/native)
	ARPReplies   uint64 `json:"arp_replies,omitempty"`   // ATMARP answers given to the host
}

// RouterStats are a router interface's counters for the packets that
// arrived on it.
type RouterStats struct {
	Forwarded  uint64 `json:"forwarded"`             // routed as IP
	Pushed     uint64 `json:"pushed,omitempty"`      // labelled at the ingress
	Swapped    uint64 `json:"swapped,omitempty"`     // label swapped
	Popped     uint64 `json:"popped,omitempty"`      // label popped (penultimate hop, or explicit null at the egress)
	TTLExpired uint64 `json:"ttl_expired,omitempty"` // IP or label TTL ran out
	NoRoute    uint64 `json:"no_route,omitempty"`    // no route to the destination
	NoLabel    uint64 `json:"no_label,omitempty"`    // a label with no binding, or MPLS off
	TooBig     uint64 `json:"too_big,omitempty"`     // larger than the next link's MTU
	ICMPSent   uint64 `json:"icmp_sent,omitempty"`   // time exceeded and unreachable messages sent
	Local      uint64 `json:"local,omitempty"`       // addressed to the router (other than ping)
	Malformed  uint64 `json:"malformed,omitempty"`
	CPUDrops   uint64 `json:"cpu_drops,omitempty"` // refused by the full queue of the router's CPU
}
