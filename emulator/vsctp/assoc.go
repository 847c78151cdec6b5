package vsctp

import (
	"encoding/binary"
	"errors"
	"time"
)

// Specification constants (RFC 4960 §6.3, §15; RFC 7053).
const (
	RTOInitial = 3 * time.Second
	RTOMin     = 1 * time.Second
	RTOMax     = 60 * time.Second
	// SackDelay is the delayed SACK's timer (§6.2: at most 500 ms; 200 ms
	// is the recommended and Linux's default).
	SackDelay = 200 * time.Millisecond
	// MaxInitRetransmits is Max.Init.Retransmits.
	MaxInitRetransmits = 8
	// FlagImmediate is a DATA chunk's I bit (RFC 7053): SACK this at once.
	FlagImmediate = 0x08
)

// Implementation constants.
const (
	// DefaultBuf is an association's send and receive buffer unless the
	// test gives one (-s, -S): Linux's sctp_rmem default, 865,500 octets.
	DefaultBuf = 865500
	// cookieMagic marks atmlab's State Cookie (it carries no MAC: the
	// model trusts its own peer).
	cookieMagic = 0x766c6162
)

// Clock is the scheduler an association's timers run on.
type Clock interface {
	Now() time.Duration
	// After runs f after d unless the returned timer is stopped first.
	After(d time.Duration, f func()) Timer
}

// Timer is a pending callback.
type Timer interface{ Stop() bool }

// Config is what an association needs from the host under it.
type Config struct {
	Clock Clock
	// Output hands a packet to IP, to the peer's address.
	Output func(pkt []byte)
	// Room reports whether the host's queue takes another DATA packet now
	// (nil: always); Pump is to be called when it has room again.
	Room                func() bool
	MTU                 int // the path's IP MTU
	LocalPort, PeerPort uint16
	SendBuf, RecvBuf    int    // octets; 0: DefaultBuf
	Seed                uint64 // the verification tag and initial TSN are drawn from it
}

// Errors.
var (
	ErrWouldBlock = errors.New("sctp: send buffer full")
	ErrClosed     = errors.New("sctp: association not established")
)

type state int

const (
	closed state = iota
	listening
	cookieWait
	cookieEchoed
	established
	shutdownPending // Close asked: the data goes first
	shutdownSent
	shutdownReceived
	shutdownAckSent
)

// chunk is a DATA chunk the sender holds: queued, or sent and not yet
// acknowledged by the cumulative TSN.
type chunk struct {
	d        Data
	sent     bool
	acked    bool // by a gap ack block
	rtx      bool // marked for retransmission
	resent   bool // retransmitted once at least (Karn: no RTT from it)
	fastDone bool // fast-retransmitted already (only once, §7.2.4)
	inFlight bool
	miss     int
}

// Stats counts what an association did.
type Stats struct {
	DataSent, Retransmits, FastRetransmits, T3Expiries, SacksSent uint64
}

// Assoc is one end of an association: one ordered stream of user
// messages, one DATA chunk to a packet (a SACK bundled in front of it
// when one is due and fits). Call its methods and deliver its packets
// only on the scheduler's goroutine.
type Assoc struct {
	cfg   Config
	state state
	rng   uint64

	myTag, peerTag uint32
	// Sending.
	nextTSN  uint32
	ssn      uint16
	queue    []*chunk // not yet sent, in order
	out      []*chunk // sent and not cumulatively acked, in TSN order
	buffered int      // octets in queue and out: the send buffer's use
	flight   int      // octets outstanding: sent, not acked, not marked
	cwnd     int
	ssthresh int
	pba      int // partial_bytes_acked
	rwnd     int // the peer's, less what is in flight
	srtt     time.Duration
	rttvar   time.Duration
	rto      time.Duration
	timing   bool // an RTT measurement is under way on rttTSN
	rttTSN   uint32
	rttAt    time.Duration
	t3       Timer
	recovery bool // in Fast Recovery until recoverTSN is acked
	recover  uint32
	ctl      Timer // T1-init, T1-cookie or T2-shutdown
	ctlTries int
	cookie   []byte

	// Receiving.
	cumIn     uint32 // the last TSN received in sequence
	ooo       map[uint32][]byte
	oooFlags  map[uint32]uint8
	held      int // octets held out of order or in a partial message
	reasm     []byte
	dups      []uint32
	unacked   int // DATA packets received since the last SACK
	sackTimer Timer
	immediate bool

	// OnEstablished, OnMessage (the message valid during the call only),
	// OnWritable (the send buffer has room again) and OnClosed (the
	// shutdown is complete, or the peer is unreachable) are the
	// application's callbacks; any may be nil.
	OnEstablished func()
	OnMessage     func(msg []byte)
	OnWritable    func()
	OnClosed      func(err error)
	Stats         Stats
}

