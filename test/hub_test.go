//go:build integration

package test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/atmlab/atmlab/harness/perf"
)

// hubLab: hosts h1..h4 on one 100M hub (repeater class II, short cables).
const hubLab = `
name: NAME
topology:
  nodes:
    h1: {kind: host, ipv4: 10.0.0.1/24, sysctls: {net.ipv4.tcp_congestion_control: cubic}}
    h2: {kind: host, ipv4: 10.0.0.2/24, sysctls: {net.ipv4.tcp_congestion_control: cubic}}
    h3: {kind: host, ipv4: 10.0.0.3/24}
    h4: {kind: host, ipv4: 10.0.0.4/24}
    hub1: {kind: hub}
  links:
    - {endpoints: ["h1:eth0", "hub1:p1"], ethernet: {rate: 100M}}
    - {endpoints: ["h2:eth0", "hub1:p2"], ethernet: {rate: 100M}}
    - {endpoints: ["h3:eth0", "hub1:p3"], ethernet: {rate: 100M}}
    - {endpoints: ["h4:eth0", "hub1:p4"], ethernet: {rate: 100M}}
`

// halfDuplex returns a host port's collision counters from stats.
func halfDuplex(t *testing.T, r *running, port string) (collisions, excessive uint64) {
	t.Helper()
	for _, p := range r.stats().Ports {
		if p.Port == port {
			if p.HalfDuplex == nil {
				t.Fatalf("%s has no half-duplex counters: is it on a hub?", port)
			}
			return p.HalfDuplex.Collisions, p.HalfDuplex.ExcessiveCollision
		}
	}
	t.Fatalf("no port %s", port)
	return 0, 0
}

// One sender through a hub: line rate, and nothing to collide with.
func TestHubOneSender(t *testing.T) {
	requireRoot(t, "iperf3")
	r := up(t, hubLab)
	r.exec("h1", "ping", "-c", "1", "-W", "2", "10.0.0.2")
	// Count collisions in the steady state only: when the test ends,
	// iperf3's control connection answers while data still drains, and it
	// shares the medium too. (Under load `atmlab stats` takes about a
	// second to start, so the samples leave room.)
	var udp iperf
	var c0, c1 uint64
	quietRun(t, "UDP through a hub", func() (int, int) {
		res := make(chan iperf, 1)
		go func() { res <- r.runIperfNoFatal("h1", "h2", "10.0.0.2", 5201, 10, "-u", "-b", "150M", "-l", "1472") }()
		// The collision counter is read over a window of the stream's
		// steady state: 2 s of warm-up, then 2 s between the readings.
		time.Sleep(2 * time.Second)
		c0, _ = halfDuplex(t, r, "h1:eth0")
		time.Sleep(2 * time.Second)
		c1, _ = halfDuplex(t, r, "h1:eth0")
		udp = <-res
		if udp.err != nil {
			t.Fatal(udp.err)
		}
		return udp.Stolen, len(udp.Received)
	})
	got, want := steady(t, udp.Received, 2), ceiling(100e6, 1472, 28)
	t.Logf("UDP 1472 through a hub: %.2f Mbit/s (median of %v), ceiling %.2f, %d collisions in the steady state", got/1e6, mbps(udp.Received), want/1e6, c1-c0)
	if !within(got, want, 0.01) {
		t.Errorf("UDP through a hub: %.2f Mbit/s, want %.2f ± 1%%", got/1e6, want/1e6)
	}
	if c1 != c0 {
		t.Errorf("%d collisions with a single sender in steady state", c1-c0)
	}
}

// TCP through a hub collides with its own ACKs: the data sender and the
// receiver's ACKs both wait for the end of each frame, start together and
// collide. Goodput falls below the switched 94.15 Mbit/s; the reference
// (ethernet.md §11) expects 86-92 Mbit/s.
func TestHubTCP(t *testing.T) {
	requireRoot(t, "iperf3")
	r := up(t, hubLab)
	r.exec("h1", "ping", "-c", "1", "-W", "2", "10.0.0.2")
	c0, _ := halfDuplex(t, r, "h2:eth0")
	tcp := r.runIperf("h1", "h2", "10.0.0.2", 5201, 8)
	c1, x1 := halfDuplex(t, r, "h2:eth0")
	got := steady(t, tcp.Received, 2)
	switched := ceiling(100e6, 1448, 52)
	t.Logf("TCP through a hub: %.2f Mbit/s (median of %v) against %.2f switched; %d collisions at the receiver's port, %d ACKs dropped after 16 attempts",
		got/1e6, mbps(tcp.Received), switched/1e6, c1-c0, x1)
	if c1 == c0 {
		t.Error("no collisions between data and ACKs")
	}
	if got > switched*0.99 || got < 75e6 {
		t.Errorf("TCP through a hub: %.2f Mbit/s, want below the switched %.2f but not collapsed (reference: 86-92)", got/1e6, switched/1e6)
	}
}

