package perf

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"strings"
	"sync"
	"time"

	"github.com/pion/sctp"
)

// pionVersion is the pion/sctp module go.mod requires (a test holds the
// two together).
const pionVersion = "v1.12.1"

// pionMaxPacket is the largest SCTP packet pion/sctp takes: it reads each
// packet into a buffer of this size (its receiveMTU), whatever the path
// MTU, so over jumbo frames its packets are shorter than the kernel's.
const pionMaxPacket = 8192

// pionStall is how long pion's send buffer may stay full, or its flush
// wait, before the association counts as stuck: pion retransmits forever.
const pionStall = 30 * time.Second

// pionSCTP is pion/sctp (WebRTC's data channels' SCTP) in this process,
// carried over a raw IPv4 socket of protocol 132 (rawSCTP): the SCTP
// for a kernel that has none.
type pionSCTP struct{}

// PionImplementation is how a result's implementation names pion/sctp.
const PionImplementation = "pion/sctp " + pionVersion + " (userspace, raw IP 132)"

func (pionSCTP) Name() string { return PionImplementation }

// UserspaceSCTP reports whether a result's implementation ran either end
// over the userspace SCTP, whose CPU is then the tool process's own.
func UserspaceSCTP(implementation string) bool {
	return strings.Contains(implementation, PionImplementation)
}

// pionPacket is pion's packet size on a path of the given MTU: the MTU
// less the IPv4 header, at most pionMaxPacket.
func pionPacket(mtu int) int { return min(mtu-20, pionMaxPacket) }

// ports are the SCTP ports this process's associations hold: the kernel
// keeps no table of them when it has no SCTP.
var ports struct {
	sync.Mutex
	used map[uint16]bool
}

// takePort takes a free port from the dynamic range (RFC 6335).
func takePort() uint16 {
	ports.Lock()
	defer ports.Unlock()
	if ports.used == nil {
		ports.used = map[uint16]bool{}
	}
	for {
		p := uint16(49152 + rand.IntN(16384))
		if !ports.used[p] {
			ports.used[p] = true
			return p
		}
	}
}

func freePort(p uint16) {
	ports.Lock()
	delete(ports.used, p)
	ports.Unlock()
}

// pionBufs is pion's send queue and receive window for a requested
// buffer: the request, else Linux's default.
func pionBufs(requested int) int { return cmp.Or(max(requested, 0), sctpDefaultBuf) }

// rawBuf is the raw socket's receive buffer under a window of bufs: at
// least 4 MiB, so that the socket, which stands where the kernel's SCTP
// would take packets in, never drops what the window lets in while pion
// catches up.
func rawBuf(bufs int) int { return max(bufs, 4<<20) }

// open opens the raw socket and the adapter for an association between
// local and peer.
func (pionSCTP) open(local, peer netip.Addr, remotePort uint16, bufs int) (*rawSCTP, int, error) {
	if !local.Is4() || !peer.Is4() {
		return nil, 0, fmt.Errorf("SCTP over raw IP is IPv4 only here (%v to %v)", local, peer)
	}
	pc, err := openRawIP(local, rawBuf(bufs))
	if err != nil {
		return nil, 0, err
	}
	mtu := pathMTU(local, peer)
	port := takePort()
	return newRawSCTP(&portCloser{ipConn: pc, port: port}, peer, port, remotePort, pionPacket(mtu)), pionPacket(mtu), nil
}

// portCloser frees the association's port when its socket closes.
type portCloser struct {
	ipConn
	port uint16
	once sync.Once
}

func (p *portCloser) Close() error {
	err := p.ipConn.Close()
	p.once.Do(func() { freePort(p.port) })
	return err
}

func pionOptions(rc *rawSCTP, packet, bufs int) []sctp.AssociationOption {
	return []sctp.AssociationOption{sctp.WithNetConn(rc), sctp.WithMTU(uint32(packet)),
		sctp.WithMaxReceiveBufferSize(uint32(bufs)), sctp.WithMaxMessageSize(1 << 20), sctp.WithName("atmlab perf"),
		sctp.WithEnableInterleaving(false)} // DATA chunks, as the kernel's, not RFC 8260's I-DATA
}

func (p pionSCTP) Dial(ctx context.Context, local netip.Addr, remote netip.AddrPort, bufs int) (sctpConn, error) {
	bufs = pionBufs(bufs)
	rc, packet, err := p.open(local, remote.Addr(), remote.Port(), bufs)
	if err != nil {
		return nil, err
	}
	var opts []sctp.ClientOption
	for _, o := range pionOptions(rc, packet, bufs) {
		opts = append(opts, o)
	}
	a, err := sctp.ClientContext(ctx, opts...)
	if err != nil {
		rc.Close()
		return nil, fmt.Errorf("handshake with %v: %w", remote, err)
	}
	s, err := a.OpenStream(0, sctp.PayloadTypeWebRTCBinary)
	if err != nil {
		a.Close()
		return nil, err
	}
	return newPionConn(a, s, rc, bufs), nil
}

