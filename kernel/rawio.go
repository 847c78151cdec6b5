//go:build linux

package kernel

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// The loop's reads and writes of its TAPs are raw system calls, as its
// polls are (poll): on a descriptor that never blocks a call needs none
// of the Go scheduler's entry and exit around it, which took ~3 % of the
// loop's samples under two 1G floods, one read and one write a frame.
// A write runs the receiving host's network stack, microseconds; the
// loop's P is not handed away meanwhile, nor need it be.

// iovecs holds the system call's view of up to three buffers.
type iovecs struct {
	v [3]unix.Iovec
	n int
}

// set points the vectors at bufs, skipping empty ones.
func (io *iovecs) set(bufs ...[]byte) {
	io.n = 0
	for _, b := range bufs {
		if len(b) > 0 {
			io.v[io.n].Base = &b[0]
			io.v[io.n].SetLen(len(b))
			io.n++
		}
	}
}

// clear drops the vectors' hold on their buffers.
func (io *iovecs) clear() {
	for i := range io.v {
		io.v[i] = unix.Iovec{}
	}
	io.n = 0
}

func readvRaw(fd int, io *iovecs) (int, error) {
	r, _, e := unix.RawSyscall(unix.SYS_READV, uintptr(fd), uintptr(unsafe.Pointer(&io.v[0])), uintptr(io.n))
	if e != 0 {
		return -1, e
	}
	return int(r), nil
}

func writevRaw(fd int, io *iovecs) (int, error) {
	r, _, e := unix.RawSyscall(unix.SYS_WRITEV, uintptr(fd), uintptr(unsafe.Pointer(&io.v[0])), uintptr(io.n))
	if e != 0 {
		return -1, e
	}
	return int(r), nil
}

func readRaw(fd int, b []byte) (int, error) {
	r, _, e := unix.RawSyscall(unix.SYS_READ, uintptr(fd), uintptr(unsafe.Pointer(unsafe.SliceData(b))), uintptr(len(b)))
	if e != 0 {
		return -1, e
	}
	return int(r), nil
}

func writeRaw(fd int, b []byte) (int, error) {
	r, _, e := unix.RawSyscall(unix.SYS_WRITE, uintptr(fd), uintptr(unsafe.Pointer(unsafe.SliceData(b))), uintptr(len(b)))
	if e != 0 {
		return -1, e
	}
	return int(r), nil
}
