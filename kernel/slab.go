//go:build linux

package kernel

import (
	"time"

	"github.com/atmlab/atmlab/emulator"
)

// slab hands out the frames the loop reads, with their bytes, carved from
// shared blocks, so that a frame costs no allocation of its own: one block
// of slabBytes serves ~20 full-sized frames (hundreds of small ones) and
// one array of slabFrames frames as many reads. Frames are not returned:
// a frame may be flooded to several ports, captured or held in a delay
// line, and no model says when the last holder lets go; the garbage
// collector frees a block when no frame in it is left. Frame.Data is never
// written after it is made, so frames sharing a block never disturb each
// other. The cost is memory a block's last live frame holds: at most
// slabBytes per frame still in the model.
type slab struct {
	bytes  []byte
	frames []emulator.Frame
}

const (
	slabBytes  = 32 << 10
	slabFrames = 256
)

// frame returns a new frame holding a copy of data.
func (s *slab) frame(data []byte, id uint64, born time.Duration) *emulator.Frame {
	if len(s.frames) == 0 {
		s.frames = make([]emulator.Frame, slabFrames)
	}
	f := &s.frames[0]
	s.frames = s.frames[1:]
	f.Data, f.ID, f.Born = s.copy(data), id, born
	return f
}

// copy returns a copy of b carved from the current block.
func (s *slab) copy(b []byte) []byte {
	n := len(b)
	if n > slabBytes/8 {
		return append([]byte(nil), b...) // a jumbo frame or super-frame: its own buffer
	}
	if n > len(s.bytes) {
		s.bytes = make([]byte, slabBytes)
	}
	d := s.bytes[:n:n] // capped: an append can never reach the next frame
	s.bytes = s.bytes[n:]
	copy(d, b)
	return d
}
