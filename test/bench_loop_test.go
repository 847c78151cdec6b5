//go:build integration

package test

import (
	"fmt"
	"math"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/atmlab/atmlab/emulator"
	"github.com/atmlab/atmlab/emulator/atm"
	"github.com/atmlab/atmlab/internal/labtest"
)

// TestBenchLoop prints the real-time loop's rows of `make bench`: the
// emulator's added latency over a plain veth pair (ping, TCP_RR, UDP_RR,
// TCP_RR over a delay), unpaced 64-byte frames and TCP, OC-3c UDP at 200 and
// 293 B three times each, and 1 GbE UDP one way (with iperf3's socket
// buffers and with -w 4M) and both ways, each beside its counterpart
// measured in the same run. The latency, unpaced and both-ways rows also
// give the floor of the architecture: the same measurements through a bare
// TAP-to-TAP relay (test/relay), which no emulator with TAP hosts can beat
// on the same machine. It asserts nothing and runs only with
// ATMLAB_BENCH=1.
func TestBenchLoop(t *testing.T) {
	if os.Getenv("ATMLAB_BENCH") == "" {
		t.Skip("benchmark: run with ATMLAB_BENCH=1 (make bench)")
	}
	requireRoot(t, "iperf3", "ping")
	var rows [][]string
	row := func(cells ...string) { rows = append(rows, cells) }

	// The floor: the same measurements through a bare TAP-to-TAP relay
	// (test/relay), first spinning, then sleeping in read, each alone on
	// the machine.
	var floor [2]floorRun
	for i, block := range []bool{false, true} {
		r, stop := relayPair(t, block)
		r.exec("h1", "ping", "-c", "1", "10.8.0.2")
		floor[i] = measureFloor(t, r)
		stop()
	}
	spin, block := floor[0], floor[1]
	wide4 := []string{"-u", "-b", "957M", "-l", "1472", "-w", "4M"}
	pushed, pushedAsleep := relayPushedBothWays(t, false, wide4...), relayPushedBothWays(t, true, wide4...)
	veth := vethPair(t)
	sw := up(t, strings.ReplaceAll(pairLab, "RATE", "100M"))
	sw.exec("h1", "ping", "-c", "1", "10.0.0.2")
	veth.exec("h1", "ping", "-c", "1", "10.9.0.2")

	// ping: 56-byte data, 98-byte frames, four hops a round trip.
	vp, ep := pingRTT(t, veth, "10.9.0.2"), pingRTT(t, sw, "10.0.0.2")
	model := 4 * hop100M(98)
	row("added RTT, ping through a 100M switch (median of 200)", fmt.Sprintf("%.1f µs", us(ep)),
		fmt.Sprintf("veth %.1f µs, bare relay %.1f µs (sleeping %.1f), + model %.1f µs", us(vp), us(spin.ping), us(block.ping), us(model)),
		fmt.Sprintf("%+.1f µs (relay %+.1f)", us(ep-vp-model), us(spin.ping-vp)))

	// TCP_RR 1 byte: 67-byte frames (TCP timestamps), four hops a
	// transaction; UDP_RR 1 byte: 43-byte frames padded to the 64-byte
	// minimum. Each path's rate is scaled by the model's time on the wire.
	for _, r := range []*running{veth, sw} {
		r.perfServer("h2")
	}
	scale := func(rate float64, frame int) float64 { return 1 / (1/rate + (4 * hop100M(frame)).Seconds()) }
	vr, er := rrRate(t, veth, "10.9.0.2", "TCP_RR"), rrRate(t, sw, "10.0.0.2", "TCP_RR")
	row("TCP_RR 1 B through a 100M switch", fmt.Sprintf("%.0f transactions/s", er),
		fmt.Sprintf("veth %.0f/s, bare relay %.0f/s (sleeping %.0f); scaled by the model %.0f/s and %.0f/s", vr, spin.tcpRR, block.tcpRR, scale(vr, 67), scale(spin.tcpRR, 67)),
		fmt.Sprintf("%.3f (relay %.3f)", er/scale(vr, 67), scale(spin.tcpRR, 67)/scale(vr, 67)))
	vu, eu := rrRate(t, veth, "10.9.0.2", "UDP_RR"), rrRate(t, sw, "10.0.0.2", "UDP_RR")
	row("UDP_RR 1 B through a 100M switch", fmt.Sprintf("%.0f transactions/s", eu),
		fmt.Sprintf("veth %.0f/s, bare relay %.0f/s (sleeping %.0f); scaled by the model %.0f/s and %.0f/s", vu, spin.udpRR, block.udpRR, scale(vu, 60), scale(spin.udpRR, 60)),
		fmt.Sprintf("%.3f (relay %.3f)", eu/scale(vu, 60), scale(spin.udpRR, 60)/scale(vu, 60)))
	st := sw.stats().Loop
	row("release lateness, 100M switch (ping and RR)", fmt.Sprintf("p50 %v, p99 %v", st.Lateness.P50, st.Lateness.P99), fmt.Sprintf("emulator CPU %.0f%%", 100*st.CPU), "")
	sw.stop()

	// TCP_RR over delay: 5ms on h1's link; the path's added time is its
	// transaction time minus the zero-delay lab's, measured just above.
	d := up(t, delayLab)
	d.perfServer("h2")
	dr := rrRate(t, d, "10.0.0.2", "TCP_RR")
	added := 1/dr - 1/er
	row("TCP_RR 1 B over delay 5ms: added time a transaction", fmt.Sprintf("%.3f ms", added*1e3), "model 10.000 ms (the delay twice; serialization is in both)", fmt.Sprintf("%.4f", added/10e-3))
	d.stop()

	// Unpaced 64-byte frames (18-byte UDP payload) and TCP, one hop at 100G.
	u := up(t, strings.ReplaceAll(pairLab, "RATE", "100G"))
	u.exec("h1", "ping", "-c", "1", "10.0.0.2")
	e := steady(t, u.runIperf("h1", "h2", "10.0.0.2", 5201, 5, "-u", "-b", "0", "-l", "18").PPS, 1)
	v := steady(t, veth.runIperf("h1", "h2", "10.9.0.2", 5201, 5, "-u", "-b", "0", "-l", "18").PPS, 1)
	row("forwarding 64-byte frames, unpaced", fmt.Sprintf("%.0f kframes/s", e/1e3),
		fmt.Sprintf("veth %.0f kframes/s, bare relay %.0f (sleeping %.0f)", v/1e3, spin.frames/1e3, block.frames/1e3),
		fmt.Sprintf("%.2f (relay %.2f, %.2f)", e/v, spin.frames/v, block.frames/v))
	et := steady(t, u.runIperf("h1", "h2", "10.0.0.2", 5202, 5).Received, 1)
	vt := steady(t, veth.runIperf("h1", "h2", "10.9.0.2", 5202, 5).Received, 1)
	row("forwarding TCP, unpaced", fmt.Sprintf("%.0f Mbit/s", et/1e6),
		fmt.Sprintf("veth %.0f Mbit/s, bare relay %.0f (sleeping %.0f)", vt/1e6, spin.tcp/1e6, block.tcp/1e6),
		fmt.Sprintf("%.2f (relay %.2f, %.2f)", et/vt, spin.tcp/vt, block.tcp/vt))
	u.stop()

	// OC-3c AAL5 through an atm-switch at 200 and 293 B (5 and 7 cells
	// full), three runs each: how repeatable the small sizes are.
	a := up(t, atmPairLab)
	a.exec("h1", "ping", "-c", "1", "10.0.0.2")
	for _, size := range []int{200, 293} {
		c := oc3(t, atm.AAL5, size, "udp")
		var got []string
		lo, hi := 2.0, 0.0
		for range 3 {
			g, _ := a.udpSteady("h1", "h2", "10.0.0.2", 5201, 5, size)
			lo, hi = min(lo, g/c), max(hi, g/c)
			got = append(got, fmt.Sprintf("%.4f", g/c))
		}
		row(fmt.Sprintf("OC-3c UDP %d B, -w 4M, three runs (of the cell ceiling)", size), strings.Join(got, ", "),
			fmt.Sprintf("ceiling %.2f Mbit/s", c/1e6), fmt.Sprintf("spread %.2f %%", 100*(hi-lo)))
	}
	st = a.stats().Loop
	row("release lateness, OC-3c UDP 200-293 B", fmt.Sprintf("p50 %v, p99 %v", st.Lateness.P50, st.Lateness.P99), fmt.Sprintf("emulator CPU %.0f%%", 100*st.CPU), "")
	a.stop()

	// 1 GbE UDP 1472 B: one way with iperf3's socket buffers and with
	// -w 4M (the receiving socket's 208 KiB, 1.7 ms at 1G, overflows when
	// iperf3 waits for a core), then both ways at once with -w 4M, beside
	// what the bare relay carries both ways at 957M.
	g := up(t, strings.ReplaceAll(pairLab, "RATE", "1G"))
	g.exec("h1", "ping", "-c", "1", "10.0.0.2")
	ceil := ceiling(1e9, 1472, 28)
	udp := []string{"-u", "-b", "1500M", "-l", "1472"}
	one := steady(t, g.runIperf("h1", "h2", "10.0.0.2", 5201, 6, udp...).Received, 2)
	row("1G UDP 1472, one way", fmt.Sprintf("%.2f Mbit/s", one/1e6), fmt.Sprintf("theory %.2f", ceil/1e6), fmt.Sprintf("%.4f", one/ceil))
	wide := append(udp, "-w", "4M")
	one = steady(t, g.runIperf("h1", "h2", "10.0.0.2", 5202, 6, wide...).Received, 2)
	row("1G UDP 1472, one way, -w 4M", fmt.Sprintf("%.2f Mbit/s", one/1e6), fmt.Sprintf("theory %.2f", ceil/1e6), fmt.Sprintf("%.4f", one/ceil))
	ab, ba := g.bothWays(5203, 6, wide...)
	for i, it := range []iperf{ab, ba} {
		if it.err != nil {
			t.Fatal(it.err)
		}
		b := steady(t, it.Received, 2)
		row("1G UDP 1472, both ways, -w 4M: "+[]string{"h1 to h2", "h2 to h1"}[i], fmt.Sprintf("%.2f Mbit/s", b/1e6),
			fmt.Sprintf("theory %.2f; bare relay at 957M %.2f (sleeping %.2f; its hosts behind atmlab's token bucket %.2f, sleeping %.2f)", ceil/1e6, spin.udpBoth[i]/1e6, block.udpBoth[i]/1e6, pushed[i]/1e6, pushedAsleep[i]/1e6),
			fmt.Sprintf("%.4f (relay %.4f, %.4f, %.4f, %.4f)", b/ceil, spin.udpBoth[i]/ceil, block.udpBoth[i]/ceil, pushed[i]/ceil, pushedAsleep[i]/ceil))
	}
	st = g.stats().Loop
	row("release lateness, 1G both ways", fmt.Sprintf("p50 %v, p99 %v", st.Lateness.P50, st.Lateness.P99), fmt.Sprintf("emulator CPU %.0f%%", 100*st.CPU), "")
	g.stop()

	fmt.Println("| measurement | atmlab | side by side | ratio |")
	fmt.Println("|---|---|---|---|")
	for _, r := range rows {
		fmt.Println("| " + strings.Join(r, " | ") + " |")
	}
}

