package perf

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"os"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// kernelHasSCTP probes once whether the kernel opens SCTP sockets (a
// kernel without its sctp module gives EPROTONOSUPPORT).
var kernelHasSCTP = sync.OnceValue(func() bool {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, unix.IPPROTO_SCTP)
	if err != nil {
		return false
	}
	unix.Close(fd)
	return true
})

// openRawIP opens a raw IPv4 socket of protocol 132 on local, its
// receive buffer bufs octets (forced past rmem_max): it holds the
// association's window while pion catches up. The send buffer stays the
// default: what it admits waits in the host's qdisc, whose limit a larger
// one would overrun, and the qdisc drops silently where the socket
// says ENOBUFS (rawSCTP.Write then waits).
func openRawIP(local netip.Addr, bufs int) (*net.IPConn, error) {
	pc, err := net.ListenIP("ip4:132", &net.IPAddr{IP: local.AsSlice()})
	if err != nil {
		return nil, fmt.Errorf("raw IP socket of protocol 132 on %v: %w (it needs CAP_NET_RAW in the host)", local, err)
	}
	if raw, err := pc.SyscallConn(); err == nil {
		raw.Control(func(fd uintptr) {
			if unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, bufs) != nil {
				unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_RCVBUF, bufs)
			}
		})
	}
	return pc, nil
}

// pathMTU is the MTU of the route from local to peer (IP_MTU of a
// connected UDP socket, which sends nothing), 1500 if unknown.
func pathMTU(local, peer netip.Addr) int {
	c, err := net.DialUDP("udp4", &net.UDPAddr{IP: local.AsSlice()}, &net.UDPAddr{IP: peer.AsSlice(), Port: 9})
	if err != nil {
		return 1500
	}
	defer c.Close()
	mtu := 1500
	if raw, err := c.SyscallConn(); err == nil {
		raw.Control(func(fd uintptr) {
			if v, err := unix.GetsockoptInt(int(fd), unix.IPPROTO_IP, unix.IP_MTU); err == nil && v > 0 {
				mtu = v
			}
		})
	}
	return mtu
}

// sctpNoDelay is SCTP_NODELAY (linux/sctp.h), at level IPPROTO_SCTP.
const sctpNoDelay = 3

// kernelSCTP is the kernel's SCTP: one-to-one sockets (SOCK_STREAM),
// each write a message. SCTP_NODELAY is set, as pion has no Nagle.
type kernelSCTP struct{}

func (kernelSCTP) Name() string { return "kernel" }

// socket opens an SCTP socket bound to local with buffers of bufs, or
// the kernel's default (sctp_wmem's and sctp_rmem's) if bufs is 0.
func (kernelSCTP) socket(local netip.Addr, bufs int) (int, error) {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, unix.IPPROTO_SCTP)
	if err != nil {
		return -1, fmt.Errorf("kernel SCTP socket: %w", err)
	}
	if bufs > 0 {
		unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_SNDBUF, bufs)
		unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUF, bufs)
	}
	unix.SetsockoptInt(fd, unix.IPPROTO_SCTP, sctpNoDelay, 1)
	if err := unix.Bind(fd, &unix.SockaddrInet4{Addr: local.As4()}); err != nil {
		unix.Close(fd)
		return -1, fmt.Errorf("kernel SCTP bind to %v: %w", local, err)
	}
	return fd, nil
}

func (k kernelSCTP) Dial(ctx context.Context, local netip.Addr, remote netip.AddrPort, bufs int) (sctpConn, error) {
	fd, err := k.socket(local, bufs)
	if err != nil {
		return nil, err
	}
	tv := unix.NsecToTimeval(int64(ConnectTimeout))
	unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_SNDTIMEO, &tv) // bounds the blocking connect
	if err := unix.Connect(fd, &unix.SockaddrInet4{Addr: remote.Addr().As4(), Port: int(remote.Port())}); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("connect to %v: %w", remote, err)
	}
	unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_SNDTIMEO, &unix.Timeval{})
	f := os.NewFile(uintptr(fd), "sctp")
	defer f.Close()
	c, err := net.FileConn(f) // a one-to-one SCTP socket reads and writes as a TCP one does
	if err != nil {
		return nil, err
	}
	return kernelConn{c}, nil
}

func (k kernelSCTP) Listen(local, _ netip.Addr, bufs int) (sctpListener, error) {
	fd, err := k.socket(local, bufs)
	if err != nil {
		return nil, err
	}
	if err := unix.Listen(fd, 1); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("kernel SCTP listen: %w", err)
	}
	sa, _ := unix.Getsockname(fd)
	port := 0
	if in4, ok := sa.(*unix.SockaddrInet4); ok {
		port = in4.Port
	}
	f := os.NewFile(uintptr(fd), "sctp")
	defer f.Close()
	ln, err := net.FileListener(f)
	if err != nil {
		return nil, err
	}
	return kernelListener{ln.(*net.TCPListener), port}, nil
}

type kernelListener struct {
	ln   *net.TCPListener
	port int
}

func (l kernelListener) Port() int        { return l.port }
func (l kernelListener) Bufs() (int, int) { return sockbufs(l.ln) }
func (l kernelListener) Close() error     { return l.ln.Close() }
func (l kernelListener) Accept(deadline time.Time) (sctpConn, error) {
	l.ln.SetDeadline(deadline)
	c, err := l.ln.Accept()
	if err != nil {
		return nil, err
	}
	return kernelConn{c}, nil
}

// kernelConn is an association on a one-to-one SCTP socket.
type kernelConn struct{ net.Conn }

// CloseWrite shuts the association down: the kernel sends SHUTDOWN once
// the peer has acknowledged everything, and the read side ends when the
// peer's SHUTDOWN ACK comes.
func (c kernelConn) CloseWrite() error {
	return c.Conn.(interface{ CloseWrite() error }).CloseWrite()
}

func (c kernelConn) Bufs() (int, int) { return sockbufs(c.Conn.(syscall.Conn)) }
