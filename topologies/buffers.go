package topologies

import (
	"math"
	"time"
)

// MaxTCPBuffer bounds TCPBufferMax: a lab whose delays add up to seconds
// gets this, not gigabytes of socket memory per connection.
const MaxTCPBuffer = 256 << 20

// TCPBufferMax is the most a host's TCP sockets need to grow to (the third
// value of its namespace's net.ipv4.tcp_rmem and tcp_wmem) for one
// connection to fill the host's fastest link over the lab's longest round
// trip: twice the bandwidth-delay product, since Linux keeps about half of
// a socket's buffer for payload, rounded up to a MiB and at most
// MaxTCPBuffer. The round trip is bounded by every link's delay, jitter
// and propagation both ways, whichever path the connection takes. 0 for a
// node that is not a host or a lab without delays: the kernel's own
// maximum then suffices.
func (l *Lab) TCPBufferMax(host string) int {
	n := l.Node(host)
	if n == nil || n.Kind != KindHost {
		return 0
	}
	var rate float64 // bit/s
	for _, i := range n.Interfaces {
		k := l.LinkOf(Endpoint{Node: host, Port: i.Name})
		if k == nil {
			continue
		}
		out := k.AB
		if k.B == (Endpoint{Node: host, Port: i.Name}) {
			out = k.BA
		}
		rate = max(rate, float64(out.Rate))
	}
	var rtt time.Duration
	for _, k := range l.Links {
		one := func(d Direction) time.Duration { return d.Impair.Delay + d.Impair.Jitter }
		rtt += 2*k.Propagation + one(k.AB) + one(k.BA)
	}
	if rate == 0 || rtt == 0 {
		return 0
	}
	need := 2 * rate / 8 * rtt.Seconds()
	if need >= MaxTCPBuffer {
		return MaxTCPBuffer
	}
	const mib = 1 << 20
	return (int(need) + mib - 1) / mib * mib
}

// SmallestTruesize is what Linux charges a socket's receive buffer for the
// smallest frame a host's TAP hands it (the sk_buff's truesize: 576 octets
// of sk_buff and shared info, and the frame with 64 octets of headroom in
// 64-octet steps). Measured with ss -m on a host of a lab (Linux 6.18,
// TestTAPDatagramTruesize): 704 octets for a UDP datagram of 0-18 payload
// octets, 768 at 60, 832 at 100-149, 896 at 200, 2176 at 1444.
const SmallestTruesize = 704

// ReceiverBudget is how long a receiving socket should hold its link's
// frames while its reader is off the CPU: a few of the scheduler's slices
// on a machine whose cores the tools and the emulator share.
const ReceiverBudget = 10 * time.Millisecond

// etherMinWire is the least an Ethernet frame takes on the wire: 64
// octets with its FCS, preamble and inter-frame gap (emulator.EtherMinWire).
const etherMinWire = 8 + 64 + 12

// SocketBufferDefault is the default receive buffer (net.core.rmem_default)
// a host's sockets need to hold ReceiverBudget of its fastest link's
// smallest frames, each charged SmallestTruesize: the link's most frames a
// second (one cell per frame on ATM, at the link's peak cell rate;
// 84-octet frames on Ethernet) x ReceiverBudget x SmallestTruesize,
// rounded up to 4 KiB. 0 for a node that is not a host. Linux keeps
// net.core.rmem_default host-wide (a network namespace reads it but cannot
// write it), so atmlab states this figure rather than writing it.
func (l *Lab) SocketBufferDefault(host string) int {
	n := l.Node(host)
	if n == nil || n.Kind != KindHost {
		return 0
	}
	var fps float64 // frames a second
	for _, i := range n.Interfaces {
		k := l.LinkOf(Endpoint{Node: host, Port: i.Name})
		if k == nil {
			continue
		}
		in := k.BA // what the host receives
		if k.B == (Endpoint{Node: host, Port: i.Name}) {
			in = k.AB
		}
		f := float64(in.Rate) / (8 * etherMinWire)
		if k.ATM != nil {
			f = k.ATM.PHY.Layer().CellRate()
			if k.ATM.PCR > 0 {
				f = k.ATM.PCR
			}
		}
		fps = max(fps, f)
	}
	const page = 4096
	need := fps * ReceiverBudget.Seconds() * SmallestTruesize
	return int(math.Ceil(need/page)) * page
}