// floorRun is what a path between two hosts carries without a model.
type floorRun struct {
	ping         time.Duration // median RTT
	tcpRR, udpRR float64       // 1-byte transactions/s
	frames, tcp  float64       // unpaced 64-byte frames/s and TCP bits/s
	udpBoth      [2]float64    // UDP 1472 at 957M both ways, -w 4M: bits/s each way
}

// measureFloor takes TestBenchLoop's measurements on r, from h1 to h2.
func measureFloor(t *testing.T, r *running) floorRun {
	addr := r.addr("h2")
	f := floorRun{ping: pingRTT(t, r, addr)}
	r.perfServer("h2")
	f.tcpRR, f.udpRR = rrRate(t, r, addr, "TCP_RR"), rrRate(t, r, addr, "UDP_RR")
	f.frames = steady(t, r.runIperf("h1", "h2", addr, 5201, 5, "-u", "-b", "0", "-l", "18").PPS, 1)
	f.tcp = steady(t, r.runIperf("h1", "h2", addr, 5202, 5).Received, 1)
	ab, ba := r.bothWays(5203, 6, "-u", "-b", "957M", "-l", "1472", "-w", "4M")
	for i, it := range []iperf{ab, ba} {
		if it.err != nil {
			t.Fatal(it.err)
		}
		f.udpBoth[i] = steady(t, it.Received, 2)
	}
	return f
}

