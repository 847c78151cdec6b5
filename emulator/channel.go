package emulator

import (
	"math/rand/v2"
	"time"

	"github.com/atmlab/atmlab/emulator/internal/ring"
	"github.com/atmlab/atmlab/emulator/sched"
	"github.com/atmlab/atmlab/emulator/units"
)

// ChannelConfig describes one direction of a link and the queue in front of
// its transmitter.
type ChannelConfig struct {
	Rate        units.BitRate
	Framing     Framing       // nil means Ethernet
	Propagation time.Duration // signal delay of the cable
	QueueBytes  int           // tail-drop limit of waiting + in-service bytes; 0 = none
	QueueFrames int           // tail-drop limit in frames; 0 = none
	Impair      Impair
	Seed        uint64 // random source of the impairments
	// PerFrame steps every wire frame alone, one event each, and never
	// takes or hands on a train: the reference trains are tested against.
	PerFrame bool
	// Cut, if set, makes the direction one a split lab is cut at: each
	// frame, once its arrival time is known (at its last bit, or when a
	// train is queued), is handed to Cut with that time instead of to the
	// pipe, one by one, and Cut delivers it to the far end at that time,
	// in the far part (devices builds it; docs/split.md).
	Cut func(f *Frame, at time.Duration)
}

// ChannelStats are a channel's counters since it was built.
type ChannelStats struct {
	TxFrames    uint64 // frames whose last bit left the transmitter
	TxBytes     uint64 // their bytes (without preamble and FCS)
	QueueDrops  uint64 // frames refused by a full queue
	ImpairDrops uint64 // frames lost to the impairment's loss
	LimitDrops  uint64 // frames refused by the impairment's limit
	Delivered   uint64 // frames handed to the receiver
	QueueHigh   int    // high-water mark of queued bytes
	Queue       int    // bytes queued now (the frame in service included)
	BusyTime    time.Duration
}

// Channel is one direction of a link: a FIFO queue, a transmitter that
// serialises frames at the link rate with exact wire accounting, and a pipe
// of propagation and impairment delay to a Receiver.
//
// A frame's transmission starts at max(arrival, transmitter free). To stay
// exact to the bit, the transmitter keeps the bits sent since it last went
// idle and converts the sum to time once per frame, so rounding never
// accumulates. Call every method on the scheduler goroutine.
type Channel struct {
	s       *sched.Scheduler
	cfg     ChannelConfig
	framing Framing
	dst     Receiver
	// dst as a TrainReceiver (nil if it is none), asserted once: a type
	// assertion per train now and then allocates (the runtime grows its
	// cache of the assertion's result on about one miss in a thousand).
	trainDst TrainReceiver
	impair   *impairState

	queue        ring.Ring[*Frame]
	queuedBytes  int // waiting plus in service
	busy         bool
	inServiceLen int
	epoch        time.Duration // start of the current busy period
	epochBits    int64         // bits sent in this busy period
	freeAt       time.Duration
	lastAt       time.Duration // latest delivery time handed out: frames never overtake
	// flight holds the arrival times of the frames between transmitter
	// and receiver, for the impairment's limit.
	flight ring.Ring[time.Duration]
	// lastBitAt fires at the last bit of serving, the frame on the wire:
	// one timer for every frame, so a frame costs no allocation here.
	lastBitAt *sched.Timer
	serving   *Frame

	// Trains (SendTrain): while any is queued the channel times every
	// frame at the moment it is queued. slots are the pieces queued or in
	// service, trains how many slots each train holds; trainEnd fires
	// when a train's last bit has left, spaceAt when a full ring has room.
	slots    ring.Ring[slot]
	trains   ring.Ring[int]
	cum      int64         // octets ever queued as slots
	popped   int64         // cum of the last slot that has left
	lastIn   time.Duration // when the latest slot entered
	trainEnd *sched.Timer
	spaceAt  *sched.Timer

	// pipe holds what has left the transmitter (or will: a train's pieces
	// are placed when queued) in arrival order; deliveries says how it is
	// handed on, one by one or as trains. arrive fires at the next.
	pipe       ring.Ring[Piece]
	deliveries ring.Ring[delivery]
	arrive     *sched.Timer
	handed     []Piece
	carve      Carver
	one        [1]Piece

	// OnSpace, if set, is called when a frame leaves a queue that was full
	// by QueueFrames, so an upstream reader (a host's TAP) can resume.
	OnSpace func()
	// Tap, if set, sees every delivered frame at its delivery time.
	Tap func(f *Frame, at time.Duration)

	stats ChannelStats
}

