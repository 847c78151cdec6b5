//go:build !linux

package cut

import (
	"net/netip"
	"syscall"
)

// rawRead: elsewhere the reader goroutine keeps the socket.
const rawRead = false

func recvFrom(syscall.RawConn, []byte) (int, netip.AddrPort, bool) { return 0, netip.AddrPort{}, false }