// relayPushedBothWays is what the relay, spinning or sleeping in read
// (block), carries both ways with iperf3's args (TestBenchLoop: UDP 1472
// at 957M, -w 4M) when its hosts' TAPs sit behind the token bucket atmlab gives a host on a 1G link
// (kernel's pushback: 2 ms of line rate, the wire's overhead in a size
// table, segmentation off): the cost of pushback itself, apart from the
// emulator's, and of a forwarder that spins rather than sleeps.
func relayPushedBothWays(t *testing.T, block bool, args ...string) [2]float64 {
	r, stop := relayPair(t, block)
	defer stop()
	for _, h := range []string{"h1", "h2"} {
		r.exec(h, "ethtool", "-K", "atmlabr0", "gso", "off", "tso", "off", "gro", "off")
		r.exec(h, "tc", "qdisc", "replace", "dev", "atmlabr0", "root", "stab", "overhead", "24", "mpu", "84",
			"tbf", "rate", "1000000000bit", "burst", "250000", "limit", "1538000")
	}
	r.exec("h1", "ping", "-c", "1", "10.8.0.2")
	ab, ba := r.bothWays(5203, 6, args...)
	var got [2]float64
	for i, it := range []iperf{ab, ba} {
		if it.err != nil {
			t.Fatal(it.err)
		}
		got[i] = floodRate(t, it, 6)
	}
	return got
}