// NewChannel returns a channel that delivers to dst.
func NewChannel(s *sched.Scheduler, cfg ChannelConfig, dst Receiver) *Channel {
	c := &Channel{s: s, cfg: cfg, framing: cfg.Framing, dst: dst}
	c.trainDst, _ = dst.(TrainReceiver)
	c.lastBitAt = s.NewTimer(func() {
		f := c.serving
		c.serving = nil
		c.sent(f)
		c.startNext()
	})
	c.trainEnd = s.NewTimer(c.trainsLeft)
	c.spaceAt = s.NewTimer(func() {
		if c.OnSpace != nil {
			c.OnSpace()
		}
	})
	c.arrive = s.NewTimer(c.deliverDue)
	if c.framing == nil {
		c.framing = Ethernet{}
	}
	if !cfg.Impair.IsZero() {
		c.impair = &impairState{cfg: cfg.Impair, rng: rand.New(rand.NewPCG(cfg.Seed, 0x6174_6d6c_6162))}
	}
	return c
}

// SetOnSpace implements Transmitter.
func (c *Channel) SetOnSpace(f func()) { c.OnSpace = f }

// SetTap implements Tapper.
func (c *Channel) SetTap(tap func(f *Frame, at time.Duration)) { c.Tap = tap }

// Stats returns the channel's counters.
func (c *Channel) Stats() ChannelStats {
	st := c.stats
	_, b := c.occupied(c.s.Now())
	st.Queue = c.queuedBytes + b
	return st
}

// Full reports whether a frame of n bytes would be refused now.
func (c *Channel) Full(n int) bool {
	fr, b := c.occupied(c.s.Now())
	if c.cfg.QueueFrames > 0 && c.queue.Len()+c.inService()+fr >= c.cfg.QueueFrames {
		return true
	}
	return c.cfg.QueueBytes > 0 && c.queuedBytes+b+n > c.cfg.QueueBytes
}

func (c *Channel) inService() int {
	if c.busy {
		return 1
	}
	return 0
}

// Queued returns the frames waiting or in service.
func (c *Channel) Queued() int {
	fr, _ := c.occupied(c.s.Now())
	return c.queue.Len() + c.inService() + fr
}

// Send queues f for transmission. It never blocks: a frame that does not fit
// is dropped, counted, and Send returns false. A super-frame is queued as
// its segments, all arriving now; while a train is queued, so is a frame.
func (c *Channel) Send(f *Frame) bool {
	if f.GSO.Segs > 0 {
		ps := Pieces(nil, f, c.s.Now())
		if ok, _ := c.SendTrain(ps, false); !ok {
			for _, p := range ps {
				c.Send(c.carve.Cut(p))
			}
			f.Release() // cut: its segments are copies
		}
		return true
	}
	if c.trains.Len() > 0 {
		drops := c.stats.QueueDrops
		c.one[0] = Piece{f, -1, c.s.Now()}
		c.SendTrain(c.one[:], false)
		return c.stats.QueueDrops == drops
	}
	if c.Full(len(f.Data)) {
		c.stats.QueueDrops++
		f.Release()
		return false
	}
	c.queue.Push(f)
	c.queuedBytes += len(f.Data)
	c.stats.QueueHigh = max(c.stats.QueueHigh, c.queuedBytes)
	if !c.busy {
		c.startNext()
	}
	return true
}