// Three hosts streaming UDP into a hub at once: the medium runs near
// capacity, collisions are counted and some frames are dropped after 16
// attempts (excessive collisions), a loss no switch shows. The aggregate is
// read from the receiver's port counter over the emulator's own uptime, in
// steady state: three saturating senders also starve the control
// connections a tool's own report depends on.
func TestHubThreeSenders(t *testing.T) {
	requireRoot(t)
	r := up(t, hubLab)
	r.perfServer("h4")
	senders := []string{"h1", "h2", "h3"}
	for _, h := range senders { // addresses resolved before the medium is busy
		r.exec(h, "ping", "-c", "1", "-W", "2", "10.0.0.4")
	}
	for _, h := range senders {
		r.start(h, atmlab, "perf", "client", "-H", "10.0.0.4", "-t", "UDP_STREAM", "-m", "1472", "-l", "12")
	}
	sample := func() (rxBytes uint64, uptime time.Duration) {
		st := r.stats()
		for _, p := range st.Ports {
			if p.Port == "h4:eth0" {
				return p.RxBytes, st.Loop.Uptime
			}
		}
		t.Fatal("no h4:eth0 in stats")
		return 0, 0
	}
	// The rate is read over a window of steady state: 3 s of warm-up, then
	// 4 s between the samples.
	time.Sleep(3 * time.Second)
	b0, u0 := sample()
	time.Sleep(4 * time.Second)
	b1, u1 := sample()
	// Frames of 1514 bytes carry 1472 bytes of UDP payload.
	got := float64(b1-b0) * 8 * 1472 / 1514 / (u1 - u0).Seconds()
	var coll, excessive uint64
	for _, h := range []string{"h1", "h2", "h3"} {
		c, x := halfDuplex(t, r, h+":eth0")
		coll, excessive = coll+c, excessive+x
	}
	t.Logf("three UDP senders into a hub: %.2f Mbit/s of payload received over %v; %d collisions, %d excessive-collision drops",
		got/1e6, (u1 - u0).Round(time.Millisecond), coll, excessive)
	if got < 93e6 || got > 96e6 {
		t.Errorf("aggregate %.2f Mbit/s, want 93-96", got/1e6)
	}
	if coll == 0 || excessive == 0 {
		t.Errorf("collisions %d, excessive %d: want both counted", coll, excessive)
	}
}

// taskIILab is the praktikum's Task II: a1 reaches the switch through a hub
// (its switch port half duplex), a2 and a3 are switched.
const taskIILab = `
name: NAME
topology:
  nodes:
    a1: {kind: host, ipv4: 10.0.0.1/24, sysctls: {net.ipv4.tcp_congestion_control: cubic}}
    a2: {kind: host, ipv4: 10.0.0.2/24, sysctls: {net.ipv4.tcp_congestion_control: cubic}}
    a3: {kind: host, ipv4: 10.0.0.3/24, sysctls: {net.ipv4.tcp_congestion_control: cubic}}
    hub1: {kind: hub}
    sw1: {kind: switch}
  links:
    - {endpoints: ["a1:eth0", "hub1:p1"], ethernet: {rate: 100M}}
    - {endpoints: ["hub1:p2", "sw1:p1"], ethernet: {rate: 100M}}
    - {endpoints: ["a2:eth0", "sw1:p2"], ethernet: {rate: 100M}}
    - {endpoints: ["a3:eth0", "sw1:p3"], ethernet: {rate: 100M}}
`

