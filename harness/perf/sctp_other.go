//go:build !linux

package perf

import (
	"context"
	"errors"
	"net"
	"net/netip"
)

// Elsewhere than Linux, SCTP runs in userspace only, and raw IP sockets
// are opened as the platform allows.
func kernelHasSCTP() bool { return false }

func openRawIP(local netip.Addr, _ int) (*net.IPConn, error) {
	return net.ListenIP("ip4:132", &net.IPAddr{IP: local.AsSlice()})
}

func pathMTU(netip.Addr, netip.Addr) int { return 1500 }

// kernelSCTP is never chosen off Linux.
type kernelSCTP struct{}

func (kernelSCTP) Name() string { return "kernel" }
func (kernelSCTP) Dial(context.Context, netip.Addr, netip.AddrPort, int) (sctpConn, error) {
	return nil, errors.New("kernel SCTP: Linux only here")
}
func (kernelSCTP) Listen(netip.Addr, netip.Addr, int) (sctpListener, error) {
	return nil, errors.New("kernel SCTP: Linux only here")
}
