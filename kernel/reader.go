//go:build linux

package kernel

import (
	"golang.org/x/sys/unix"

	"github.com/atmlab/atmlab/emulator"
)

// reader reads frames from TAPs straight into pooled frames
// (emulator.Pool), so that steady traffic allocates nothing per frame
// and a super-frame is not copied: every read goes into a frame of
// emulator.PoolMax octets; one of up to 16 KiB is copied into a frame of
// its own size and the big one is read into again, a bigger one (a
// super-frame) keeps it. The frames go back to the pool when their last
// holder is done: the loop's TAP writes release what they wrote (see
// Loop.Attach), and a frame that is dropped, shared or held elsewhere is
// simply not reused.
type reader struct {
	pool emulator.Pool
	next *emulator.Frame // what the next read goes into
	hdr  [emulator.VNetHdrLen]byte
	iov  iovecs
}

// copyMax is the largest frame copied out of the read buffer into a
// frame of its own size (a jumbo frame; a super-frame keeps the buffer).
const copyMax = 16 << 10

// read reads one frame from fd; with vnet, its VNetHdr goes to r.hdr
// (short: the read was shorter than that, Data is empty). It returns nil,
// and whether to try again, when fd had nothing (or failed).
func (r *reader) read(fd int, vnet bool) (f *emulator.Frame, short, again bool) {
	if r.next == nil {
		r.next = r.pool.Get(emulator.PoolMax)
	}
	b := r.next.Data[:emulator.PoolMax]
	var n int
	var err error
	if vnet {
		r.iov.set(r.hdr[:], b)
		n, err = readvRaw(fd, &r.iov)
	} else {
		n, err = readRaw(fd, b)
	}
	if err != nil || n <= 0 {
		return nil, false, err == unix.EINTR
	}
	if vnet {
		if n < emulator.VNetHdrLen {
			short, n = true, emulator.VNetHdrLen
		}
		n -= emulator.VNetHdrLen
	}
	if n > copyMax {
		f, r.next = r.next, nil
		f.Data = b[:n]
		return f, short, false
	}
	f = r.pool.Get(n)
	copy(f.Data, b)
	return f, short, false
}