// rrRate is the median of a 5-second RR test's seconds after the first;
// it logs them all. (Over a delay a second holds ~100 transactions, so the
// median moves in steps of 1 %; the mean of them all would let one stall
// decide.)
func rrRate(t *testing.T, r *running, addr, test string) float64 {
	t.Helper()
	res, err := r.perfJSON("h1", "-H", addr, "-t", test, "-l", "5", "-i", "1s")
	if err != nil {
		t.Fatal(err)
	}
	var v []float64
	for _, iv := range res.Intervals[min(1, len(res.Intervals)):] {
		v = append(v, iv.TransactionsPerSec)
	}
	t.Logf("%s to %s: %.1f transactions a second after the first", test, addr, v)
	return median(t, v)
}

// hop100M is the model's time for a frame of n octets to cross one 100M
// hop: its last bit, FCS and preamble included (the gap trails it).
func hop100M(n int) time.Duration {
	total, gap := emulator.Ethernet{}.WireBytes(n)
	return time.Duration(total-gap) * 80 * time.Nanosecond
}

// delayLab is pairLab at 100M with delay: 5ms on h1's link.
var delayLab = strings.Replace(strings.ReplaceAll(pairLab, "RATE", "100M"), `      ethernet: {rate: 100M}`, `      ethernet: {rate: 100M}
      impair: {delay: 5ms}`, 1)

// atmPairLab is two hosts through an atm-switch on OC-3c.
var atmPairLab = labtest.Lab("two-hosts-atm-switch", "NAME")

var pingTime = regexp.MustCompile(`time=([0-9.]+) ms`)

// pingRTT is the median RTT of 200 pings, 5 ms apart.
func pingRTT(t *testing.T, r *running, addr string) time.Duration {
	out := r.exec("h1", "ping", "-c", "200", "-i", "0.005", addr)
	var v []float64
	for _, m := range pingTime.FindAllSubmatch(out, -1) {
		ms, _ := strconv.ParseFloat(string(m[1]), 64)
		v = append(v, ms)
	}
	return time.Duration(median(t, v) * 1e6)
}

// median is the median of v, leaving out the seconds the hypervisor stole
// (NaN, dropStolen).
func median(t *testing.T, v []float64) float64 {
	t.Helper()
	if len(v) == 0 {
		t.Fatal("no samples")
	}
	n := len(v)
	v = slices.DeleteFunc(slices.Clone(v), math.IsNaN)
	if len(v) == 0 {
		notJudged(t, "all %d samples were taken while the hypervisor took more than %.0f %% of the machine's CPU (/proc/stat steal)", n, 100*quietSteal)
	}
	slices.Sort(v)
	return v[len(v)/2]
}

func us(d time.Duration) float64 { return float64(d) / 1e3 }