// New makes an association's end; Connect or Listen starts it.
func New(cfg Config) *Assoc {
	if cfg.SendBuf <= 0 {
		cfg.SendBuf = DefaultBuf
	}
	if cfg.RecvBuf <= 0 {
		cfg.RecvBuf = DefaultBuf
	}
	a := &Assoc{cfg: cfg, rng: cfg.Seed | 1, rto: RTOInitial, ooo: map[uint32][]byte{}, oooFlags: map[uint32]uint8{}}
	a.myTag = a.draw()
	a.nextTSN = a.draw()
	return a
}

// draw is xorshift64*: the model's tags and TSNs, never zero.
func (a *Assoc) draw() uint32 {
	a.rng ^= a.rng >> 12
	a.rng ^= a.rng << 25
	a.rng ^= a.rng >> 27
	if v := uint32((a.rng * 2685821657736338717) >> 32); v != 0 {
		return v
	}
	return 1
}

// InitialCwnd is RFC 4960 §7.2.1's: min(4*MTU, max(2*MTU, 4380)).
func InitialCwnd(mtu int) int { return min(4*mtu, max(2*mtu, 4380)) }

// Cwnd, Ssthresh and RTO are the sender's congestion state.
func (a *Assoc) Cwnd() int          { return a.cwnd }
func (a *Assoc) Ssthresh() int      { return a.ssthresh }
func (a *Assoc) RTO() time.Duration { return a.rto }
func (a *Assoc) Established() bool  { return a.state >= established }
func (a *Assoc) maxData() int       { return (a.cfg.MTU - 20 - CommonHeaderLen - DataHeaderLen) &^ 3 }
func (a *Assoc) packet(tag uint32) Packet {
	return Packet{SrcPort: a.cfg.LocalPort, DstPort: a.cfg.PeerPort, Tag: tag}
}

func (a *Assoc) send(p Packet) { a.cfg.Output(p.Append(make([]byte, 0, 64))) }

// Listen waits for the peer's INIT.
func (a *Assoc) Listen() { a.state = listening }

// Connect sends INIT and retries it on T1-init.
func (a *Assoc) Connect() {
	a.state = cookieWait
	a.ctlTries = 0
	a.control(func() {
		p := a.packet(0)
		p.Chunks = []Chunk{Init{Tag: a.myTag, Rwnd: uint32(a.cfg.RecvBuf), OutStreams: 1, InStreams: 1, TSN: a.nextTSN}.Chunk(false)}
		a.send(p)
	})
}

// control sends a control packet now and again on its timer (T1, T2),
// doubling RTO each time, until stopControl or too many tries.
func (a *Assoc) control(send func()) {
	if a.ctl != nil {
		a.ctl.Stop()
	}
	send()
	a.ctl = a.cfg.Clock.After(a.rto, func() {
		a.ctl = nil
		a.ctlTries++
		if a.ctlTries > MaxInitRetransmits {
			a.abort(errors.New("sctp: peer unreachable"))
			return
		}
		a.rto = min(2*a.rto, RTOMax)
		a.control(send)
	})
}

func (a *Assoc) stopControl() {
	if a.ctl != nil {
		a.ctl.Stop()
		a.ctl = nil
	}
}

func (a *Assoc) abort(err error) {
	a.stopControl()
	for _, t := range []Timer{a.t3, a.sackTimer} {
		if t != nil {
			t.Stop()
		}
	}
	a.state = closed
	if a.OnClosed != nil {
		a.OnClosed(err)
	}
}

// Send queues one user message, cut into DATA chunks that fill the path's
// MTU, and sends what the windows allow. ErrWouldBlock: the send buffer
// has no room for it now (OnWritable says when it has).
func (a *Assoc) Send(msg []byte) error {
	if a.state != established && a.state != shutdownReceived {
		return ErrClosed
	}
	if a.buffered > 0 && a.buffered+len(msg) > a.cfg.SendBuf {
		return ErrWouldBlock
	}
	per := a.maxData()
	for off := 0; off < len(msg) || off == 0; off += per {
		c := &chunk{d: Data{SSN: a.ssn, UserData: msg[off:min(off+per, len(msg))]}}
		if off == 0 {
			c.d.Flags |= FlagBeginning
		}
		if off+per >= len(msg) {
			c.d.Flags |= FlagEnd
		}
		c.d.UserData = append([]byte(nil), c.d.UserData...)
		a.queue = append(a.queue, c)
		a.buffered += len(c.d.UserData)
		if len(msg) == 0 {
			break
		}
	}
	a.ssn++
	a.Pump()
	return nil
}

