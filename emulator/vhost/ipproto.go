package vhost

import (
	"encoding/binary"
	"fmt"
	"net/netip"

	"gvisor.dev/gvisor/pkg/buffer"
	"gvisor.dev/gvisor/pkg/tcpip"
	"gvisor.dev/gvisor/pkg/tcpip/header"
	"gvisor.dev/gvisor/pkg/tcpip/network/ipv4"
	"gvisor.dev/gvisor/pkg/tcpip/stack"
)

// IPProto is an application's own transport over IPv4 on a virtual host
// (SCTP, protocol 132, which netstack has not): what it sends, the stack
// routes, resolves and puts an IP header on, as for its own protocols;
// packets of its protocol addressed to the host come to OnPacket at the
// host's link endpoint, before the stack sees them (netstack would answer
// them with ICMP protocol unreachable). Call it only on the driver's
// goroutine.
type IPProto struct {
	h     *Host
	proto uint8
	// OnPacket is called with each packet of the protocol that arrives
	// for the host: its source and its payload (valid only during the
	// call), on the driver's goroutine, followed by the barrier. It
	// returns false for a packet that is not its own (another socket's).
	OnPacket func(src netip.Addr, payload []byte) bool
	// Dropped counts packets Send could not queue.
	Dropped uint64
}

// OpenIP opens the host's end of IP protocol proto; several may be open
// at once, each offered every packet until one takes it.
func (h *Host) OpenIP(proto uint8) *IPProto {
	p := &IPProto{h: h, proto: proto}
	h.ipprotos = append(h.ipprotos, p)
	return p
}

// Close stops the callbacks.
func (p *IPProto) Close() {
	for i, o := range p.h.ipprotos {
		if o == p {
			p.h.ipprotos = append(p.h.ipprotos[:i], p.h.ipprotos[i+1:]...)
			return
		}
	}
}

// Send sends payload to dst in one IPv4 packet with DF set (the
// protocol sizes its packets to the MTU, as SCTP does). The host's
// barrier hands it to the NIC.
func (p *IPProto) Send(dst netip.Addr, payload []byte) error {
	r, err := p.h.Stack.FindRoute(0, tcpip.Address{}, tcpip.AddrFrom4(dst.As4()), ipv4.ProtocolNumber, false)
	if err != nil {
		return fmt.Errorf("%s: no route to %s: %s", p.h.Name, dst, err)
	}
	defer r.Release()
	pkt := stack.NewPacketBuffer(stack.PacketBufferOptions{ReserveHeaderBytes: int(r.MaxHeaderLength()), Payload: buffer.MakeWithData(payload)})
	defer pkt.DecRef()
	pkt.TransportProtocolNumber = tcpip.TransportProtocolNumber(p.proto)
	if err := r.WritePacket(stack.NetworkHeaderParams{Protocol: tcpip.TransportProtocolNumber(p.proto), TTL: 64, DF: true}, pkt); err != nil {
		p.Dropped++
		return fmt.Errorf("%s: send to %s: %s", p.h.Name, dst, err)
	}
	return nil
}

// ipIn hands an unfragmented IPv4 packet of an open protocol, addressed
// to the interface, to its IPProto; false if it is none (the stack then
// sees it).
func (c *nic) ipIn(d []byte) bool {
	if len(c.h.ipprotos) == 0 || len(d) < 14+header.IPv4MinimumSize || binary.BigEndian.Uint16(d[12:]) != uint16(header.IPv4ProtocolNumber) {
		return false
	}
	ip := header.IPv4(d[14:])
	if !ip.IsValid(len(d)-14) || ip.More() || ip.FragmentOffset() != 0 || !ip.IsChecksumValid() {
		return false
	}
	if addr, err := c.h.Stack.GetMainNICAddress(c.id, ipv4.ProtocolNumber); err != nil || addr.Address != ip.DestinationAddress() {
		return false
	}
	src := netip.AddrFrom4(ip.SourceAddress().As4())
	payload := ip.Payload()
	for _, p := range c.h.ipprotos {
		if uint8(ip.Protocol()) == p.proto && p.OnPacket != nil && p.OnPacket(src, payload) {
			return true
		}
	}
	return false
}
