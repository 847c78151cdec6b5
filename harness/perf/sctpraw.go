package perf

import (
	"encoding/binary"
	"errors"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/atmlab/atmlab/emulator/vsctp"
)

// pionPort is the SCTP port pion/sctp writes as both ports of every packet
// (WebRTC's 5000): the raw adapter puts the association's own ports on the
// wire instead and gives pion back its 5000s.
const pionPort = 5000

// sctpCommonHeader is the SCTP common header: source and destination
// ports, verification tag, CRC32c checksum (RFC 9260 §3.1).
const sctpCommonHeader = 12

// setPorts writes an SCTP packet's ports and its checksum anew.
func setPorts(pkt []byte, src, dst uint16) {
	binary.BigEndian.PutUint16(pkt[0:2], src)
	binary.BigEndian.PutUint16(pkt[2:4], dst)
	binary.LittleEndian.PutUint32(pkt[8:12], vsctp.Checksum(pkt))
}

// ipConn is a raw IPv4 socket of protocol 132 as the adapter uses it
// (*net.IPConn; a fake in tests): each read one packet's SCTP part from
// the address it came from.
type ipConn interface {
	ReadFromIP(b []byte) (int, *net.IPAddr, error)
	WriteToIP(b []byte, addr *net.IPAddr) (int, error)
	SetReadDeadline(t time.Time) error
	LocalAddr() net.Addr
	Close() error
}

// rawSCTP is a net.Conn that carries one SCTP association for a userspace
// stack over a raw IP socket: it writes the stack's packets to the peer
// with the association's ports, and reads only the peer's packets to its
// port. The raw socket sees every SCTP packet the host receives, so the
// rest (other hosts', other associations', any with a bad checksum) are
// skipped and counted. A server's end learns the peer's port from the
// first packet it takes (the peer's INIT).
type rawSCTP struct {
	pc      ipConn
	peer    netip.Addr
	to      *net.IPAddr
	local   uint16
	remote  atomic.Uint32 // the peer's port; 0 until learnt
	in      []byte
	wmu     sync.Mutex
	out     []byte
	skipped atomic.Uint64
	// full counts the writes that found the socket's send buffer full;
	// dropped the packets given up on after a second of that.
	full, dropped atomic.Uint64
	closed        chan struct{}
	closeOnce     sync.Once
}

// newRawSCTP carries an association between local (this end's port) and
// peer:remote over pc; remote 0 takes the peer's port from its first
// packet. maxPacket is the largest SCTP packet either way.
func newRawSCTP(pc ipConn, peer netip.Addr, local, remote uint16, maxPacket int) *rawSCTP {
	c := &rawSCTP{pc: pc, peer: peer, to: &net.IPAddr{IP: peer.AsSlice()}, local: local,
		in: make([]byte, 1<<16), out: make([]byte, maxPacket), closed: make(chan struct{})}
	c.remote.Store(uint32(remote))
	return c
}

// accept reports whether a packet from src belongs to the association,
// learning the peer's port from the first that does.
func (c *rawSCTP) accept(src netip.Addr, pkt []byte) bool {
	if len(pkt) < sctpCommonHeader || src.Unmap() != c.peer {
		return false
	}
	sport, dport := binary.BigEndian.Uint16(pkt[0:2]), binary.BigEndian.Uint16(pkt[2:4])
	if dport != c.local || sport == 0 || binary.LittleEndian.Uint32(pkt[8:12]) != vsctp.Checksum(pkt) {
		return false
	}
	r := c.remote.Load()
	if r == 0 {
		return c.remote.CompareAndSwap(0, uint32(sport)) || c.remote.Load() == uint32(sport)
	}
	return r == uint32(sport)
}

// Read returns the association's next packet, its ports the stack's.
func (c *rawSCTP) Read(b []byte) (int, error) {
	for {
		n, from, err := c.pc.ReadFromIP(c.in)
		if err != nil {
			return 0, err
		}
		src, _ := netip.AddrFromSlice(from.IP)
		pkt := c.in[:n]
		if !c.accept(src, pkt) || n > len(b) {
			c.skipped.Add(1)
			continue
		}
		copy(b, pkt)
		setPorts(b[:n], pionPort, pionPort)
		return n, nil
	}
}

// Write sends one of the stack's packets to the peer with the
// association's ports.
func (c *rawSCTP) Write(b []byte) (int, error) {
	r := uint16(c.remote.Load())
	if r == 0 {
		return 0, errors.New("SCTP over raw IP: the peer's port is not known yet")
	}
	if len(b) < sctpCommonHeader || len(b) > len(c.out) {
		return 0, errors.New("SCTP over raw IP: packet larger than the path MTU")
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	pkt := c.out[:len(b)]
	copy(pkt, b)
	setPorts(pkt, c.local, r)
	// A raw socket does not block when its send buffer is full: it says
	// ENOBUFS. Wait for room as a blocking socket would, for a while.
	for wait := time.Now().Add(time.Second); ; time.Sleep(100 * time.Microsecond) {
		_, err := c.pc.WriteToIP(pkt, c.to)
		switch {
		case err == nil:
			return len(b), nil
		case !errors.Is(err, syscall.ENOBUFS):
			return 0, err
		case time.Now().After(wait):
			c.dropped.Add(1) // lost, as on a congested link: SCTP sends it again
			return len(b), nil
		}
		c.full.Add(1)
	}
}

// Close closes the socket; closed says it has been.
func (c *rawSCTP) Close() error {
	c.closeOnce.Do(func() { close(c.closed) })
	return c.pc.Close()
}

func (c *rawSCTP) LocalAddr() net.Addr                { return c.pc.LocalAddr() }
func (c *rawSCTP) RemoteAddr() net.Addr               { return c.to }
func (c *rawSCTP) SetDeadline(t time.Time) error      { return c.pc.SetReadDeadline(t) }
func (c *rawSCTP) SetReadDeadline(t time.Time) error  { return c.pc.SetReadDeadline(t) }
func (c *rawSCTP) SetWriteDeadline(t time.Time) error { return nil }
