package emulator

import (
	"math/rand/v2"
	"time"

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
	impair  *impairState

	queue        FIFO
	queuedBytes  int // waiting plus in service
	busy         bool
	inServiceLen int
	epoch        time.Duration // start of the current busy period
	epochBits    int64         // bits sent in this busy period
	freeAt       time.Duration
	lastAt       time.Duration // latest delivery time handed out: frames never overtake
	inFlight     int           // frames between transmitter and receiver
	// lastBitAt fires at the last bit of serving, the frame on the wire:
	// one timer for every frame, so a frame costs no allocation here.
	lastBitAt *sched.Timer
	serving   *Frame

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
	c.lastBitAt = s.NewTimer(func() {
		f := c.serving
		c.serving = nil
		c.sent(f)
		c.startNext()
	})
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
	st.Queue = c.queuedBytes
	return st
}

// Full reports whether a frame of n bytes would be refused now.
func (c *Channel) Full(n int) bool {
	if c.cfg.QueueFrames > 0 && c.queue.Len()+c.inService() >= c.cfg.QueueFrames {
		return true
	}
	return c.cfg.QueueBytes > 0 && c.queuedBytes+n > c.cfg.QueueBytes
}

func (c *Channel) inService() int {
	if c.busy {
		return 1
	}
	return 0
}

// Queued returns the frames waiting or in service.
func (c *Channel) Queued() int { return c.queue.Len() + c.inService() }

// Send queues f for transmission. It never blocks: a frame that does not fit
// is dropped, counted, and Send returns false.
func (c *Channel) Send(f *Frame) bool {
	if c.Full(len(f.Data)) {
		c.stats.QueueDrops++
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
	f := c.queue.Pop()
	c.busy = f != nil
	if f != nil {
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
	at := c.s.Now() + c.cfg.Propagation
	if c.impair != nil {
		var ok, limited bool
		at, ok, limited = c.impair.admit(at, len(f.Data), c.inFlight)
		switch {
		case limited:
			c.stats.LimitDrops++
			return
		case !ok:
			c.stats.ImpairDrops++
			return
		}
	}
	// A shorter delay set at run time must not let this frame overtake one
	// already in flight: it waits behind it, as netem's tfifo keeps order.
	at = max(at, c.lastAt)
	c.lastAt = at
	c.inFlight++
	if at == c.s.Now() {
		c.deliver(f)
		return
	}
	c.s.At(at, func() { c.deliver(f) })
}

func (c *Channel) deliver(f *Frame) {
	c.inFlight--
	c.stats.Delivered++
	if c.Tap != nil {
		c.Tap(f, c.s.Now())
	}
	c.dst.Receive(f)
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
// the queue is above it.
func (c *Channel) SetConfig(cfg ChannelConfig) {
	wasFull := c.cfg.QueueFrames > 0 && c.Queued() >= c.cfg.QueueFrames
	cfg.Framing, cfg.Seed = c.cfg.Framing, c.cfg.Seed
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

// FIFO is a slice-backed frame queue that reuses its storage.
type FIFO struct {
	buf  []*Frame
	head int
}

// Len returns the number of frames queued.
func (q *FIFO) Len() int { return len(q.buf) - q.head }

// Push appends f.
func (q *FIFO) Push(f *Frame) { q.buf = append(q.buf, f) }

// Peek returns the head frame, or nil.
func (q *FIFO) Peek() *Frame {
	if q.head == len(q.buf) {
		return nil
	}
	return q.buf[q.head]
}

// Pop removes and returns the head frame, or nil.
func (q *FIFO) Pop() *Frame {
	if q.head == len(q.buf) {
		return nil
	}
	f := q.buf[q.head]
	q.buf[q.head] = nil
	q.head++
	if q.head == len(q.buf) {
		q.buf, q.head = q.buf[:0], 0
	} else if q.head > 1024 && q.head*2 > len(q.buf) {
		n := copy(q.buf, q.buf[q.head:])
		q.buf, q.head = q.buf[:n], 0
	}
	return f
}