// startNext puts the head of the queue on the wire: at once if the
// transmitter is free, else when its current frame and gap are done. One
// event per frame fires at its last bit; it hands the frame on and starts
// the next one, whose start (the end of the gap) is already known.
func (c *Channel) startNext() {
	wasFull := c.cfg.QueueFrames > 0 && c.Queued() >= c.cfg.QueueFrames
	c.queuedBytes -= c.inServiceLen
	c.inServiceLen = 0
	c.busy = c.queue.Len() > 0
	if c.busy {
		f := c.queue.Pop()
		now := c.s.Now()
		if now > c.freeAt {
			c.epoch, c.epochBits = now, 0
		}
		c.inServiceLen = len(f.Data)
		total, gap := c.framing.WireBytes(len(f.Data))
		start := c.epoch + c.cfg.Rate.TxTime(c.epochBits)
		c.epochBits += int64(total) * 8
		lastBit := c.epoch + c.cfg.Rate.TxTime(c.epochBits-int64(gap)*8)
		c.freeAt = c.epoch + c.cfg.Rate.TxTime(c.epochBits)
		c.stats.BusyTime += c.freeAt - start
		c.serving = f
		c.lastBitAt.Reset(lastBit)
	}
	if wasFull && c.OnSpace != nil {
		c.OnSpace()
	}
}

// sent runs when f's last bit has left the transmitter.
func (c *Channel) sent(f *Frame) {
	c.stats.TxFrames++
	c.stats.TxBytes += uint64(len(f.Data))
	c.place(Piece{f, -1, 0}, len(f.Data), c.s.Now(), false)
	c.deliverDue() // with no delay it is handed on in this event
}

// place decides the fate on the line of a piece of n octets whose last bit
// leaves at end: lost, or in the pipe with its arrival time, delivered
// alone unless it is part of a train (grouped by the caller). It reports
// whether the piece is in the pipe.
func (c *Channel) place(p Piece, n int, end time.Duration, train bool) bool {
	at := end + c.cfg.Propagation
	for c.flight.Len() > 0 && *c.flight.Peek() <= end {
		c.flight.Pop()
	}
	if c.impair != nil {
		var ok, limited bool
		at, ok, limited = c.impair.admit(at, n, c.flight.Len())
		switch {
		case limited:
			c.stats.LimitDrops++
			dropped(p)
			return false
		case !ok:
			c.stats.ImpairDrops++
			dropped(p)
			return false
		}
	}
	// A shorter delay set at run time must not let this frame overtake one
	// already in flight: it waits behind it, as netem's tfifo keeps order.
	at = max(at, c.lastAt)
	c.lastAt = at
	if at > end {
		c.flight.Push(at)
	}
	if c.cfg.Cut != nil {
		c.cut(p, at)
		return true
	}
	p.At = at
	c.pipe.Push(p)
	if train {
		return true
	}
	if d := c.deliveries.Len(); d > 0 && !c.deliveries.At(d-1).train {
		c.deliveries.At(d-1).n++
	} else {
		c.deliveries.Push(delivery{n: 1})
	}
	return true
}

// dropped lets go of a piece the channel dropped: a wire frame of its
// own goes back to its pool. A super-frame's segment does not: the
// super-frame goes back where its last segment is cut or written, and
// to the collector if that one is dropped (its other segments may still
// be in the pipe).
func dropped(p Piece) {
	if p.K < 0 {
		p.F.Release()
	}
}

// cut hands a piece that arrives at at to the far part: a frame of its
// own (the far part owns it; a frame from a pool is copied, the pool
// being this part's).
func (c *Channel) cut(p Piece, at time.Duration) {
	g := c.carve.Cut(p)
	if g.pool != nil {
		f := g
		g = &Frame{Data: append([]byte(nil), f.Data...), ID: f.ID, Born: f.Born}
		f.Release()
	}
	c.stats.Delivered++
	if c.Tap != nil {
		c.Tap(g, at)
	}
	c.cfg.Cut(g, at)
}

// delivery is n pieces of the pipe, handed on as a train or one by one.
type delivery struct {
	n     int
	train bool
}

// schedule sets the arrival timer to the pipe's next delivery.
func (c *Channel) schedule() {
	if c.deliveries.Len() == 0 {
		c.arrive.Stop()
		return
	}
	c.arrive.Reset(max(c.pipe.Peek().At, c.s.Now()))
}

