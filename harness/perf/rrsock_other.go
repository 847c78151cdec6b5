//go:build !unix

package perf

import "net"

// rrSocket returns c for a request/response test (rrsock.go).
func rrSocket(c net.Conn) (rrSock, error) { return &netSock{c: c}, nil }

// rrPacketSocket returns pc answering only peer, for the server of a
// UDP_RR test.
func rrPacketSocket(pc net.PacketConn, peer net.Addr) (rrSock, error) {
	return &netSock{c: peerConn{pc, peer}}, nil
}
