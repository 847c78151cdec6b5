package ether

import (
	"math"
	"math/rand/v2"
	"time"

	"github.com/atmlab/atmlab/emulator"
	"github.com/atmlab/atmlab/emulator/internal/ring"
	"github.com/atmlab/atmlab/emulator/sched"
	"github.com/atmlab/atmlab/emulator/units"
)

// IEEE 802.3 half-duplex specification constants (clause 4), in bit times.
const (
	SlotBits     = 512 // slotTime at 10 and 100 Mbit/s
	GapBits      = 96  // interFrameGap
	JamBits      = 32  // jamSize
	PreambleBits = 64  // preamble + SFD
	AttemptLimit = 16  // transmissions of one frame before it is dropped
	BackoffLimit = 10  // the backoff range stops doubling here
)

// Repeater delays, one way, in bit times: half the round-trip figures of
// 802.3u for Class I (140 BT) and Class II (92 BT) repeaters, and half the
// 100 BT of a pair of TX DTEs.
const (
	RepeaterClassI  = 70
	RepeaterClassII = 46
	DTEPairBits     = 50
)

// HubConfig describes a shared medium.
type HubConfig struct {
	Rate units.BitRate
	// Repeater is the hub's own one-way delay plus the DTEs', in bit
	// times; with the stations' cable delays it sets the collision window.
	Repeater int
	Seed     uint64
}

// Hub is a repeater hub: one shared half-duplex medium on which every
// attached station runs an 802.3 CSMA/CD MAC on behalf of its device (the
// hosts' kernels see full-duplex TAPs, so the hub decides collisions).
//
// Carrier from station j reaches station i after τ_ij = d_i + repeater + d_j
// (cable delays d). A station transmits when it has sensed no carrier for the
// 96-bit gap (1-persistent: all waiting stations start together when it
// ends); it senses a transmission that started at s from s + τ on, so two
// starts less than τ apart — or at the same instant — collide. A colliding
// station detects the other's signal, finishes the preamble, jams 32 bits,
// and backs off r slots, r uniform in [0, 2^min(n,10) - 1] after its n-th
// collision; the 16th collision drops the frame. A successful frame reaches
// every other station's device when its last bit arrives there.
//
// Time is model time at bit-time resolution; call only on the scheduler
// goroutine.
type Hub struct {
	Name     string
	s        *sched.Scheduler
	cfg      HubConfig
	bit      time.Duration // one bit time; exact at 10M, 100M, 1G
	rng      *rand.Rand
	stations []*Station
	maxCable time.Duration   // longest station cable: sets the widest collision window
	txs      []*transmission // on the medium, or ended less than the longest window ago

	active         int           // transmissions in progress
	busySince      time.Duration // start of the current busy period
	periodCollided bool          // the current busy period holds a collision

	// Observe, if set, sees every transmission as it ends (for tests).
	Observe func(Record)

	stats HubStats
}

// HubStats are a hub's own counters.
type HubStats struct {
	Successes     uint64        `json:"successes"`
	Collisions    uint64        `json:"collisions"`   // collision events (one per group of overlapping starts)
	Busy          time.Duration `json:"busy_ns"`      // some station transmitting (successes and collisions)
	CollisionTime time.Duration `json:"collision_ns"` // of which in periods that held a collision
	FrameBits     uint64        `json:"frame_bits"`   // DA..FCS bits of successful frames
}

// Record is one transmission, for observers and tests.
type Record struct {
	Station    int
	Start, End time.Duration // the station's own view: first preamble bit, last bit (incl. jam)
	Collided   bool
	Late       bool
	Attempt    int // 1 for a frame's first transmission
	Backoff    int // slots drawn after this collision (-1 if none)
	Dropped    bool
	Frame      *emulator.Frame
}

// NewHub returns a hub with no stations.
func NewHub(s *sched.Scheduler, name string, cfg HubConfig) *Hub {
	return &Hub{Name: name, s: s, cfg: cfg, bit: cfg.Rate.TxTime(1),
		rng: rand.New(rand.NewPCG(cfg.Seed, 0x6875_62))}
}

