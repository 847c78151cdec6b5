package kernel

import (
	"time"

	"github.com/atmlab/atmlab/emulator"
	"github.com/atmlab/atmlab/emulator/sched"
)

// A stage holds frames the loop has read from a TAP before the NIC's ring
// has room for them, each stamped with the pass that read it (Frame.Born),
// or earlier where the host's token bucket shows it was there earlier
// (dateBack). A frame enters the ring at the model time the ring had room,
// or at its stamp if that is later: never before the host can have sent
// it, and never later than a loop that had not lost its core would have
// let it in.
//
// Without it, frames waited in the TAP and entered the ring at the pass
// that found room for them. When the loop lost its core for milliseconds
// (the hosts' threads preempt it; lateness p99 0.3-5 ms, at most 60 ms, at
// OC-3c), the ring drained in model time meanwhile, and the link stood
// idle in the model for the rest of the stall although the frames were
// there: a sender that kept the ring full read up to 1.3 % short.
//
// The kernel gives no time for when a frame entered the TAP, but the
// host's token bucket (pushback) bounds it: frames read in one go after a
// stall are dated back to the latest time each can have been there
// (dateBack), so the link stays busy in the model even when the stall
// began with the ring empty.
type stage struct {
	frames [stageFrames]*emulator.Frame // a ring: n of them from head, oldest first
	held   [stageFrames]bool            // the frame's stamp was moved by holdBack
	head   int
	n      int
	bytes  int
	admit  *sched.Timer // moves frames on when the ring has room or a frame's pass comes
	late   uint64       // wire frames held back because they would have entered the ring too late (enter)
}

// Limits of a stage: as many frames as the TAP's own ring (tapRing), so
// that one read can take all a stall left there and date it back as one
// batch, and 4 MiB: ~250 ms at OC-3c, 33 ms at 1G (super-frames count their
// bytes, so a stage holds at most ~64 of them).
const (
	stageFrames = tapRing
	stageBytes  = 4 << 20
)

func (s *stage) len() int { return s.n }

func (s *stage) full() bool { return s.n >= stageFrames || s.bytes >= stageBytes }

func (s *stage) peek() *emulator.Frame { return s.frames[s.head] }

func (s *stage) push(f *emulator.Frame) {
	s.frames[(s.head+s.n)%stageFrames] = f
	s.held[(s.head+s.n)%stageFrames] = false
	s.n++
	s.bytes += len(f.Data)
}

func (s *stage) pop() *emulator.Frame {
	f := s.frames[s.head]
	s.frames[s.head] = nil
	s.head = (s.head + 1) % stageFrames
	s.n--
	s.bytes -= len(f.Data)
	return f
}

// enter moves staged frames into a NIC's ring (in) while it has room,
// at model time now, in a pass that read the wall clock at wall. A frame
// read at a pass the model has not reached waits: enter returns its pass
// and true. When the model is more than bound (> 0) behind the wall
// clock, a frame staged before now would enter that late: it and every
// frame staged as early are held back to wall-bound instead (counted in
// late, by their wire frames), as if they had waited that long in the
// TAP, and the model's link stands idle until then. A loop short of CPU
// so carries what it can no more than about bound late, and the rest
// waits in the TAP, where the host drops and counts what does not fit;
// without this the model fell as far behind as the stage's frames (33 ms
// of them at 1G) took to drain at the rate the loop kept up: 92 ms at the
// median under two 1G floods. (Dropping such frames instead emptied the
// stage at every stall and starved the model: two 500M senders into a
// 100M port delivered 3.5 k datagrams a second, not 8.1 k.)
func (s *stage) enter(now, wall, bound time.Duration, room func() bool, in func(*emulator.Frame)) (time.Duration, bool) {
	for s.n > 0 && room() {
		f := s.peek()
		if f.Born > now { // read at a pass the model has not reached
			return f.Born, true
		}
		if bound > 0 && f.Born < now && wall-now > bound {
			s.holdBack(wall - bound)
			return wall - bound, true
		}
		s.pop()
		in(f)
	}
	return 0, false
}

// holdBack moves the stamps of the staged frames earlier than to, the
// oldest first, to to, and counts in late those it had not moved before.
func (s *stage) holdBack(to time.Duration) {
	for i := range s.n {
		j := (s.head + i) % stageFrames
		f := s.frames[j]
		if f.Born >= to {
			return
		}
		f.Born = to
		if !s.held[j] {
			s.held[j] = true
			s.late += uint64(max(f.GSO.Segs, 1))
		}
	}
}

// dateBack moves the stamps of the last k staged frames, read in one go
// that ended at end, back to the latest time each can have entered the
// TAP. The bucket lets at most burst + rate·Δ octets through in any Δ, so
// a frame that the batch's last S billed octets (itself included) began
// was in the TAP by end − (S − burst)/rate, plus bucketSlack. No stamp
// moves before floor, nor before the frame staged ahead of it.
func (s *stage) dateBack(k int, end, floor time.Duration, b *bucket) {
	if s.n > k {
		floor = max(floor, s.frames[(s.head+s.n-k-1)%stageFrames].Born)
	}
	billed := 0
	for i := s.n - 1; i >= s.n-k; i-- {
		f := s.frames[(s.head+i)%stageFrames]
		if billed += b.cost(len(f.Data)); billed <= b.burst {
			continue
		}
		by := end - b.rate.TxTime(8*int64(billed-b.burst)) + bucketSlack
		f.Born = min(f.Born, max(by, floor))
	}
}

// bucketSlack covers the bucket's own rounding (its clock runs in 64-ns
// ticks) and the moment between the qdisc letting a frame go and the TAP
// taking it.
const bucketSlack = 20 * time.Microsecond