// Close shuts the association down once every message sent is
// acknowledged (SHUTDOWN, SHUTDOWN ACK, SHUTDOWN COMPLETE).
func (a *Assoc) Close() {
	if a.state == established {
		a.state = shutdownPending
		if n := len(a.queue); n > 0 {
			a.queue[n-1].d.Flags |= FlagImmediate
		}
		a.maybeShutdown()
	}
}

func (a *Assoc) maybeShutdown() {
	if len(a.queue) > 0 || len(a.out) > 0 {
		return
	}
	switch a.state {
	case shutdownPending:
		a.state = shutdownSent
		a.ctlTries = 0
		a.control(func() {
			p := a.packet(a.peerTag)
			p.Chunks = []Chunk{tsnChunk(TypeShutdown, a.cumIn)}
			a.send(p)
		})
	case shutdownReceived:
		a.state = shutdownAckSent
		a.ctlTries = 0
		a.control(func() {
			p := a.packet(a.peerTag)
			p.Chunks = []Chunk{{Type: TypeShutdownAck}}
			a.send(p)
		})
	}
}

// Pump sends what the congestion window, the peer's window and the
// host's queue allow: marked retransmissions first, then new chunks.
func (a *Assoc) Pump() {
	for a.state >= established && a.state <= shutdownReceived {
		c := a.nextToSend()
		if c == nil || a.flight >= a.cwnd {
			return
		}
		if n := len(c.d.UserData); n > a.rwnd && a.flight > 0 {
			return // §6.1 A: one chunk may probe a closed window
		}
		if a.cfg.Room != nil && !a.cfg.Room() {
			return
		}
		a.transmit(c)
	}
}

// nextToSend is the earliest chunk marked for retransmission, else the
// next queued.
func (a *Assoc) nextToSend() *chunk {
	for _, c := range a.out {
		if c.rtx {
			return c
		}
	}
	if len(a.queue) > 0 {
		return a.queue[0]
	}
	return nil
}

// transmit sends one DATA chunk in a packet of its own, a due SACK in
// front of it when both fit the MTU.
func (a *Assoc) transmit(c *chunk) {
	now := a.cfg.Clock.Now()
	if !c.sent {
		c.sent = true
		c.d.TSN = a.nextTSN
		a.nextTSN++
		a.queue = a.queue[1:]
		a.out = append(a.out, c)
		if !a.timing {
			a.timing, a.rttTSN, a.rttAt = true, c.d.TSN, now
		}
	} else {
		c.rtx = false
		c.resent = true
		a.Stats.Retransmits++
		if a.timing && a.rttTSN == c.d.TSN {
			a.timing = false
		}
	}
	c.inFlight = true
	n := len(c.d.UserData)
	a.flight += n
	a.rwnd = max(a.rwnd-n, 0)
	p := a.packet(a.peerTag)
	dc := c.d.Chunk()
	if a.unacked > 0 {
		if s := a.sackChunk(); 20+CommonHeaderLen+ChunkHeaderLen+len(s.Value)+ChunkHeaderLen+len(dc.Value)+3 <= a.cfg.MTU {
			p.Chunks = append(p.Chunks, s)
			a.sackSent()
		}
	}
	p.Chunks = append(p.Chunks, dc)
	a.Stats.DataSent++
	a.send(p)
	if a.t3 == nil {
		a.startT3()
	}
}

func (a *Assoc) startT3() {
	if a.t3 != nil {
		a.t3.Stop()
	}
	a.t3 = a.cfg.Clock.After(a.rto, a.t3Expired)
}

// t3Expired is §6.3.3: back the timer off, collapse the window to one MTU
// (§7.2.3), mark everything outstanding for retransmission and send the
// earliest in one packet.
func (a *Assoc) t3Expired() {
	a.t3 = nil
	a.Stats.T3Expiries++
	a.ssthresh = max(a.cwnd/2, 4*a.cfg.MTU)
	a.cwnd = a.cfg.MTU
	a.pba = 0
	a.rto = min(2*a.rto, RTOMax)
	a.recovery = false
	a.timing = false
	for _, c := range a.out {
		if !c.acked {
			a.mark(c)
		}
	}
	if c := a.nextToSend(); c != nil && c.sent {
		a.transmit(c)
	} else {
		a.startT3()
	}
}