// Rate returns the medium's bit rate.
func (h *Hub) Rate() units.BitRate { return h.cfg.Rate }

// Stats returns the hub's counters.
func (h *Hub) Stats() HubStats { return h.stats }

// Stations returns the hub's stations in the order they were added.
func (h *Hub) Stations() []*Station { return h.stations }

// bits converts bit times to model time.
func (h *Hub) bits(n int) time.Duration { return time.Duration(n) * h.bit }

// AddStation attaches a station named name whose cable has one-way delay
// cable. Its queue holds at most queueFrames frames (a NIC ring) or
// queueBytes bytes (a switch port's buffer); zero means no limit. dst is
// the device behind the station, which receives what others send.
func (h *Hub) AddStation(name string, cable time.Duration, queueFrames, queueBytes int, dst emulator.Receiver) *Station {
	st := &Station{hub: h, index: len(h.stations), name: name, cable: cable,
		queueFrames: queueFrames, queueBytes: queueBytes, dst: dst}
	h.stations = append(h.stations, st)
	h.maxCable = max(h.maxCable, cable)
	return st
}

// tau is the one-way delay between two stations.
func (h *Hub) tau(a, b *Station) time.Duration {
	if a == b {
		return 0
	}
	return a.cable + h.bits(h.cfg.Repeater) + b.cable
}

// transmission is one station's signal on the medium.
type transmission struct {
	st       *Station
	start    time.Duration
	end      time.Duration // last bit, including a jam after a collision
	detect   time.Duration // when the station sees another's signal; 0 if never
	collided bool
	timer    *sched.Timer
	frame    *emulator.Frame
	group    *transmission // the first transmission of its collision, for counting events
}

// senses reports whether st, at time t, hears carrier from another station,
// and if so when that carrier drops at st (as far as the transmissions'
// current ends say; a collision can only make them earlier). A signal that
// reaches st exactly at t is not yet sensed: starts at the same instant
// collide, as 1-persistent stations do.
func (h *Hub) senses(st *Station, t time.Duration) (bool, time.Duration) {
	busy, drop := false, t
	for _, x := range h.txs {
		if x.st != st {
			d := h.tau(x.st, st)
			if x.start+d < t && t < x.end+d {
				busy, drop = true, max(drop, x.end+d)
			}
		}
	}
	return busy, drop
}

// quietSince returns when carrier last dropped at st, as seen by st; a
// medium that has carried nothing yet has been quiet forever.
func (h *Hub) quietSince(st *Station, t time.Duration) time.Duration {
	last := time.Duration(math.MinInt64 / 2)
	for _, x := range h.txs {
		if drop := x.end + h.tau(x.st, st); drop <= t {
			last = max(last, drop)
		}
	}
	return last
}

// prune forgets transmissions whose carrier has dropped everywhere and
// whose gap has passed.
func (h *Hub) prune(now time.Duration) {
	keep := h.txs[:0]
	window := 2*h.maxCable + h.bits(h.cfg.Repeater) + h.bits(GapBits)
	for _, x := range h.txs {
		if x.end+window >= now || x.timer.Pending() {
			keep = append(keep, x)
		}
	}
	for i := len(keep); i < len(h.txs); i++ {
		h.txs[i] = nil
	}
	h.txs = keep
}