// deliverDue hands on what has arrived: a train when its first piece has.
func (c *Channel) deliverDue() {
	now := c.s.Now()
	for c.deliveries.Len() > 0 && c.pipe.Peek().At <= now {
		d := c.deliveries.Peek()
		if !d.train {
			if d.n--; d.n == 0 {
				c.deliveries.Pop()
			}
			f := c.carve.Cut(c.pipe.Pop())
			c.stats.Delivered++
			if c.Tap != nil {
				c.Tap(f, now)
			}
			c.dst.Receive(f)
			continue
		}
		n := c.deliveries.Pop().n
		c.handed = c.handed[:0]
		for range n {
			c.handed = append(c.handed, c.pipe.Pop())
		}
		c.stats.Delivered += uint64(n)
		if c.Tap != nil { // set since the train was queued: it sees each piece as it will arrive
			for _, p := range c.handed {
				c.Tap(c.carve.Cut(p), p.At)
			}
		}
		c.trainDst.ReceiveTrain(c.handed)
	}
	c.schedule()
}

// trainsOut reports whether the channel hands trains on to its receiver.
func (c *Channel) trainsOut() bool {
	return c.cfg.Cut == nil && c.trainDst != nil && !c.cfg.PerFrame && c.Tap == nil && c.trainDst.AcceptsTrains()
}

// slot is a piece queued or in service in a train, with its times.
type slot struct {
	p   Piece // At: when it entered the queue
	n   int
	end time.Duration // its last bit leaves
	cum int64         // Channel.cum with it
}

// occupied returns the slots and their octets still in the queue at t
// (their last bit leaves after t).
func (c *Channel) occupied(t time.Duration) (frames, bytes int) {
	lo, hi := 0, c.slots.Len()
	for lo < hi { // the first slot whose last bit leaves after t
		m := (lo + hi) / 2
		if c.slots.At(m).end <= t {
			lo = m + 1
		} else {
			hi = m
		}
	}
	gone := c.popped
	if lo > 0 {
		gone = c.slots.At(lo - 1).cum
	}
	return c.slots.Len() - lo, int(c.cum - gone)
}

// SendTrain implements TrainSender. A channel takes a train when no frame
// is waiting or in service unless in trains, so that every frame ahead is
// timed; then each piece is queued (or dropped) as of its time, timed from
// the pieces ahead as the transmitter would send them, and placed in the
// pipe; the train's pieces reach a TrainReceiver together at the first
// one's arrival, any other receiver one by one, each at its own.
func (c *Channel) SendTrain(ps []Piece, wait bool) (bool, time.Duration) {
	if c.cfg.PerFrame || c.busy {
		return false, 0
	}
	before, piped := c.slots.Len(), c.pipe.Len()
	train := c.trainsOut()
	for _, p := range ps {
		c.queueSlot(p, wait, train)
	}
	if n := c.slots.Len() - before; n > 0 {
		c.trains.Push(n)
		if !c.trainEnd.Pending() {
			c.trainEnd.Reset(c.slots.At(*c.trains.Peek() - 1).end)
		}
	}
	if n := c.pipe.Len() - piped; n > 0 && train {
		c.deliveries.Push(delivery{n: n, train: true})
	}
	c.schedule()
	c.armSpace()
	return true, c.lastIn
}

