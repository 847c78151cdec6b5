//go:build integration

package test

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/atmlab/atmlab/control"
)

// TestBenchSuper prints the rows of the benchmark table that super-frames
// decide, side by side in one run: TCP through an unpaced switch
// hop beside a veth pair, TCP at 10G and at 1G both ways against the
// ceiling, with the emulator's CPU and the wire frames per super-frame;
// and UDP 1472 at 1G and over OC-12c, which super-frames do not help
// (iperf3 sends no UDP GSO).
// With ATMLAB_PROFILE=DIR the 10G lab writes DIR/10g.prof
// (atmlab up --cpuprofile). It asserts nothing and runs only with
// ATMLAB_BENCH=1.
func TestBenchSuper(t *testing.T) {
	if os.Getenv("ATMLAB_BENCH") == "" {
		t.Skip("benchmark: run with ATMLAB_BENCH=1")
	}
	requireRoot(t, "iperf3")
	var rows [][]string
	row := func(cells ...string) { rows = append(rows, cells) }

	veth := vethPair(t)
	r := up(t, strings.ReplaceAll(pairLab, "RATE", "100G"))
	r.exec("h1", "ping", "-c", "1", "10.0.0.2")
	before := r.stats().Loop
	emuTCP := steady(t, r.runIperf("h1", "h2", "10.0.0.2", 5202, 5).Received, 1)
	st := r.stats().Loop
	vethTCP := steady(t, veth.runIperf("h1", "h2", "10.9.0.2", 5202, 5).Received, 1)
	row("forwarding, TCP, unpaced", fmt.Sprintf("%.0f Mbit/s", emuTCP/1e6), fmt.Sprintf("veth %.0f Mbit/s", vethTCP/1e6), fmt.Sprintf("%.2f", emuTCP/vethTCP))
	row("  emulator (unpaced TCP run)", fmt.Sprintf("CPU %.0f%%", 100*cpuBetween(before, st)), superSegs(before, st), "")
	r.stop()

	var prof []string
	if dir := os.Getenv("ATMLAB_PROFILE"); dir != "" {
		prof = []string{"--cpuprofile", dir + "/10g.prof"}
	}
	for _, rate := range []struct {
		name string
		bps  float64
	}{{"10G", 10e9}, {"1G", 1e9}} {
		var args []string
		if rate.name == "10G" {
			args = prof
		}
		r := up(t, strings.ReplaceAll(pairLab, "RATE", rate.name), args...)
		r.exec("h1", "ping", "-c", "1", "10.0.0.2")
		c := ceiling(rate.bps, 1448, 52)
		before := r.stats().Loop
		tcp := steady(t, r.runIperf("h1", "h2", "10.0.0.2", 5202, 6).Received, 2)
		st := r.stats().Loop
		row("TCP at "+rate.name, fmt.Sprintf("%.2f Mbit/s", tcp/1e6), fmt.Sprintf("theory %.2f", c/1e6), fmt.Sprintf("%.4f", tcp/c))
		row("  emulator (TCP at "+rate.name+")", fmt.Sprintf("CPU %.0f%%; lateness p50 %v, p99 %v", 100*cpuBetween(before, st), st.Lateness.P50, st.Lateness.P99), superSegs(before, st), "")
		ab, ba := r.bothWays(5203, 6)
		if ab.err != nil || ba.err != nil {
			t.Fatal(ab.err, ba.err)
		}
		x, y := steady(t, ab.Received, 2), steady(t, ba.Received, 2)
		row("TCP at "+rate.name+", both ways at once", fmt.Sprintf("%.2f and %.2f Mbit/s", x/1e6, y/1e6), fmt.Sprintf("theory %.2f each", c/1e6),
			fmt.Sprintf("%.4f, %.4f", x/c, y/c))
		r.stop()
	}
	r = up(t, strings.ReplaceAll(pairLab, "RATE", "1G"))
	r.exec("h1", "ping", "-c", "1", "10.0.0.2")
	before = r.stats().Loop
	udp := steady(t, r.runIperf("h1", "h2", "10.0.0.2", 5201, 6, "-u", "-b", "1500M", "-l", "1472").Received, 2)
	st = r.stats().Loop
	u := ceiling(1e9, 1472, 28)
	row("UDP 1472 at 1G", fmt.Sprintf("%.2f Mbit/s", udp/1e6), fmt.Sprintf("theory %.2f", u/1e6), fmt.Sprintf("%.4f", udp/u))
	row("  emulator (UDP at 1G)", fmt.Sprintf("CPU %.0f%%; lateness p50 %v, p99 %v", 100*cpuBetween(before, st), st.Lateness.P50, st.Lateness.P99), "", "")
	r.stop()

	r = up(t, strings.ReplaceAll(strings.ReplaceAll(atmSwitchLab, "phy: oc3", "phy: oc12"), "CLR", "0%"))
	r.exec("h1", "ping", "-c", "1", "10.0.0.2")
	before = r.stats().Loop
	udp = steady(t, r.runIperf("h1", "h2", "10.0.0.2", 5201, 6, "-u", "-b", "2G", "-l", "1472").Received, 2)
	st = r.stats().Loop
	u = oc(t, "oc12", 1472, "udp")
	row("ATM oc12 via atm-switch, UDP 1472", fmt.Sprintf("%.2f Mbit/s", udp/1e6), fmt.Sprintf("theory %.2f", u/1e6), fmt.Sprintf("%.4f", udp/u))
	row("  emulator (UDP at OC-12c)", fmt.Sprintf("CPU %.0f%%; lateness p50 %v, p99 %v", 100*cpuBetween(before, st), st.Lateness.P50, st.Lateness.P99), "", "")
	r.stop()
	printTable(rows)
}

// superSegs says how many wire frames the super-frames read between two
// stats readings averaged.
func superSegs(a, b control.LoopStats) string {
	return fmt.Sprintf("%.1f wire frames a super-frame", float64(b.SuperSegments-a.SuperSegments)/float64(max(b.SuperFrames-a.SuperFrames, 1)))
}