// start puts st's head frame on the medium now and settles collisions with
// signals it did not sense.
func (h *Hub) start(st *Station) {
	now := h.s.Now()
	f := *st.queue.Peek() // wake schedules look only for a station with a frame queued
	frameBits := 8 * emulator.EtherFrame(len(f.Data))
	x := &transmission{st: st, start: now, end: now + h.bits(PreambleBits+frameBits), frame: f}
	st.cur = x
	st.attempts++
	if h.active == 0 {
		h.busySince, h.periodCollided = now, false
	}
	h.active++
	hit := []*transmission{x}
	for _, y := range h.txs {
		if y.st == st || y.end <= now {
			continue
		}
		d := h.tau(x.st, y.st)
		// y's signal reaches x at y.start+d; x's reaches y at now+d.
		collide := false
		if at := y.start + d; at < x.end {
			x.hitAt(at)
			collide = true
		}
		if at := now + d; at < y.end {
			y.hitAt(at)
			hit = append(hit, y)
			collide = true
		}
		if collide {
			if y.group == nil {
				y.group = y
			}
			x.group = y.group
		}
	}
	h.txs = append(h.txs, x)
	for _, y := range hit {
		h.reschedule(y)
	}
}

// hitAt records that x's station sees another's signal at t.
func (x *transmission) hitAt(t time.Duration) {
	if !x.collided || t < x.detect {
		x.detect = t
	}
	x.collided = true
}

// reschedule (re)arms the end of x: its full frame, or after a collision the
// rest of its preamble and the jam.
func (h *Hub) reschedule(x *transmission) {
	if x.collided {
		x.end = max(x.start+h.bits(PreambleBits), x.detect) + h.bits(JamBits)
	}
	if x.timer != nil {
		x.timer.Stop()
	}
	x.timer = h.s.At(x.end, func() { h.finish(x) })
}

// finish runs at the last bit of x (its frame or its jam).
func (h *Hub) finish(x *transmission) {
	st := x.st
	now := h.s.Now()
	h.active--
	h.periodCollided = h.periodCollided || x.collided
	if h.active == 0 {
		h.stats.Busy += now - h.busySince
		if h.periodCollided {
			h.stats.CollisionTime += now - h.busySince
		}
	}
	rec := Record{Station: st.index, Start: x.start, End: x.end, Collided: x.collided, Attempt: st.attempts, Backoff: -1, Frame: x.frame}
	st.cur = nil
	if x.collided {
		st.hd.Collisions++
		if x.group == x || x.group == nil {
			h.stats.Collisions++
		}
		late := x.detect-x.start > h.bits(PreambleBits+SlotBits)
		if late {
			st.hd.LateCollisions++
			rec.Late = true
		}
		if st.attempts >= AttemptLimit || late {
			if !late {
				st.hd.ExcessiveCollision++
			}
			st.drops++
			rec.Dropped = true
			st.attempts = 0
			st.pop()
		} else {
			k := min(st.attempts, BackoffLimit)
			r := h.rng.IntN(1 << k)
			rec.Backoff = r
			st.wake(now + h.bits(r*SlotBits))
		}
	} else {
		h.stats.Successes++
		h.stats.FrameBits += uint64(8 * emulator.EtherFrame(len(x.frame.Data)))
		switch st.attempts {
		case 1:
		case 2:
			st.hd.SingleCollision++
		default:
			st.hd.MultipleCollision++
		}
		st.attempts = 0
		st.txFrames++
		st.txBytes += uint64(len(x.frame.Data))
		x.frame.Share() // every other station receives it
		for _, o := range h.stations {
			if o != st {
				o.deliverAt(x.end+h.tau(st, o), x.frame)
			}
		}
		if st.tap != nil {
			st.tap(x.frame, now)
		}
		st.pop()
	}
	if h.Observe != nil {
		h.Observe(rec)
	}
	// Carrier from x drops at each station τ later: waiting stations look again.
	for _, o := range h.stations {
		if o != st && o.waiting {
			o.wake(x.end + h.tau(st, o))
		}
	}
	h.prune(now)
}