// mark marks c for retransmission; it leaves the flight.
func (a *Assoc) mark(c *chunk) {
	if c.inFlight {
		a.flight -= len(c.d.UserData)
		c.inFlight = false
	}
	c.rtx = true
}

// Deliver takes a packet IP delivered from the peer.
func (a *Assoc) Deliver(b []byte) {
	p, err := Parse(b)
	if err != nil || p.DstPort != a.cfg.LocalPort || p.SrcPort != a.cfg.PeerPort {
		return
	}
	if len(p.Chunks) > 0 && p.Chunks[0].Type != TypeInit && p.Tag != a.myTag {
		return // §8.5: not ours
	}
	gotData := false
	for _, c := range p.Chunks {
		switch c.Type {
		case TypeInit:
			a.onInit(c)
		case TypeInitAck:
			a.onInitAck(c)
		case TypeCookieEcho:
			a.onCookieEcho(c)
		case TypeCookieAck:
			if a.state == cookieEchoed {
				a.stopControl()
				a.establish()
			}
		case TypeData:
			if d, err := ParseData(c); err == nil && a.state >= established {
				if !gotData {
					a.unacked++ // before delivery: an answer sent from OnMessage carries the SACK
					gotData = true
				}
				a.onData(d)
			}
		case TypeSack:
			if s, err := ParseSack(c); err == nil && a.state >= established {
				a.onSack(s)
			}
		case TypeShutdown:
			if a.state >= established && a.state != shutdownAckSent {
				if len(c.Value) == 4 {
					a.onSack(Sack{CumTSN: binary.BigEndian.Uint32(c.Value), Rwnd: uint32(a.rwnd + a.flight)})
				}
				if a.state < shutdownReceived {
					a.state = shutdownReceived
				}
				a.maybeShutdown()
			}
		case TypeShutdownAck:
			if a.state == shutdownSent {
				q := a.packet(a.peerTag)
				q.Chunks = []Chunk{{Type: TypeShutdownComplete}}
				a.send(q)
				a.abort(nil)
			}
		case TypeShutdownComplete:
			if a.state == shutdownAckSent {
				a.abort(nil)
			}
		case TypeAbort:
			a.abort(errors.New("sctp: aborted by the peer"))
		}
	}
	if gotData {
		a.ackData()
	}
	a.Pump()
}

func (a *Assoc) onInit(c Chunk) {
	in, err := ParseInit(c)
	if err != nil || a.state != listening {
		return
	}
	cookie := binary.BigEndian.AppendUint32(nil, cookieMagic)
	for _, v := range []uint32{in.Tag, in.TSN, in.Rwnd} {
		cookie = binary.BigEndian.AppendUint32(cookie, v)
	}
	p := a.packet(in.Tag)
	p.Chunks = []Chunk{Init{Tag: a.myTag, Rwnd: uint32(a.cfg.RecvBuf), OutStreams: 1, InStreams: 1, TSN: a.nextTSN, Cookie: cookie}.Chunk(true)}
	a.send(p)
}

func (a *Assoc) onInitAck(c Chunk) {
	in, err := ParseInit(c)
	if err != nil || a.state != cookieWait {
		return
	}
	a.stopControl()
	a.peerTag, a.cumIn, a.rwnd = in.Tag, in.TSN-1, int(in.Rwnd)
	a.cookie = append([]byte(nil), in.Cookie...)
	a.state = cookieEchoed
	a.ctlTries = 0
	a.control(func() {
		p := a.packet(a.peerTag)
		p.Chunks = []Chunk{{Type: TypeCookieEcho, Value: a.cookie}}
		a.send(p)
	})
}

func (a *Assoc) onCookieEcho(c Chunk) {
	v := c.Value
	if len(v) != 16 || binary.BigEndian.Uint32(v) != cookieMagic {
		return
	}
	if a.state == listening {
		a.peerTag, a.cumIn, a.rwnd = binary.BigEndian.Uint32(v[4:]), binary.BigEndian.Uint32(v[8:])-1, int(binary.BigEndian.Uint32(v[12:]))
		a.establish()
	}
	if a.state >= established {
		p := a.packet(a.peerTag)
		p.Chunks = []Chunk{{Type: TypeCookieAck}}
		a.send(p)
	}
}