// queueSlot queues one piece of a train.
func (c *Channel) queueSlot(p Piece, wait, train bool) {
	t := max(p.At, c.lastIn, c.s.Now())
	n := p.Len()
	var b int
	for {
		var fr int
		fr, b = c.occupied(t)
		full := (c.cfg.QueueFrames > 0 && fr >= c.cfg.QueueFrames) || (c.cfg.QueueBytes > 0 && b+n > c.cfg.QueueBytes)
		if !full {
			break
		}
		if !wait || fr == 0 {
			c.stats.QueueDrops++
			dropped(p)
			return
		}
		t = c.slots.At(c.slots.Len() - fr).end // the next last bit to leave
	}
	c.lastIn = t
	if t > c.freeAt {
		c.epoch, c.epochBits = t, 0
	}
	total, gap := c.framing.WireBytes(n)
	start := c.epoch + c.cfg.Rate.TxTime(c.epochBits)
	c.epochBits += int64(total) * 8
	end := c.epoch + c.cfg.Rate.TxTime(c.epochBits-int64(gap)*8)
	c.freeAt = c.epoch + c.cfg.Rate.TxTime(c.epochBits)
	c.stats.BusyTime += c.freeAt - start
	c.cum += int64(n)
	p.At = t
	c.slots.Push(slot{p, n, end, c.cum})
	c.stats.QueueHigh = max(c.stats.QueueHigh, b+n) // with it: its last bit leaves after t
	c.place(p, n, end, train)
}

// trainsLeft runs when the head train's last bit has left: it and every
// train done by now are counted; the channel steps frames alone again
// once none is left.
func (c *Channel) trainsLeft() {
	now := c.s.Now()
	for c.trains.Len() > 0 {
		n := *c.trains.Peek()
		if c.slots.At(n-1).end > now {
			break
		}
		c.trains.Pop()
		for range n {
			sl := c.slots.Pop()
			c.popped = sl.cum
			c.stats.TxFrames++
			c.stats.TxBytes += uint64(sl.n)
		}
	}
	if c.trains.Len() > 0 {
		c.trainEnd.Reset(c.slots.At(*c.trains.Peek() - 1).end)
	}
}

// armSpace sets OnSpace to run when a ring that the trains fill has room
// for a frame again (a host's reader may then bring the next).
func (c *Channel) armSpace() {
	if c.OnSpace == nil || c.cfg.QueueFrames == 0 || c.slots.Len() == 0 {
		return
	}
	t := max(c.lastIn, c.s.Now())
	fr, _ := c.occupied(t)
	if fr < c.cfg.QueueFrames {
		if t > c.s.Now() {
			c.spaceAt.Reset(t)
		}
		return
	}
	// the ring has room when the oldest of the QueueFrames last slots leaves
	c.spaceAt.Reset(c.slots.At(c.slots.Len() - c.cfg.QueueFrames).end)
}

// Config returns the channel's configuration now (after any SetConfig).
func (c *Channel) Config() ChannelConfig { return c.cfg }

// SetConfig changes the channel's rate, propagation, queue limits and
// impairments at the scheduler's current time; framing and seed stay. It is
// a cable swapped under running traffic: nothing queued or in flight is lost
// or reordered and the counters keep counting. The frame in service
// finishes at the old rate and the next starts when it (and its gap) is
// done, at the new rate. A new delay applies to frames whose last bit
// leaves after the change; a frame that a shorter delay would deliver
// before one still in flight is delivered just behind it instead. A lower
// queue limit drops nothing already queued; it refuses what arrives while
// the queue is above it. A train's segments are timed when the train is
// queued: the change reaches the frames queued after it.
func (c *Channel) SetConfig(cfg ChannelConfig) {
	wasFull := c.cfg.QueueFrames > 0 && c.Queued() >= c.cfg.QueueFrames
	cfg.Framing, cfg.Seed, cfg.PerFrame = c.cfg.Framing, c.cfg.Seed, c.cfg.PerFrame
	if cfg.Rate != c.cfg.Rate {
		// The bits timed so far keep the old rate: the next frame starts
		// at freeAt (or on arrival, if later) and is timed at the new one.
		c.epoch, c.epochBits = c.freeAt, 0
	}
	c.cfg = cfg
	switch {
	case c.impair != nil:
		c.impair.cfg = cfg.Impair
	case !cfg.Impair.IsZero():
		c.impair = &impairState{cfg: cfg.Impair, rng: rand.New(rand.NewPCG(cfg.Seed, 0x6174_6d6c_6162))}
	}
	full := c.cfg.QueueFrames > 0 && c.Queued() >= c.cfg.QueueFrames
	if wasFull && !full && c.OnSpace != nil {
		c.OnSpace()
	}
}
