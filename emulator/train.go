package emulator

import "time"

// Trains: a super-frame (Frame.GSO) crosses a channel and a switch as one
// unit, one event per hop, while each of its segments is billed, queued,
// timed and dropped exactly as if it had been sent alone. A channel can do
// that because its transmitter is a FIFO at a known rate: every segment's
// start, last bit and arrival follow from the segments ahead of it, so
// they are fixed when the train is queued. A segment becomes a wire frame
// only where one must exist (CutSegment): at a receiver that is not a
// TrainReceiver (a host, a router, a hub, an ATM adapter) or a capture.

// Piece is one wire frame of a train: segment K of super-frame F, or F
// itself when K is negative, and a model time: when it arrives (at a
// receiver) or enters a queue (at a transmitter).
type Piece struct {
	F  *Frame
	K  int
	At time.Duration
}

// Len returns the piece's octets on the wire, without preamble and FCS.
func (p Piece) Len() int {
	if p.K < 0 {
		return len(p.F.Data)
	}
	return p.F.GSO.SegLen(len(p.F.Data), p.K)
}

// Pieces appends the wire frames of f, all at t, to ps: its segments if it
// is a super-frame, else f itself.
func Pieces(ps []Piece, f *Frame, t time.Duration) []Piece {
	if f.GSO.Segs == 0 {
		return append(ps, Piece{f, -1, t})
	}
	for k := range f.GSO.Segs {
		ps = append(ps, Piece{f, k, t})
	}
	return ps
}

// TrainReceiver is a Receiver that can take a train: the pieces a channel
// delivers, handed over in one call when the first of them arrives (the
// scheduler's now), each with its own arrival time, now or later. It must
// treat each piece as of its arrival and get the result one-by-one
// delivery would give, which holds only while nothing else can act on
// what the pieces reach before they arrive; AcceptsTrains says whether
// that is so. The slice is valid during the call only.
type TrainReceiver interface {
	Receiver
	AcceptsTrains() bool
	ReceiveTrain(ps []Piece)
}

// TrainSender is a transmitter that queues trains (a Channel).
type TrainSender interface {
	// SendTrain queues the pieces, each as of its time (non-decreasing,
	// none before now). With wait, a piece that finds the queue full waits
	// for room (a NIC's TSO engine working through its descriptor), else it
	// is dropped and counted. It returns false, having queued nothing, when
	// the transmitter cannot take a train now (send the pieces one by one,
	// each at its time); else true and when the last piece entered.
	SendTrain(ps []Piece, wait bool) (ok bool, last time.Duration)
}

// Carver cuts segments into frames carved from 32 KiB blocks, one
// allocation per ~21 full-sized segments instead of one each. A block is
// never reused: the garbage collector frees it when the last frame cut
// from it has left the model (a receiver owns what it is handed).
type Carver struct {
	bytes  []byte
	frames []Frame
}

const (
	carveBytes  = 32 << 10
	carveFrames = 128
)

// Cut returns piece p as a wire frame: F itself, or its segment cut.
func (c *Carver) Cut(p Piece) *Frame {
	if p.K < 0 {
		return p.F
	}
	f := p.F
	n := f.GSO.SegLen(len(f.Data), p.K)
	if f.pool != nil { // from the super-frame's pool, released where it is written
		out := f.pool.Get(n)
		out.Data = CutSegment(out.Data[:0], f.Data, f.GSO, p.K)
		out.ID, out.Born = f.ID, f.Born
		return out
	}
	var d []byte
	if n > carveBytes/8 {
		d = make([]byte, 0, n)
	} else {
		if n > len(c.bytes) {
			c.bytes = make([]byte, carveBytes)
		}
		d = c.bytes[:0:n] // capped: an append can never reach the next frame
		c.bytes = c.bytes[n:]
	}
	if len(c.frames) == 0 {
		c.frames = make([]Frame, carveFrames)
	}
	out := &c.frames[0]
	c.frames = c.frames[1:]
	*out = Frame{Data: CutSegment(d, f.Data, f.GSO, p.K), ID: f.ID, Born: f.Born}
	return out
}
