//go:build unix

package perf

import (
	"errors"
	"io"
	"net"
	"os"
	"runtime"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// blockingSock is an rrSock on a duplicate of a socket's descriptor, in
// blocking mode; the connection it came from is closed (dupBlocking).
type blockingSock struct {
	fd     int
	stream bool // TCP: a read of 0 bytes is the end
	timed  bool // SetTimeout gave it a timeout: reads and writes go raw (rawIO)
	limit  time.Duration
}

// rrSocket returns c's socket for a request/response test, and closes c
// (the socket stays open in the rrSock: dupBlocking).
func rrSocket(c net.Conn) (rrSock, error) {
	_, stream := c.(*net.TCPConn)
	return dupBlocking(c.(socketConn), stream)
}

// rrPacketSocket returns pc's socket, connected to peer, for the server of
// a UDP_RR test: it then answers only that client. pc is closed, as by
// rrSocket.
func rrPacketSocket(pc net.PacketConn, peer net.Addr) (rrSock, error) {
	ua, ok := peer.(*net.UDPAddr)
	if !ok {
		return nil, errors.New("UDP_RR: not a UDP peer")
	}
	var sa unix.Sockaddr
	if ip4 := ua.IP.To4(); ip4 != nil {
		sa = &unix.SockaddrInet4{Port: ua.Port, Addr: [4]byte(ip4)}
	} else {
		sa = &unix.SockaddrInet6{Port: ua.Port, Addr: [16]byte(ua.IP.To16())}
	}
	raw, err := pc.(syscall.Conn).SyscallConn()
	if err != nil {
		return nil, err
	}
	var cerr error
	if err := raw.Control(func(fd uintptr) { cerr = unix.Connect(int(fd), sa) }); err != nil {
		return nil, err
	}
	if cerr != nil {
		return nil, os.NewSyscallError("connect", cerr)
	}
	return dupBlocking(pc.(socketConn), false)
}

// socketConn is a Go connection with a descriptor.
type socketConn interface {
	syscall.Conn
	io.Closer
}

// dupBlocking returns a blocking duplicate of c's descriptor and closes c,
// which takes the socket out of Go's netpoller (the duplicate keeps the
// socket itself open). While c was registered there, each message that
// came woke the runtime's netpoll thread in epoll_wait (in the server,
// which waits there on its control connection) beside the thread blocked
// in read, two wakes where netperf pays one: through a 100M switch the
// second ran on the emulator's core, and atmlab perf's TCP_RR read 0.68
// of netperf's on the same path (perf sched, four rounds).
func dupBlocking(c socketConn, stream bool) (rrSock, error) {
	raw, err := c.SyscallConn()
	if err != nil {
		return nil, err
	}
	fd, derr := -1, error(nil)
	if err := raw.Control(func(f uintptr) { fd, derr = unix.FcntlInt(f, unix.F_DUPFD_CLOEXEC, 0) }); err != nil {
		return nil, err
	}
	if derr != nil {
		return nil, os.NewSyscallError("fcntl", derr)
	}
	if err := unix.SetNonblock(fd, false); err != nil {
		unix.Close(fd)
		return nil, os.NewSyscallError("fcntl", err)
	}
	c.Close() // Go deregisters the descriptor from epoll as it closes it
	return &blockingSock{fd: fd, stream: stream}, nil
}

// io is read(2) or write(2) (trap) on the socket. With a timeout it is a
// raw system call, whose goroutine keeps its P while it waits: through Go's
// ordinary one the runtime handed the P away during the wait and took one
// back after it, which cost each transaction through a 100M switch 5-37 %
// of atmlab perf's TCP_RR rate in three rounds against the raw call. The
// runtime's preemption signal ends a wait on a socket with a timeout with
// EINTR (the kernel does not restart it), so a collection never waits for
// a message; on a socket without one the signal would restart it, so that
// goes through Go's call.
func (s *blockingSock) io(trap uintptr, p []byte) (int, error) {
	if !s.timed {
		if trap == unix.SYS_READ {
			return unix.Read(s.fd, p)
		}
		return unix.Write(s.fd, p)
	}
	return rawIO(trap, s.fd, p)
}

// expired yields to the runtime, whose signal interrupted a raw call (it
// stops the goroutine here when it must), and says whether the call has
// used its timeout since its first interruption (*first, read here, so
// that a call that is not interrupted reads no clock): every retry would
// wait the whole timeout again, and the runtime interrupts a goroutine
// that keeps its P every 10-20 ms, so a call times out at most that much
// after its timeout and its first interruption.
func (s *blockingSock) expired(first *time.Time) bool {
	runtime.Gosched()
	if first.IsZero() {
		*first = time.Now()
	}
	return s.timed && time.Since(*first) >= s.limit
}

func rawIO(trap uintptr, fd int, p []byte) (int, error) {
	var ptr unsafe.Pointer
	if len(p) > 0 {
		ptr = unsafe.Pointer(&p[0])
	}
	r, _, e := unix.RawSyscall(trap, uintptr(fd), uintptr(ptr), uintptr(len(p)))
	if e != 0 {
		return -1, e
	}
	return int(r), nil
}

// A socket with a timeout does not restart a call a signal interrupted
// (Go's runtime signals its threads): retry on EINTR.

func (s *blockingSock) Read(p []byte) (int, error) {
	var first time.Time
	for {
		n, err := s.io(unix.SYS_READ, p)
		switch {
		case err == unix.EINTR && !s.expired(&first):
			continue
		case err == unix.EAGAIN || err == unix.EINTR:
			return 0, os.ErrDeadlineExceeded
		case err != nil:
			return 0, os.NewSyscallError("read", err)
		case n == 0 && s.stream && len(p) > 0:
			return 0, io.EOF
		}
		return n, nil
	}
}

func (s *blockingSock) Write(p []byte) (int, error) {
	var first time.Time
	for {
		n, err := s.io(unix.SYS_WRITE, p)
		switch {
		case err == unix.EINTR && !s.expired(&first):
			continue
		case err == unix.EAGAIN || err == unix.EINTR:
			return max(n, 0), os.ErrDeadlineExceeded
		case err != nil:
			return max(n, 0), os.NewSyscallError("write", err)
		}
		return n, nil
	}
}

func (s *blockingSock) SetTimeout(d time.Duration) error {
	s.timed = false
	tv := unix.NsecToTimeval(int64(d))
	if err := unix.SetsockoptTimeval(s.fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv); err != nil {
		return os.NewSyscallError("setsockopt", err)
	}
	if err := unix.SetsockoptTimeval(s.fd, unix.SOL_SOCKET, unix.SO_SNDTIMEO, &tv); err != nil {
		return os.NewSyscallError("setsockopt", err)
	}
	s.timed, s.limit = tv.Sec > 0 || tv.Usec > 0, d
	return nil
}

// Interrupt shuts the socket down for reading: a read waiting on it
// returns 0 bytes (closing the descriptor would not wake it).
func (s *blockingSock) Interrupt() { unix.Shutdown(s.fd, unix.SHUT_RD) }

func (s *blockingSock) Close() error { return unix.Close(s.fd) }