func (p pionSCTP) Listen(local, peer netip.Addr, bufs int) (sctpListener, error) {
	bufs = pionBufs(bufs)
	rc, packet, err := p.open(local, peer, 0, bufs)
	if err != nil {
		return nil, err
	}
	return &pionListener{rc: rc, packet: packet, bufs: bufs}, nil
}

// pionListener is a server's raw socket before the client's INIT.
type pionListener struct {
	rc           *rawSCTP
	packet, bufs int
	taken        bool
}

func (l *pionListener) Port() int { return int(l.rc.local) }

func (l *pionListener) Bufs() (int, int) { return l.bufs, l.bufs }

// Accept completes the client's handshake and takes its stream (which
// pion opens with the client's first message), closing the socket if
// that has not happened by deadline.
func (l *pionListener) Accept(deadline time.Time) (sctpConn, error) {
	t := time.AfterFunc(time.Until(deadline), func() { l.rc.Close() })
	defer t.Stop()
	var opts []sctp.ServerOption
	for _, o := range pionOptions(l.rc, l.packet, l.bufs) {
		opts = append(opts, o)
	}
	a, err := sctp.ServerWithOptions(opts...)
	if err != nil {
		return nil, err
	}
	s, err := a.AcceptStream()
	if err != nil {
		a.Close()
		return nil, err
	}
	l.taken = true
	return newPionConn(a, s, l.rc, l.bufs), nil
}

// Close closes the socket unless an association took it.
func (l *pionListener) Close() error {
	if l.taken {
		return nil
	}
	return l.rc.Close()
}

// pionConn is an association and its one stream. pion queues whatever
// is written; Write holds the queue (sent and not yet acknowledged) to
// the send buffer, as a kernel socket's send buffer does.
type pionConn struct {
	a    *sctp.Association
	s    *sctp.Stream
	rc   *rawSCTP
	bufs int
	low  chan struct{}
}

func newPionConn(a *sctp.Association, s *sctp.Stream, rc *rawSCTP, bufs int) *pionConn {
	c := &pionConn{a: a, s: s, rc: rc, bufs: bufs, low: make(chan struct{}, 1)}
	s.OnBufferedAmountLow(func() {
		select {
		case c.low <- struct{}{}:
		default:
		}
	})
	return c
}

// waitBelow waits until no more than n octets are queued: pion calls
// back when a SACK takes the queue to n or below.
func (c *pionConn) waitBelow(ctx context.Context, n uint64) error {
	c.s.SetBufferedAmountLowThreshold(n)
	stall := time.Now().Add(pionStall)
	for c.s.BufferedAmount() > n {
		select {
		case <-c.low:
		case <-time.After(10 * time.Millisecond): // the low mark may have passed before this wait
		case <-ctx.Done():
			return ctx.Err()
		case <-c.rc.closed: // pion closes its conn when the association ends
			return errors.New("pion/sctp: the association ended with data unacknowledged")
		}
		if time.Now().After(stall) {
			return fmt.Errorf("pion/sctp: %d octets unacknowledged for %v: the association is stuck", c.s.BufferedAmount(), pionStall)
		}
	}
	return nil
}

func (c *pionConn) Write(b []byte) (int, error) {
	if room := uint64(max(c.bufs-len(b), 0)); c.s.BufferedAmount() > room {
		if err := c.waitBelow(context.Background(), room); err != nil {
			return 0, err
		}
	}
	return c.s.Write(b)
}

func (c *pionConn) Read(b []byte) (int, error) { return c.s.Read(b) }

func (c *pionConn) SetReadDeadline(t time.Time) error { return c.s.SetReadDeadline(t) }

// CloseWrite resets the outgoing stream: pion sends the request after
// the stream's last message, and the peer performs it once it has all.
func (c *pionConn) CloseWrite() error { return c.s.Close() }

func (c *pionConn) Bufs() (int, int) { return c.bufs, c.bufs }

func (c *pionConn) Close() error { return c.a.Close() }

// SCTPPacketMTU is the IP MTU an SCTP implementation's packets use on a
// path of pathMTU, for its ceiling: pion's packets stop at pionMaxPacket
// (8212-octet IP packets on a 9000-octet path), the kernel's at the path
// MTU. A stream's sender is its client, so a pair of stacks ("pion/sctp
// ... (client), kernel (server)") takes the client's.
func SCTPPacketMTU(implementation string, pathMTU int) int {
	if strings.HasPrefix(implementation, PionImplementation) {
		return pionPacket(pathMTU) + 20
	}
	return pathMTU
}
