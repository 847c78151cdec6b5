package cut

import (
	"net/netip"
	"syscall"
)

// rawRead says the loop may read the socket itself (Cuts.handOver).
const rawRead = true

// recvFrom reads one datagram without waiting: ok is false when none is
// there.
func recvFrom(rc syscall.RawConn, buf []byte) (n int, from netip.AddrPort, ok bool) {
	var sa syscall.Sockaddr
	var err error
	if rerr := rc.Read(func(fd uintptr) bool {
		n, sa, err = syscall.Recvfrom(int(fd), buf, syscall.MSG_DONTWAIT)
		return true
	}); rerr != nil || err != nil {
		return 0, from, false
	}
	switch a := sa.(type) {
	case *syscall.SockaddrInet4:
		return n, netip.AddrPortFrom(netip.AddrFrom4(a.Addr), uint16(a.Port)), true
	case *syscall.SockaddrInet6:
		return n, netip.AddrPortFrom(netip.AddrFrom16(a.Addr).Unmap(), uint16(a.Port)), true
	}
	return n, from, true // from no address: a stray
}