// Station is one port of a hub and the half-duplex MAC that sends for the
// device behind it. It implements emulator.Transmitter for that device.
type Station struct {
	hub         *Hub
	index       int
	name        string
	cable       time.Duration
	queue       ring.Ring[*emulator.Frame]
	queuedBytes int
	queueFrames int
	queueBytes  int
	dst         emulator.Receiver
	onSpace     func()
	tap         func(f *emulator.Frame, at time.Duration)

	attempts int           // transmissions of the head frame so far
	cur      *transmission // on the medium now
	waiting  bool          // has a frame and waits for the medium
	attempt  *sched.Timer  // the next time it looks at the medium

	txFrames, txBytes, drops, queueDrops uint64
	queueHigh                            int
	hd                                   emulator.HalfDuplexStats
}

var (
	_ emulator.Transmitter = (*Station)(nil)
	_ emulator.Tapper      = (*Station)(nil)
)

// Send implements emulator.Transmitter: queue f for the medium.
func (st *Station) Send(f *emulator.Frame) bool {
	if st.Full(len(f.Data)) {
		st.queueDrops++
		f.Release()
		return false
	}
	st.queue.Push(f)
	st.queuedBytes += len(f.Data)
	st.queueHigh = max(st.queueHigh, st.queuedBytes)
	if st.queue.Len() == 1 && st.cur == nil && !st.waiting && !st.attempt.Pending() {
		st.wake(st.hub.s.Now())
	}
	return true
}

// Full implements emulator.Transmitter.
func (st *Station) Full(n int) bool {
	if st.queueFrames > 0 && st.queue.Len() >= st.queueFrames {
		return true
	}
	return st.queueBytes > 0 && st.queuedBytes+n > st.queueBytes
}

// SetOnSpace implements emulator.Transmitter.
func (st *Station) SetOnSpace(f func()) { st.onSpace = f }

// SetTap implements emulator.Tapper: the tap sees frames the station sends
// successfully and frames it delivers to its device.
func (st *Station) SetTap(tap func(f *emulator.Frame, at time.Duration)) { st.tap = tap }

// Stats implements emulator.Transmitter.
func (st *Station) Stats() emulator.ChannelStats {
	return emulator.ChannelStats{TxFrames: st.txFrames, TxBytes: st.txBytes, QueueDrops: st.queueDrops + st.drops, QueueHigh: st.queueHigh}
}

// HalfDuplex returns the station's CSMA/CD counters.
func (st *Station) HalfDuplex() emulator.HalfDuplexStats { return st.hd }

// wake makes the station look at the medium at t (now or later).
func (st *Station) wake(t time.Duration) {
	if st.queue.Len() == 0 || st.cur != nil {
		return
	}
	if st.attempt.Pending() {
		st.attempt.Stop()
	}
	st.attempt = st.hub.s.At(t, st.look)
}

// look is deferral: transmit if the medium has been quiet for the gap, else
// wait for the carrier to drop (finish wakes waiting stations).
func (st *Station) look() {
	h := st.hub
	now := h.s.Now()
	if busy, drop := h.senses(st, now); busy {
		if !st.waiting {
			st.hd.Deferred++
		}
		// Look again when the carrier drops here. The sender's own end may
		// already have passed (its signal is still on its way), so no
		// finish event would wake this station.
		st.waiting = true
		st.attempt = h.s.At(drop, st.look)
		return
	}
	if ready := h.quietSince(st, now) + h.bits(GapBits); ready > now {
		st.waiting = true
		st.attempt = h.s.At(ready, st.look)
		return
	}
	st.waiting = false
	h.start(st)
}

// pop removes the head frame (sent or dropped) and moves to the next.
func (st *Station) pop() {
	wasFull := st.Full(0)
	f := st.queue.Pop()
	st.queuedBytes -= len(f.Data)
	if wasFull && st.onSpace != nil {
		st.onSpace()
	}
	st.wake(st.hub.s.Now())
}

// deliverAt hands a successful frame to the station's device when its last
// bit arrives.
func (st *Station) deliverAt(t time.Duration, f *emulator.Frame) {
	if st.dst == nil {
		return
	}
	st.hub.s.At(t, func() {
		if st.tap != nil {
			st.tap(f, t)
		}
		st.dst.Receive(f)
	})
}
