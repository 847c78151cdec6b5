//go:build integration

package test

import (
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/atmlab/atmlab/emulator"
	"github.com/atmlab/atmlab/emulator/atm"
)

// TestBenchLoop prints the real-time loop's rows of `make bench`: the
// emulator's added latency over a plain veth pair (ping, TCP_RR, UDP_RR,
// TCP_RR over a delay), unpaced 64-byte frames and TCP, OC-3c UDP at 200 and
// 293 B three times each, and 1 GbE UDP one way and both ways, each beside
// its counterpart measured in the same run. It asserts
// nothing and runs only with ATMLAB_BENCH=1.
func TestBenchLoop(t *testing.T) {
	if os.Getenv("ATMLAB_BENCH") == "" {
		t.Skip("benchmark: run with ATMLAB_BENCH=1 (make bench)")
	}
	requireRoot(t, "iperf3", "ping")
	var rows [][]string
	row := func(cells ...string) { rows = append(rows, cells) }
	// hop is the model's time for a frame of n octets to cross one 100M
	// hop: its last bit, FCS and preamble included (the gap trails it).
	hop := func(n int) time.Duration {
		total, gap := emulator.Ethernet{}.WireBytes(n)
		return time.Duration(total-gap) * 80 * time.Nanosecond
	}

	veth := vethPair(t)
	sw := up(t, strings.ReplaceAll(pairLab, "RATE", "100M"))
	sw.exec("h1", "ping", "-c", "1", "10.0.0.2")
	veth.exec("h1", "ping", "-c", "1", "10.9.0.2")

	// ping: 56-byte data, 98-byte frames, four hops a round trip.
	vp, ep := pingRTT(t, veth, "10.9.0.2"), pingRTT(t, sw, "10.0.0.2")
	model := 4 * hop(98)
	row("added RTT, ping through a 100M switch (median of 200)", fmt.Sprintf("%.1f µs", us(ep)),
		fmt.Sprintf("veth %.1f µs + model %.1f µs", us(vp), us(model)), fmt.Sprintf("%+.1f µs", us(ep-vp-model)))

	// TCP_RR 1 byte: 67-byte frames (TCP timestamps), four hops a transaction.
	for _, r := range []*running{veth, sw} {
		r.start("h2", atmlab, "perf", "server")
	}
	time.Sleep(300 * time.Millisecond)
	rrTest := func(r *running, addr, test string) float64 {
		res, err := r.perfJSON("h1", "-H", addr, "-t", test, "-l", "5", "-i", "1s")
		if err != nil {
			t.Fatal(err)
		}
		var v []float64
		for _, iv := range res.Intervals[min(1, len(res.Intervals)):] {
			v = append(v, iv.TransactionsPerSec)
		}
		return median(t, v)
	}
	rr := func(r *running, addr string) float64 { return rrTest(r, addr, "TCP_RR") }
	vr, er := rr(veth, "10.9.0.2"), rr(sw, "10.0.0.2")
	scaled := 1 / (1/vr + (4 * hop(67)).Seconds())
	row("TCP_RR 1 B through a 100M switch", fmt.Sprintf("%.0f transactions/s", er),
		fmt.Sprintf("veth %.0f/s, scaled by the model %.0f/s", vr, scaled), fmt.Sprintf("%.3f", er/scaled))
	// UDP_RR 1 byte: 43-byte frames padded to the 64-byte minimum.
	vu, eu := rrTest(veth, "10.9.0.2", "UDP_RR"), rrTest(sw, "10.0.0.2", "UDP_RR")
	scaled = 1 / (1/vu + (4 * hop(60)).Seconds())
	row("UDP_RR 1 B through a 100M switch", fmt.Sprintf("%.0f transactions/s", eu),
		fmt.Sprintf("veth %.0f/s, scaled by the model %.0f/s", vu, scaled), fmt.Sprintf("%.3f", eu/scaled))
	st := sw.stats().Loop
	row("release lateness, 100M switch (ping and RR)", fmt.Sprintf("p50 %v, p99 %v", st.Lateness.P50, st.Lateness.P99), fmt.Sprintf("emulator CPU %.0f%%", 100*st.CPU), "")
	sw.stop()

	// TCP_RR over delay: 5ms on h1's link; the path's added time is its
	// transaction time minus the zero-delay lab's, measured just above.
	d := up(t, strings.Replace(strings.ReplaceAll(pairLab, "RATE", "100M"), `      ethernet: {rate: 100M}`, `      ethernet: {rate: 100M}
      impair: {delay: 5ms}`, 1))
	d.start("h2", atmlab, "perf", "server")
	time.Sleep(300 * time.Millisecond)
	dr := rr(d, "10.0.0.2")
	added := 1/dr - 1/er
	row("TCP_RR 1 B over delay 5ms: added time a transaction", fmt.Sprintf("%.3f ms", added*1e3), "model 10.000 ms (the delay twice; serialization is in both)", fmt.Sprintf("%.4f", added/10e-3))
	d.stop()

	// Unpaced 64-byte frames (18-byte UDP payload), one hop at 100G.
	u := up(t, strings.ReplaceAll(pairLab, "RATE", "100G"))
	u.exec("h1", "ping", "-c", "1", "10.0.0.2")
	e := steady(t, u.runIperf("h1", "h2", "10.0.0.2", 5201, 5, "-u", "-b", "0", "-l", "18").PPS, 1)
	before := u.stats().Loop
	v := steady(t, veth.runIperf("h1", "h2", "10.9.0.2", 5201, 5, "-u", "-b", "0", "-l", "18").PPS, 1)
	_ = before
	row("forwarding 64-byte frames, unpaced", fmt.Sprintf("%.0f kframes/s", e/1e3), fmt.Sprintf("veth %.0f kframes/s", v/1e3), fmt.Sprintf("%.2f", e/v))
	et := steady(t, u.runIperf("h1", "h2", "10.0.0.2", 5202, 5).Received, 1)
	vt := steady(t, veth.runIperf("h1", "h2", "10.9.0.2", 5202, 5).Received, 1)
	row("forwarding TCP, unpaced", fmt.Sprintf("%.0f Mbit/s", et/1e6), fmt.Sprintf("veth %.0f Mbit/s", vt/1e6), fmt.Sprintf("%.2f", et/vt))
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
		row(fmt.Sprintf("OC-3c UDP %d B, three runs (of the cell ceiling)", size), strings.Join(got, ", "),
			fmt.Sprintf("ceiling %.2f Mbit/s", c/1e6), fmt.Sprintf("spread %.2f %%", 100*(hi-lo)))
	}
	st = a.stats().Loop
	row("release lateness, OC-3c UDP 200-293 B", fmt.Sprintf("p50 %v, p99 %v", st.Lateness.P50, st.Lateness.P99), fmt.Sprintf("emulator CPU %.0f%%", 100*st.CPU), "")
	a.stop()

	// 1 GbE UDP 1472 B: one way, then both ways at once.
	g := up(t, strings.ReplaceAll(pairLab, "RATE", "1G"))
	g.exec("h1", "ping", "-c", "1", "10.0.0.2")
	ceil := ceiling(1e9, 1472, 28)
	one := steady(t, g.runIperf("h1", "h2", "10.0.0.2", 5201, 6, "-u", "-b", "1500M", "-l", "1472").Received, 2)
	row("1G UDP 1472, one way", fmt.Sprintf("%.2f Mbit/s", one/1e6), fmt.Sprintf("theory %.2f", ceil/1e6), fmt.Sprintf("%.4f", one/ceil))
	var wg sync.WaitGroup
	var both [2]iperf
	for i, p := range [][2]string{{"h1", "h2"}, {"h2", "h1"}} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			both[i] = g.runIperfNoFatal(p[0], p[1], "10.0.0."+p[1][1:], 5202+i, 6, "-u", "-b", "1500M", "-l", "1472")
		}()
	}
	wg.Wait()
	for i, dir := range []string{"h1 to h2", "h2 to h1"} {
		if both[i].err != nil {
			t.Fatal(both[i].err)
		}
		b := steady(t, both[i].Received, 2)
		row("1G UDP 1472, both ways: "+dir, fmt.Sprintf("%.2f Mbit/s", b/1e6), fmt.Sprintf("theory %.2f", ceil/1e6), fmt.Sprintf("%.4f", b/ceil))
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

// atmPairLab is two hosts through an atm-switch on OC-3c.
const atmPairLab = `
name: NAME
topology:
  nodes:
    h1: {kind: host, ipv4: 10.0.0.1/24}
    h2: {kind: host, ipv4: 10.0.0.2/24}
    atm1: {kind: atm-switch}
  links:
    - {endpoints: ["h1:eth0", "atm1:p1"], atm: {phy: oc3}}
    - {endpoints: ["h2:eth0", "atm1:p2"], atm: {phy: oc3}}
`

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

func median(t *testing.T, v []float64) float64 {
	t.Helper()
	if len(v) == 0 {
		t.Fatal("no samples")
	}
	v = slices.Clone(v)
	slices.Sort(v)
	return v[len(v)/2]
}

func us(d time.Duration) float64 { return float64(d) / 1e3 }