// establish starts the association's data transfer: cwnd and ssthresh as
// §7.2.1 sets them (ssthresh the peer's window).
func (a *Assoc) establish() {
	a.state = established
	a.cwnd = InitialCwnd(a.cfg.MTU)
	a.ssthresh = a.rwnd
	a.rto = RTOInitial
	if a.OnEstablished != nil {
		a.OnEstablished()
	}
}

// onData takes one DATA chunk (§6.2): in sequence it is delivered with
// whatever it lets follow; beyond a gap it is held, if the window has
// room; a duplicate is reported in the next SACK.
func (a *Assoc) onData(d Data) {
	if d.Flags&FlagImmediate != 0 {
		a.immediate = true
	}
	switch diff := int32(d.TSN - a.cumIn); {
	case diff <= 0 || a.ooo[d.TSN] != nil:
		a.dups = append(a.dups, d.TSN)
		a.immediate = true
		return
	case diff == 1:
		gap := len(a.ooo) > 0
		a.cumIn++
		a.deliver(d.UserData, d.Flags)
		for {
			u, ok := a.ooo[a.cumIn+1]
			if !ok {
				break
			}
			a.cumIn++
			a.held -= len(u)
			a.deliver(u, a.oooFlags[a.cumIn])
			delete(a.ooo, a.cumIn)
			delete(a.oooFlags, a.cumIn)
		}
		if gap {
			a.immediate = true // a gap filled, or some remain
		}
	default:
		if a.held+len(d.UserData) > a.cfg.RecvBuf {
			a.immediate = true // no room: dropped, and the SACK says so
			return
		}
		a.ooo[d.TSN] = append([]byte(nil), d.UserData...)
		a.oooFlags[d.TSN] = d.Flags
		a.held += len(d.UserData)
		a.immediate = true
	}
}

// deliver reassembles a message's fragments, in order, and hands the
// message to the application.
func (a *Assoc) deliver(u []byte, flags uint8) {
	if flags&FlagBeginning != 0 {
		a.held -= len(a.reasm)
		a.reasm = a.reasm[:0]
	}
	if flags&(FlagBeginning|FlagEnd) == FlagBeginning|FlagEnd {
		if a.OnMessage != nil {
			a.OnMessage(u)
		}
		return
	}
	a.reasm = append(a.reasm, u...)
	a.held += len(u)
	if flags&FlagEnd != 0 {
		a.held -= len(a.reasm)
		if a.OnMessage != nil {
			a.OnMessage(a.reasm)
		}
		a.reasm = a.reasm[:0]
	}
}

// ackData is §6.2's SACK rule after a packet with DATA: at once for a gap,
// a duplicate or an I bit, else every second packet, else within
// SackDelay.
func (a *Assoc) ackData() {
	if a.unacked == 0 {
		return // it went bundled with DATA
	}
	if a.immediate || a.unacked >= 2 {
		a.sendSack()
		return
	}
	if a.sackTimer == nil {
		a.sackTimer = a.cfg.Clock.After(SackDelay, func() {
			a.sackTimer = nil
			if a.unacked > 0 {
				a.sendSack()
			}
		})
	}
}

func (a *Assoc) sendSack() {
	p := a.packet(a.peerTag)
	p.Chunks = []Chunk{a.sackChunk()}
	a.sackSent()
	a.send(p)
}

func (a *Assoc) sackSent() {
	a.unacked, a.immediate, a.dups = 0, false, nil
	a.Stats.SacksSent++
	if a.sackTimer != nil {
		a.sackTimer.Stop()
		a.sackTimer = nil
	}
}

// sackChunk is the receiver's state: the cumulative TSN, the window left
// (the buffer less what is held), the gap ack blocks and duplicates.
func (a *Assoc) sackChunk() Chunk {
	s := Sack{CumTSN: a.cumIn, Rwnd: uint32(max(a.cfg.RecvBuf-a.held, 0)), Dups: a.dups}
	if len(a.ooo) > 0 {
		var offs []uint32
		for t := range a.ooo {
			offs = append(offs, t-a.cumIn)
		}
		sortU32(offs)
		for i := 0; i < len(offs) && len(s.Gaps) < 64; {
			j := i
			for j+1 < len(offs) && offs[j+1] == offs[j]+1 {
				j++
			}
			s.Gaps = append(s.Gaps, Gap{uint16(offs[i]), uint16(offs[j])})
			i = j + 1
		}
	}
	return s.Chunk()
}

func sortU32(v []uint32) {
	for i := 1; i < len(v); i++ {
		for j := i; j > 0 && v[j] < v[j-1]; j-- {
			v[j], v[j-1] = v[j-1], v[j]
		}
	}
}

