package perf

import (
	"net"
	"os"
	"sync/atomic"
	"time"
)

// rrSock carries a request/response test's messages, one transaction at a
// time. On Unix it is the socket itself in blocking mode (rrsock_unix.go),
// read and written with plain system calls as netperf does: the kernel
// wakes the one thread that waits. Through Go's netpoller a message that
// came after a quiet spell woke the poller's thread, which woke another to
// run the goroutine: over `delay: 5ms` that hand-off, on a host's idle
// core, added 50-100 µs to a transaction that netperf does not pay.
type rrSock interface {
	Read(p []byte) (int, error)
	Write(p []byte) (int, error)
	// SetTimeout bounds each Read and Write that follows (0: none).
	SetTimeout(d time.Duration) error
	// Interrupt ends a Read waiting in another goroutine, and all that
	// follow.
	Interrupt()
	// Close releases the socket (on Unix the connection it was made from
	// is already closed: rrsock_unix.go).
	Close() error
}

// netSock is an rrSock over a Go connection, where there is no blocking
// one: a net.Conn, or a PacketConn that answers one peer (peerConn).
type netSock struct {
	c       conn
	timeout time.Duration
	stopped atomic.Bool // Interrupt was called
}

// conn is what netSock needs of a connection.
type conn interface {
	Read(p []byte) (int, error)
	Write(p []byte) (int, error)
	SetReadDeadline(t time.Time) error
	SetWriteDeadline(t time.Time) error
}

// peerConn is a PacketConn that reads from anyone and writes to peer.
type peerConn struct {
	net.PacketConn
	peer net.Addr
}

func (c peerConn) Read(p []byte) (int, error) {
	n, _, err := c.ReadFrom(p)
	return n, err
}

func (c peerConn) Write(p []byte) (int, error) { return c.WriteTo(p, c.peer) }

func (s *netSock) deadline() time.Time {
	if s.timeout == 0 {
		return time.Time{}
	}
	return time.Now().Add(s.timeout)
}

func (s *netSock) Read(p []byte) (int, error) {
	if s.stopped.Load() {
		return 0, os.ErrDeadlineExceeded
	}
	s.c.SetReadDeadline(s.deadline())
	return s.c.Read(p)
}

func (s *netSock) Write(p []byte) (int, error) {
	s.c.SetWriteDeadline(s.deadline())
	return s.c.Write(p)
}

func (s *netSock) SetTimeout(d time.Duration) error { s.timeout = d; return nil }

func (s *netSock) Interrupt() {
	s.stopped.Store(true)
	s.c.SetReadDeadline(time.Now())
}

func (s *netSock) Close() error { return nil }
