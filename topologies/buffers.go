package topologies

import "time"

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
