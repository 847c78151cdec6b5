//go:build linux

package remote

import (
	"errors"
	"fmt"
	"net"
	"sync/atomic"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Shared is memory two parts' processes on one machine share, where each
// part says its safe time as it goes, a store and no system call: on the
// machines measured a system call cost 5-13 µs, and a part said its safe
// time 20,000 times a 10-s point. Each part has a cache line of its own:
// its safe time, the accounts it has written to the connection (a part
// reads them before it believes the safe time beside them), and whether
// it sleeps waiting for the other, which then sends its safe time over
// the connection too, to wake it.
type Shared struct {
	mem []byte
}

// lineLen is a part's share of Shared: a cache line.
const lineLen = 64

func (s *Shared) word(part, i int) *atomic.Int64 {
	return (*atomic.Int64)(unsafe.Pointer(&s.mem[part*lineLen+8*i]))
}

func (s *Shared) safe(part int) *atomic.Int64     { return s.word(part, 0) }
func (s *Shared) accounts(part int) *atomic.Int64 { return s.word(part, 1) }
func (s *Shared) sleeping(part int) *atomic.Int64 { return s.word(part, 2) }

// NewShared maps a page of memory to share with another part's process
// (a memfd, which Share sends it).
func NewShared() (*Shared, int, error) {
	fd, err := unix.MemfdCreate("atmlab-parts", unix.MFD_CLOEXEC)
	if err != nil {
		return nil, -1, err
	}
	if err := unix.Ftruncate(fd, 4096); err != nil {
		unix.Close(fd)
		return nil, -1, err
	}
	s, err := mapShared(fd)
	if err != nil {
		unix.Close(fd)
		return nil, -1, err
	}
	return s, fd, nil
}

func mapShared(fd int) (*Shared, error) {
	mem, err := unix.Mmap(fd, 0, 4096, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		return nil, err
	}
	return &Shared{mem: mem}, nil
}

// Close unmaps the memory.
func (s *Shared) Close() {
	if s != nil && s.mem != nil {
		unix.Munmap(s.mem)
		s.mem = nil
	}
}

// share is the first octet the run's process sends a part's over a Unix
// socket: with the memory's descriptor, or without (noShare).
const (
	share   = 'M'
	noShare = 'N'
)

// Share offers a part's process, just connected over c, memory to share
// for a run of two parts (Shared); TakeShared is the far end. Over
// anything but a Unix socket it sends nothing and returns nil. Without
// memory (parts > 2, or none could be made) the part is told so, and
// the two go by the connection alone.
func Share(c net.Conn, parts int) (*Shared, error) {
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return nil, nil
	}
	if parts == 2 {
		if s, fd, err := NewShared(); err == nil {
			_, _, err := uc.WriteMsgUnix([]byte{share}, syscall.UnixRights(fd), nil)
			unix.Close(fd)
			if err != nil {
				s.Close()
				return nil, err
			}
			return s, nil
		}
	}
	_, err := uc.Write([]byte{noShare})
	return nil, err
}

// TakeShared takes the memory the run's process offers (Share) over c, a
// Unix socket just dialled, before anything else is read from it: nil
// where it offers none, or c is not a Unix socket.
func TakeShared(c net.Conn) (*Shared, error) {
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return nil, nil
	}
	b := make([]byte, 1)
	oob := make([]byte, unix.CmsgSpace(4))
	n, oobn, _, _, err := uc.ReadMsgUnix(b, oob)
	if err != nil {
		return nil, err
	}
	if n != 1 || (b[0] != share && b[0] != noShare) {
		return nil, fmt.Errorf("the run's process sent %q where its offer of memory was due", b[:n])
	}
	msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
	if err != nil {
		return nil, err
	}
	var fds []int
	for _, m := range msgs {
		if got, err := unix.ParseUnixRights(&m); err == nil {
			fds = append(fds, got...)
		}
	}
	defer func() {
		for _, fd := range fds {
			unix.Close(fd)
		}
	}()
	if b[0] == noShare {
		return nil, nil
	}
	if len(fds) != 1 {
		return nil, errors.New("the run's process offered memory without its descriptor")
	}
	return mapShared(fds[0])
}
