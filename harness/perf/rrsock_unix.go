//go:build unix

package perf

import (
	"errors"
	"io"
	"net"
	"os"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// blockingSock is an rrSock on a duplicate of a socket's descriptor, in
// blocking mode. The mode belongs to the socket, so the net.Conn it came
// from must not be read or written while this is in use; closing it after
// is fine.
type blockingSock struct {
	fd     int
	stream bool // TCP: a read of 0 bytes is the end
}

// rrSocket returns c's socket for a request/response test.
func rrSocket(c net.Conn) (rrSock, error) {
	_, stream := c.(*net.TCPConn)
	return dupBlocking(c.(syscall.Conn), stream)
}

// rrPacketSocket returns pc's socket, connected to peer, for the server of
// a UDP_RR test: it then answers only that client.
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
	return dupBlocking(pc.(syscall.Conn), false)
}

func dupBlocking(c syscall.Conn, stream bool) (rrSock, error) {
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
	return &blockingSock{fd: fd, stream: stream}, nil
}

// A socket with a timeout does not restart a call a signal interrupted
// (Go's runtime signals its threads): retry on EINTR.

func (s *blockingSock) Read(p []byte) (int, error) {
	for {
		n, err := unix.Read(s.fd, p)
		switch {
		case err == unix.EINTR:
			continue
		case err == unix.EAGAIN:
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
	for {
		n, err := unix.Write(s.fd, p)
		switch {
		case err == unix.EINTR:
			continue
		case err == unix.EAGAIN:
			return max(n, 0), os.ErrDeadlineExceeded
		case err != nil:
			return max(n, 0), os.NewSyscallError("write", err)
		}
		return n, nil
	}
}

func (s *blockingSock) SetTimeout(d time.Duration) error {
	tv := unix.NsecToTimeval(int64(d))
	if err := unix.SetsockoptTimeval(s.fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv); err != nil {
		return os.NewSyscallError("setsockopt", err)
	}
	return os.NewSyscallError("setsockopt", unix.SetsockoptTimeval(s.fd, unix.SOL_SOCKET, unix.SO_SNDTIMEO, &tv))
}

// Interrupt shuts the socket down for reading: a read waiting on it
// returns 0 bytes (closing the descriptor would not wake it).
func (s *blockingSock) Interrupt() { unix.Shutdown(s.fd, unix.SHUT_RD) }

func (s *blockingSock) Close() error { return unix.Close(s.fd) }