// onSack is §6.2.1 and §7.2: acknowledged chunks leave, the RTT is
// sampled (§6.3.1), cwnd grows by slow start or congestion avoidance,
// three miss indications fast-retransmit a chunk (§7.2.4), T3 follows
// the earliest outstanding chunk (§6.3.2) and the peer's window is its
// a_rwnd less what is still in flight.
func (a *Assoc) onSack(s Sack) {
	if len(a.out) > 0 && int32(s.CumTSN-(a.out[0].d.TSN-1)) < 0 {
		return // older than what we know
	}
	now := a.cfg.Clock.Now()
	flightBefore := a.flight
	acked, advanced := 0, false
	rttDone := func(c *chunk) {
		if a.timing && c.d.TSN == a.rttTSN && !c.resent {
			a.timing = false
			a.sample(now - a.rttAt)
		}
	}
	for len(a.out) > 0 && int32(a.out[0].d.TSN-s.CumTSN) <= 0 {
		c := a.out[0]
		if !c.acked {
			acked += len(c.d.UserData)
		}
		if c.inFlight {
			a.flight -= len(c.d.UserData)
		}
		rttDone(c)
		a.buffered -= len(c.d.UserData)
		a.out = a.out[1:]
		advanced = true
	}
	var highest uint32
	newGap := false
	for _, g := range s.Gaps {
		for off := uint32(g.Start); off <= uint32(g.End); off++ {
			tsn := s.CumTSN + off
			if len(a.out) == 0 {
				break
			}
			i := int(tsn - a.out[0].d.TSN)
			if i < 0 || i >= len(a.out) {
				continue
			}
			c := a.out[i]
			if !c.acked {
				c.acked = true
				if c.inFlight {
					a.flight -= len(c.d.UserData)
					c.inFlight = false
				}
				c.rtx = false
				acked += len(c.d.UserData)
				highest, newGap = tsn, true
				rttDone(c)
			}
		}
	}
	if a.recovery && int32(s.CumTSN-a.recover) >= 0 {
		a.recovery = false
	}
	if advanced && !a.recovery {
		if a.cwnd <= a.ssthresh {
			if flightBefore >= a.cwnd {
				a.cwnd += min(acked, a.cfg.MTU)
			}
		} else {
			a.pba += acked
			if a.pba >= a.cwnd && flightBefore >= a.cwnd {
				a.pba -= a.cwnd
				a.cwnd += a.cfg.MTU
			}
		}
	}
	if len(a.out) == 0 {
		a.pba = 0
	}
	// Miss indications: chunks below the highest TSN this SACK newly acked.
	var fast []*chunk
	if newGap {
		for _, c := range a.out {
			if int32(c.d.TSN-highest) >= 0 {
				break
			}
			if !c.acked && !c.fastDone && c.sent {
				if c.miss++; c.miss >= 3 {
					fast = append(fast, c)
				}
			}
		}
	}
	a.rwnd = max(int(s.Rwnd)-a.flight, 0)
	if len(fast) > 0 {
		if !a.recovery {
			a.ssthresh = max(a.cwnd/2, 4*a.cfg.MTU)
			a.cwnd = a.ssthresh
			a.pba = 0
			a.recovery = true
			a.recover = a.nextTSN - 1
		}
		for _, c := range fast {
			c.fastDone = true
			a.mark(c)
		}
		a.Stats.FastRetransmits++
		earliest := fast[0] == a.out[0]
		a.transmit(fast[0]) // one packet whatever cwnd says
		if earliest {
			a.startT3()
		}
	}
	switch {
	case len(a.out) == 0:
		if a.t3 != nil {
			a.t3.Stop()
			a.t3 = nil
		}
	case advanced:
		a.startT3()
	}
	if advanced && a.OnWritable != nil && a.buffered < a.cfg.SendBuf {
		a.OnWritable()
	}
	a.maybeShutdown()
}

// sample updates SRTT, RTTVAR and RTO with one measurement (§6.3.1).
func (a *Assoc) sample(r time.Duration) {
	if a.srtt == 0 {
		a.srtt, a.rttvar = r, r/2
	} else {
		d := a.srtt - r
		if d < 0 {
			d = -d
		}
		a.rttvar = a.rttvar - a.rttvar/4 + d/4
		a.srtt = a.srtt - a.srtt/8 + r/8
	}
	a.rto = min(max(a.srtt+4*a.rttvar, RTOMin), RTOMax)
}