// The Task II shape with atmlab's own netperf tests: TCP through the hub
// loses to collisions with its ACKs and falls clearly below the switched
// pair; a one-way UDP stream has nothing to collide with and runs at line
// rate on both paths (as ethernet.md §11 predicts, unlike the praktikum's
// hardware figure). TCP_RR is logged only: the hub costs it about 2 µs of
// collision window per transaction (TestBuildHub pins that exactly), far
// less than RR rates vary between runs on two shared cores.
func TestHubTaskII(t *testing.T) {
	longOnly(t, "TestHubTCP shows TCP through a hub colliding with its ACKs and falling below the switched ceiling, TestHubOneSender one UDP sender through a hub at the 100M ceiling within 1 % (TestPerfAgainstIperf3 the switched pair at the same ceiling), and TestSeedPraktikum runs Task II's hub and switched paths in the praktikum lab")
	requireRoot(t)
	r := up(t, taskIILab)
	r.perfServer("a3")
	perfOf := func(from, test string) perf.Result {
		res, err := r.perfJSON(from, "-H", "10.0.0.3", "-t", test, "-l", "5")
		if err != nil {
			t.Fatalf("%s from %s: %v", test, from, err)
		}
		return res
	}
	hubTCP, swTCP := perfOf("a1", perf.TCPStream), perfOf("a2", perf.TCPStream)
	// UDP: the median of three runs per path, taken in turn, so that a
	// stall of two shared cores in one run (a CI run once read the switched
	// pair 1.8 % low) neither decides nor hides.
	var hubRuns, swRuns []float64
	for range 3 {
		hubRuns = append(hubRuns, perfOf("a1", perf.UDPStream).ThroughputBps)
		swRuns = append(swRuns, perfOf("a2", perf.UDPStream).ThroughputBps)
	}
	hubUDP, swUDP := median(t, hubRuns), median(t, swRuns)
	hubRR, swRR := perfOf("a1", perf.TCPRR), perfOf("a2", perf.TCPRR)
	t.Logf("through the hub vs switched: TCP_STREAM %.2f vs %.2f Mbit/s; UDP_STREAM %.2f vs %.2f Mbit/s (medians of %v and %v); TCP_RR %.0f vs %.0f transactions/s",
		hubTCP.ThroughputBps/1e6, swTCP.ThroughputBps/1e6, hubUDP/1e6, swUDP/1e6, mbps(hubRuns), mbps(swRuns), hubRR.TransactionsPerSec, swRR.TransactionsPerSec)
	if hubTCP.ThroughputBps > 0.97*swTCP.ThroughputBps {
		t.Errorf("TCP_STREAM through the hub %.2f Mbit/s, want clearly below the switched %.2f", hubTCP.ThroughputBps/1e6, swTCP.ThroughputBps/1e6)
	}
	if !within(hubUDP, swUDP, 0.01) {
		t.Errorf("UDP_STREAM through the hub %.2f Mbit/s vs switched %.2f: a one-way stream should see no collisions", hubUDP/1e6, swUDP/1e6)
	}
}

// The praktikum's Task II shape as the study measured it: its hub path was also
// its Windows NT host (the curves are labelled A1NT2A4L). With a1 given the
// praktikum lab's NT cost (30 µs + 66 ns an octet a frame), UDP_STREAM and
// TCP_RR through the hub fall below the switched pair. The two paths are
// measured in turn, four rounds, and judged by their medians, so that the
// swings of two shared cores between runs hit both alike.
func TestHubTaskIINT(t *testing.T) {
	longOnly(t, "TestSeedPraktikum runs the amsel1-nt variant's UDP_STREAM through the hub against the switched pair, and devices' TestBuildHub pins the transaction's collision window")
	requireRoot(t)
	r := up(t, strings.Replace(taskIILab, "a1: {kind: host, ipv4: 10.0.0.1/24,", "a1: {kind: host, ipv4: 10.0.0.1/24, cpu: {per_packet: 30us, rate: 121M},", 1))
	r.perfServer("a3")
	perfOf := func(from string, args ...string) perf.Result {
		res, err := r.perfJSON(from, append([]string{"-H", "10.0.0.3", "-l", "1.5"}, args...)...)
		if err != nil {
			t.Fatalf("%v from %s: %v", args, from, err)
		}
		return res
	}
	var udpHub, udpSw, rrHub, rrSw []float64
	for range 4 {
		udpHub = append(udpHub, perfOf("a1", "-t", "UDP_STREAM", "-m", "512").ThroughputBps)
		udpSw = append(udpSw, perfOf("a2", "-t", "UDP_STREAM", "-m", "512").ThroughputBps)
		rrHub = append(rrHub, perfOf("a1", "-t", "TCP_RR").TransactionsPerSec)
		rrSw = append(rrSw, perfOf("a2", "-t", "TCP_RR").TransactionsPerSec)
	}
	med := func(v []float64) float64 { slices.Sort(v); return (v[1] + v[2]) / 2 }
	uh, us, rh, rs := med(udpHub), med(udpSw), med(rrHub), med(rrSw)
	t.Logf("a1 as NT via the hub vs a2 switched: UDP_STREAM 512 B %.1f vs %.1f Mbit/s (%+.0f %%); TCP_RR %.0f vs %.0f/s (%+.0f %%)",
		uh/1e6, us/1e6, 100*(uh-us)/us, rh, rs, 100*(rh-rs)/rs)
	if !(uh < 0.85*us) {
		t.Errorf("UDP_STREAM via the hub %.1f Mbit/s, want clearly below the switched %.1f", uh/1e6, us/1e6)
	}
	// The NT cost adds 69 µs to a transaction in model time; measured it
	// adds 40-55 µs (ping: +41..56 µs), since on the direct path the loop
	// wakes late more often: -13 to -22 % in rate.
	if !(rh < 0.95*rs) {
		t.Errorf("TCP_RR via the hub %.0f/s, want clearly below the switched %.0f/s", rh, rs)
	}
}
