package emulator

// Pool recycles frames with their buffers, so that steady traffic
// allocates nothing per frame (a new 64 KiB buffer per super-frame
// read took 17 % of the process in garbage collection at 10G). A frame
// from Get belongs to its pool until Release hands it back; the one who
// releases it must be its last holder: the TAP
// writer after the write, a receiver that copied what it needs. A
// component that hands one frame to several holders (a switch
// flooding, a hub repeating) calls Share first, which makes the frame
// the garbage collector's again. A pooled frame nobody releases is
// merely not reused, so a path that forgets Release costs an
// allocation, never a frame's bytes.
//
// Frames come in three sizes of buffer: a full-sized Ethernet frame, a
// jumbo frame, and a super-frame of up to 64 KiB with its headers. Each
// size keeps at most poolKeep frames; more go to the collector. Like
// everything in the emulator a Pool runs on the scheduler's goroutine;
// its zero value is ready.
type Pool struct {
	free [len(poolSizes)][]*Frame
}

// poolSizes are the buffer sizes, and poolKeep how many of each a pool
// holds on to (at most ~20 MiB in all).
var poolSizes = [...]int{2 << 10, 16 << 10, 68 << 10}

var poolKeep = [len(poolSizes)]int{4096, 256, 256}

// PoolMax is the largest frame Get can give from the pool.
const PoolMax = 68 << 10

// Get returns a frame whose Data has n octets (their contents
// undefined), with no ID, birth time or GSO plan. A frame longer than
// PoolMax is allocated alone and not pooled.
func (p *Pool) Get(n int) *Frame {
	for c, size := range poolSizes {
		if n > size {
			continue
		}
		var f *Frame
		if k := len(p.free[c]); k > 0 {
			f = p.free[c][k-1]
			p.free[c][k-1] = nil
			p.free[c] = p.free[c][:k-1]
		} else {
			f = &Frame{Data: make([]byte, size)}
		}
		f.Data, f.pool = f.Data[:n], p
		return f
	}
	return &Frame{Data: make([]byte, n)}
}

// Release hands f back to its pool for reuse: the caller was its last
// holder and keeps neither f nor its Data. It does nothing for a frame
// that is not pooled or was shared.
func (f *Frame) Release() {
	p := f.pool
	if p == nil {
		return
	}
	f.pool = nil
	for c, size := range poolSizes {
		if cap(f.Data) == size {
			if len(p.free[c]) < poolKeep[c] {
				*f = Frame{Data: f.Data[:0]}
				p.free[c] = append(p.free[c], f)
			}
			return
		}
	}
}

// Share marks f as held by more than one: it is never reused, and the
// garbage collector frees it when the last holder lets go.
func (f *Frame) Share() { f.pool = nil }

// Pooled reports whether f will go back to a pool when released.
func (f *Frame) Pooled() bool { return f.pool != nil }
