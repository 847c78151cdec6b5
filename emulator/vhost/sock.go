package vhost

import (
	"fmt"
	"io"
	"net/netip"

	"gvisor.dev/gvisor/pkg/tcpip"
	"gvisor.dev/gvisor/pkg/tcpip/network/ipv4"
	"gvisor.dev/gvisor/pkg/waiter"
)

// Socket is a netstack endpoint an application drives without blocking:
// OnEvent runs on the driver's goroutine, after the barrier, whenever the
// endpoint may have become readable or writable, or failed.
type Socket struct {
	H       *Host
	EP      tcpip.Endpoint
	WQ      *waiter.Queue
	OnEvent func()
	watch   *Watch
}

const allEvents = waiter.ReadableEvents | waiter.WritableEvents | waiter.EventHUp | waiter.EventErr

// Socket opens an endpoint of transport protocol proto (tcp.ProtocolNumber,
// udp.ProtocolNumber) on the host.
func (h *Host) Socket(proto tcpip.TransportProtocolNumber) (*Socket, error) {
	s := &Socket{H: h, WQ: &waiter.Queue{}}
	ep, err := h.Stack.NewEndpoint(proto, ipv4.ProtocolNumber, s.WQ)
	if err != nil {
		return nil, fmt.Errorf("%s: socket: %s", h.Name, err)
	}
	s.EP = ep
	s.watch = h.Watch(s.WQ, allEvents, func() {
		if s.OnEvent != nil {
			s.OnEvent()
		}
	})
	return s, nil
}

// adopt wraps an accepted endpoint.
func (h *Host) adopt(ep tcpip.Endpoint, wq *waiter.Queue) *Socket {
	s := &Socket{H: h, EP: ep, WQ: wq}
	s.watch = h.Watch(wq, allEvents, func() {
		if s.OnEvent != nil {
			s.OnEvent()
		}
	})
	return s
}

// Wake runs OnEvent after the current barrier (an application that set
// OnEvent after the events it waits for may have fired).
func (s *Socket) Wake() { s.watch.Wake() }

// Read reads what the endpoint holds into dst, as a socket's recvmsg does:
// what it took also feeds TCP's receive-buffer auto-tuning. Netstack
// leaves that to its caller (gVisor's socket layer and gonet call
// ModerateRecvBuf after every read); without it a TCP receiver's buffer
// stays at tcp_rmem's default for the whole connection.
func (s *Socket) Read(dst io.Writer, opts tcpip.ReadOptions) (tcpip.ReadResult, tcpip.Error) {
	res, err := s.EP.Read(dst, opts)
	if res.Count > 0 && !opts.Peek {
		s.EP.ModerateRecvBuf(res.Count)
	}
	return res, err
}

// Close closes the endpoint and stops its callbacks.
func (s *Socket) Close() {
	s.watch.Cancel()
	s.EP.Close()
}

// Addr is an IPv4 address and port as netstack takes it.
func Addr(a netip.Addr, port uint16) tcpip.FullAddress {
	return tcpip.FullAddress{Addr: tcpip.AddrFrom4(a.As4()), Port: port}
}

// Listen makes s a listener on port; accept runs for every connection
// that completes, in the order they complete.
func (s *Socket) Listen(port uint16, accept func(c *Socket)) error {
	if err := s.EP.Bind(tcpip.FullAddress{Port: port}); err != nil {
		return fmt.Errorf("%s: bind port %d: %s", s.H.Name, port, err)
	}
	if err := s.EP.Listen(128); err != nil {
		return fmt.Errorf("%s: listen on port %d: %s", s.H.Name, port, err)
	}
	s.OnEvent = func() {
		for {
			ep, wq, err := s.EP.Accept(nil)
			if err != nil {
				return
			}
			accept(s.H.adopt(ep, wq))
		}
	}
	return nil
}

// Connect starts connecting s to addr; OnEvent runs once it is connected
// (or failed: Err says so).
func (s *Socket) Connect(addr tcpip.FullAddress) error {
	switch err := s.EP.Connect(addr).(type) {
	case nil, *tcpip.ErrConnectStarted:
		return nil
	default:
		return fmt.Errorf("%s: connect to %s:%d: %s", s.H.Name, addr.Addr, addr.Port, err)
	}
}

// Err returns the endpoint's pending error, if any (a refused or reset
// connection).
func (s *Socket) Err() tcpip.Error { return s.EP.LastError() }

func netipOf(s string) netip.Addr { return netip.MustParseAddr(s) }
