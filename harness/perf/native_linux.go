package perf

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"golang.org/x/sys/unix"

	"github.com/atmlab/atmlab/cells/native"
)

// nativeConn is a host's end of a native AAL VC in real time: a packet
// socket (AF_PACKET, SOCK_DGRAM) on the interface, bound to the native
// EtherType. It sends each SDU in a native frame to the VC's MAC address
// (the kernel writes the Ethernet header) and reads the SDUs that arrive
// on its VC, skipping its own outgoing frames and other VCs'.
type nativeConn struct {
	fd      int
	vc      NativeVC
	to      unix.SockaddrLinklayer
	out, in []byte
	oob     []byte        // a received SDU's control data: its receive time
	rcvto   time.Duration // SO_RCVTIMEO as last set: set again only when it changes
}

// openNative opens vc's packet socket, with socket buffers of bufs
// octets when positive (as -s and -S set a UDP socket's). The receive
// buffer is forced past rmem_max (SO_RCVBUFFORCE, which a lab's hosts
// may use): capped at rmem_max's default 208 KiB, a receiver of 952-octet
// SDUs at OC-3c's 17,700 a second dropped 0.1-8 % of them whenever it
// was not scheduled for some milliseconds (PACKET_STATISTICS counted
// every one), and the stream read short for want of a buffer it asked for.
func openNative(vc NativeVC, bufs int) (*nativeConn, error) {
	ifi, err := net.InterfaceByName(vc.Iface)
	if err != nil {
		return nil, fmt.Errorf("native VC %s: %w", vc, err)
	}
	proto := int(htons(native.EtherType))
	fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, proto)
	if err != nil {
		return nil, fmt.Errorf("native VC %s: packet socket: %w (it needs CAP_NET_RAW in the host)", vc, err)
	}
	c := &nativeConn{fd: fd, vc: vc, in: make([]byte, native.HeaderLen+native.MaxSDU+64), oob: make([]byte, stampOOB)}
	c.to = unix.SockaddrLinklayer{Protocol: htons(native.EtherType), Ifindex: ifi.Index, Halen: 6}
	mac := native.VCMAC(vc.VPI, vc.VCI)
	copy(c.to.Addr[:], mac[:])
	if err := unix.Bind(fd, &unix.SockaddrLinklayer{Protocol: htons(native.EtherType), Ifindex: ifi.Index}); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("native VC %s: bind: %w", vc, err)
	}
	unix.SetsockoptInt(fd, unix.SOL_PACKET, unix.PACKET_IGNORE_OUTGOING, 1) // Linux 4.20+; recv checks too
	receiveStamps(fd)
	if bufs > 0 {
		unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_SNDBUF, bufs)
		if unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, bufs) != nil {
			unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUF, bufs)
		}
	}
	return c, nil
}

func htons(v uint16) uint16 { return v<<8 | v>>8 }

// bufs returns the socket buffers the socket has.
func (c *nativeConn) bufs() (snd, rcv int) {
	snd, _ = unix.GetsockoptInt(c.fd, unix.SOL_SOCKET, unix.SO_SNDBUF)
	rcv, _ = unix.GetsockoptInt(c.fd, unix.SOL_SOCKET, unix.SO_RCVBUF)
	return snd, rcv
}

// send sends sdu on the VC; it blocks while the socket's send buffer is
// full, as a UDP socket does.
func (c *nativeConn) send(sdu []byte) error {
	var err error
	if c.out, err = native.Append(c.out[:0], c.vc.VPI, c.vc.VCI, sdu); err != nil {
		return err
	}
	for {
		err = unix.Sendto(c.fd, c.out, 0, &c.to)
		if err != unix.EINTR {
			return err
		}
	}
}

// errTimeout is recv's error when nothing arrived within its timeout.
var errTimeout = errors.New("native VC: timed out")

// recv returns the next SDU on the VC (valid until the next recv) and the
// kernel's time for its arrival (receiveStamps; zero if it gave none), or
// errTimeout once timeout has passed without one.
func (c *nativeConn) recv(timeout time.Duration) ([]byte, time.Time, error) {
	deadline := time.Now().Add(timeout)
	for {
		left := time.Until(deadline)
		if left <= 0 {
			return nil, time.Time{}, errTimeout
		}
		// Each wait is at most 20 ms, so the timeout is set once for a
		// stream's waits, not once an SDU.
		if to := min(left.Round(time.Millisecond)+time.Millisecond, 20*time.Millisecond); to != c.rcvto {
			tv := unix.NsecToTimeval(to.Nanoseconds())
			unix.SetsockoptTimeval(c.fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv)
			c.rcvto = to
		}
		n, oobn, _, from, err := unix.Recvmsg(c.fd, c.in, c.oob, 0)
		switch {
		case err == unix.EAGAIN || err == unix.EINTR:
			continue
		case err != nil:
			return nil, time.Time{}, err
		}
		if ll, ok := from.(*unix.SockaddrLinklayer); ok && ll.Pkttype == unix.PACKET_OUTGOING {
			continue
		}
		h, sdu, perr := native.Parse(c.in[:n])
		if perr != nil || h.VPI != c.vc.VPI || h.VCI != c.vc.VCI {
			continue
		}
		return sdu, stampIn(c.oob[:oobn]), nil
	}
}

// awaitFlush waits until what the socket sent has left the host (its
// queue, SIOCOUTQ, is empty), a second at most: the stream's final flush,
// as UDP_STREAM's.
func (c *nativeConn) awaitFlush(ctx context.Context) {
	for limit := time.Now().Add(time.Second); time.Now().Before(limit) && ctx.Err() == nil; time.Sleep(100 * time.Microsecond) {
		if q, err := unix.IoctlGetInt(c.fd, unix.SIOCOUTQ); err != nil || q == 0 {
			return
		}
	}
}

// drops returns the frames the socket dropped for want of buffer since
// the last call (PACKET_STATISTICS, which reading resets).
func (c *nativeConn) drops() uint64 {
	st, err := unix.GetsockoptTpacketStats(c.fd, unix.SOL_PACKET, unix.PACKET_STATISTICS)
	if err != nil {
		return 0
	}
	return uint64(st.Drops)
}

func (c *nativeConn) close() { unix.Close(c.fd) }

func isMsgSize(err error) bool { return errors.Is(err, unix.EMSGSIZE) }
func isNoBufs(err error) bool  { return errors.Is(err, unix.ENOBUFS) }
