package virtual

import (
	"math"
	"net/netip"
	"testing"
	"time"

	"github.com/atmlab/atmlab/harness/perf"
	"github.com/atmlab/atmlab/harness/vperf"
)

// sctpWAN is sandia-wan's shape: two hosts at MTU 9000 on a 1 Gbit/s
// store-and-forward switch, the server's link delayed by delay each way.
func sctpWAN(delay string) string {
	return `
name: vwan
topology:
  nodes:
    client: {kind: host, ipv4: 10.0.0.1/24, mtu: 9000}
    server: {kind: host, ipv4: 10.0.0.2/24, mtu: 9000}
    wanem: {kind: switch, buffer: 4MiB}
  links:
    - {endpoints: ["client:eth0", "wanem:p1"], ethernet: {rate: 1G}}
    - {endpoints: ["server:eth0", "wanem:p2"], ethernet: {rate: 1G}, impair: {delay: ` + delay + `}}
`
}

// runSCTP runs an SCTP test from client to server on sctpWAN(delay), the
// hosts' processing jitter off so that times are exact.
func runSCTP(t *testing.T, delay string, spec perf.Spec) perf.Result {
	t.Helper()
	l := lab(t, sctpWAN(delay))
	v, err := Build(l, l.Seed)
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	for _, h := range v.Hosts {
		h.Settings.Jitter = 0
	}
	v.Sched.RunUntil(StartAt)
	res, err := vperf.Run(vperf.Test{Lab: v.Lab, From: "client", To: "server", Addr: netip.MustParseAddr("10.0.0.2"), Spec: spec})
	if err != nil {
		t.Fatal(err)
	}
	// SCTP's packets are taken at the hosts' link endpoints: netstack,
	// which has no protocol 132, never sees them to answer with ICMP
	// protocol unreachable.
	for name, h := range v.Hosts {
		if n := h.Stack.Stats().ICMP.V4.PacketsSent.DstUnreachable.Value(); n != 0 {
			t.Errorf("%s sent %d ICMP destination unreachable", name, n)
		}
	}
	if res.Implementation != vperf.Implementation {
		t.Errorf("implementation %q, want %q", res.Implementation, vperf.Implementation)
	}
	return res
}

// SCTP_RR over a 2 ms round trip: every transaction after the first is
// the round trip plus four serializations (two hops each way) of a
// 68-octet packet (IP 20, common header 12, a bundled SACK 16, DATA 16 and
// one octet padded to 4), each 68 + 26 octets (Ethernet header, FCS,
// preamble) at 1 Gbit/s: 752 ns, so 2.003008 ms; the first carries no
// SACK, 2 x 16 octets less, 2.002752 ms. A 1 s run completes the 500
// transactions that start before it ends.
func TestSCTPRRIsTheRoundTripAndFourPackets(t *testing.T) {
	res := runSCTP(t, "1ms", perf.Spec{Test: perf.SCTPRR, Duration: time.Second, Request: 1, Response: 1})
	const first, rest = 2002752 * time.Nanosecond, 2003008 * time.Nanosecond
	if want := (first + 499*rest).Seconds(); res.Transactions != 500 || math.Abs(res.Elapsed-want) > 1e-12 {
		t.Errorf("%d transactions in %.9f s, want 500 in %.9f s", res.Transactions, res.Elapsed, want)
	}
	if res.Latency.Max != 2003.008 || res.Timeouts != 0 {
		t.Errorf("latency %+v, timeouts %d, want a maximum of 2003.008 µs", *res.Latency, res.Timeouts)
	}
}

// SCTP_STREAM of 8952-octet messages (one full DATA chunk each at MTU
// 9000) over a 2 ms round trip, the window (865,500 octets) over the
// 250 kB in flight: the link is the limit, and 2 s reach the SCTP ceiling,
// 8952/9038 of 1 Gbit/s, less the slow start and the shutdown (under
// 1 %); every message arrives once; the run repeats exactly.
func TestSCTPStreamReachesTheCeiling(t *testing.T) {
	spec := perf.Spec{Test: perf.SCTPStream, Duration: 2 * time.Second, Message: 8952}
	res := runSCTP(t, "1ms", spec)
	ceiling := 1e9 * 8952 / 9038
	if res.ThroughputBps > ceiling || res.ThroughputBps < 0.99*ceiling {
		t.Errorf("%.3f Mbit/s, want within 1 %% below %.3f", res.ThroughputBps/1e6, ceiling/1e6)
	}
	if res.BytesReceived != res.BytesSent || res.MessagesReceived != res.MessagesSent {
		t.Errorf("received %d of %d octets", res.BytesReceived, res.BytesSent)
	}
	if again := runSCTP(t, "1ms", spec); again.BytesReceived != res.BytesReceived || again.Elapsed != res.Elapsed {
		t.Errorf("a second run: %d octets in %v s, the first %d in %v s", again.BytesReceived, again.Elapsed, res.BytesReceived, res.Elapsed)
	}
}

// Over a 40 ms round trip with a 447,600-octet receive buffer (-S: 50
// chunks of 8952) the peer's window is the limit: 50 chunks a round trip,
// 447600 x 8 / 40 ms = 89.52 Mbit/s. Once the slow start is over, every
// 1 s interval delivers 25 windows (89.52 Mbit/s), or 24 when a window's
// last SACK falls past the interval's end (the round trip is 40 ms plus
// two serializations of a 9000-octet packet, so windows drift against
// the interval); the run's mean stays under the bound.
func TestSCTPStreamIsBoundByThePeersWindow(t *testing.T) {
	res := runSCTP(t, "20ms", perf.Spec{Test: perf.SCTPStream, Duration: 10 * time.Second, Message: 8952, RecvBuf: 447600, Interval: time.Second})
	window := 447600 * 8.0
	if bound := window / 0.040; res.ThroughputBps > bound || res.ThroughputBps < 0.96*bound {
		t.Errorf("%.3f Mbit/s, want under %.3f and within 4 %%", res.ThroughputBps/1e6, bound/1e6)
	}
	if len(res.Intervals) != 10 {
		t.Fatalf("%d intervals, want 10", len(res.Intervals))
	}
	for _, iv := range res.Intervals[1:] {
		if iv.Bps != 25*window && iv.Bps != 24*window {
			t.Errorf("interval %v-%v s: %.0f bit/s, want 25 or 24 windows (%.0f, %.0f)", iv.Start, iv.End, iv.Bps, 25*window, 24*window)
		}
	}
}
