package kernel

import (
	"github.com/atmlab/atmlab/emulator"
	"github.com/atmlab/atmlab/emulator/sched"
)

// A stage holds frames the loop has read from a TAP before the NIC's ring
// has room for them, each stamped with the pass that read it (Frame.Born).
// A frame enters the ring at the model time the ring had room, or at its
// pass if that is later: never before the loop saw it, and never later
// than a loop that had not lost its core would have let it in.
//
// Without it, frames waited in the TAP and entered the ring at the pass
// that found room for them. When the loop lost its core for milliseconds
// (the hosts' threads preempt it; lateness p99 0.3-5 ms, at most 18 ms, at
// OC-3c), the ring drained in model time meanwhile, and the link stood
// idle in the model for the rest of the stall although the frames were
// there: a sender that kept the ring full read up to 1.3 % short. The
// kernel gives no time for when a frame entered the TAP, so only frames
// already read can be dated back; the stage keeps enough of them to
// bridge such stalls.
type stage struct {
	frames [stageFrames]*emulator.Frame // a ring: n of them from head, oldest first
	head   int
	n      int
	bytes  int
	admit  *sched.Timer // moves frames on when the ring has room or a frame's pass comes
}

// Limits of a stage: with the NIC's ring (an ATM adapter's 64 PDUs) they
// bridge a stall of ~10 ms at OC-3c and ~8 ms at 1G; super-frames count
// their bytes, so a stage holds at most ~16 of them.
const (
	stageFrames = 512
	stageBytes  = 1 << 20
)

func (s *stage) len() int { return s.n }

func (s *stage) full() bool { return s.n >= stageFrames || s.bytes >= stageBytes }

func (s *stage) peek() *emulator.Frame { return s.frames[s.head] }

func (s *stage) push(f *emulator.Frame) {
	s.frames[(s.head+s.n)%stageFrames] = f
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
