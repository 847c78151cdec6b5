//go:build integration

package test

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/atmlab/atmlab/emulator/atm"
)

// TestBenchAB measures the rows a change to the real-time engine is
// judged by for builds of atmlab side by side in one run,
// alternating: ATMLAB_BEFORE names the other build (say, main's:
// `go build -o /tmp/atmlab-main ./cmd/atmlab` in its tree), or several as
// name=path,name=path; the last is this tree's ("after"). Each round
// runs, for each build in turn, TCP at 10G one way and both ways at once,
// UDP 1472 at 1G and UDP 1472 over OC-12c through an atm-switch (each with
// iperf3's socket buffers, then with -w 4M), each the
// median of its per-second intervals after a 2-second warm-up, against
// its ceiling; ATMLAB_ROUNDS rounds (default 2). With
// ATMLAB_PROFILE=DIR the first round's 10G labs write DIR/10g-before.prof
// and DIR/10g-after.prof (one per build's name; atmlab up --cpuprofile). It asserts nothing and
// runs only with ATMLAB_BENCH=1 and ATMLAB_BEFORE set.
func TestBenchAB(t *testing.T) {
	builds, rounds := abBuilds(t, 2, "iperf3")
	var rows [][]string
	for round := range rounds {
		for _, build := range builds {
			atmlab = build.bin
			var prof []string
			if dir := os.Getenv("ATMLAB_PROFILE"); dir != "" && round == 0 {
				prof = []string{"--cpuprofile", dir + "/10g-" + build.name + ".prof"}
			}
			tag := fmt.Sprintf("%d %s", round+1, build.name)

			r := up(t, strings.ReplaceAll(pairLab, "RATE", "10G"), prof...)
			r.exec("h1", "ping", "-c", "1", "10.0.0.2")
			b := r.stats().Loop
			tcp := steady(t, r.runIperf("h1", "h2", "10.0.0.2", 5202, 6).Received, 2)
			st := r.stats().Loop
			c := ceiling(10e9, 1448, 52)
			rows = append(rows, []string{tag, "TCP at 10G", fmt.Sprintf("%.2f Mbit/s", tcp/1e6), fmt.Sprintf("%.4f", tcp/c),
				fmt.Sprintf("CPU %.0f%%; %s", 100*cpuBetween(b, st), superSegs(b, st))})
			ab, ba := r.bothWays(5203, 6)
			if ab.err != nil || ba.err != nil {
				t.Fatal(ab.err, ba.err)
			}
			x, y := steady(t, ab.Received, 2), steady(t, ba.Received, 2)
			rows = append(rows, []string{tag, "TCP at 10G both ways", fmt.Sprintf("%.0f, %.0f Mbit/s", x/1e6, y/1e6), fmt.Sprintf("%.3f, %.3f", x/c, y/c), ""})
			r.stop()

			// UDP with iperf3's socket buffers, then with -w 4M: the
			// receiving socket's default 208 KiB (1.7 ms at 1G) overflows
			// whenever iperf3 waits for a core, which the host's kernel
			// counts and no model decides.
			for _, udp := range []struct {
				what, lab, bw string
				ceiling       float64
			}{
				{"UDP 1472 at 1G", strings.ReplaceAll(pairLab, "RATE", "1G"), "1500M", ceiling(1e9, 1472, 28)},
				{"UDP 1472 over OC-12c", strings.ReplaceAll(strings.ReplaceAll(atmSwitchLab, "phy: oc3", "phy: oc12"), "CLR", "0%"), "2G", oc(t, "oc12", 1472, "udp")},
			} {
				r = up(t, udp.lab)
				r.exec("h1", "ping", "-c", "1", "10.0.0.2")
				for i, buf := range []struct {
					label string
					args  []string
				}{{"", nil}, {", -w 4M", []string{"-w", "4M"}}} {
					b = r.stats().Loop
					got := steady(t, r.runIperf("h1", "h2", "10.0.0.2", 5201+i, 6, append([]string{"-u", "-b", udp.bw, "-l", "1472"}, buf.args...)...).Received, 2)
					st = r.stats().Loop
					rows = append(rows, []string{tag, udp.what + buf.label, fmt.Sprintf("%.2f Mbit/s", got/1e6), fmt.Sprintf("%.4f", got/udp.ceiling),
						fmt.Sprintf("CPU %.0f%%; lateness p50 %v", 100*cpuBetween(b, st), st.Lateness.P50)})
				}
				r.stop()
			}
		}
	}
	for _, r := range rows {
		fmt.Printf("%-10s %-29s %-18s %-8s %s\n", r[0], r[1], r[2], r[3], r[4])
	}
}

// build is a build of atmlab that an A/B benchmark runs: its name in the
// rows, and its binary.
type build struct{ name, bin string }

// abBuilds skips the test unless ATMLAB_BENCH=1 and ATMLAB_BEFORE are
// set, requires root and tools, and returns the builds ATMLAB_BEFORE
// names (path, or name=path,name=path), then this tree's ("after"), and
// ATMLAB_ROUNDS (rounds unless set). The benchmark sets atmlab to each
// build's binary in turn; it is this tree's again when the test ends.
func abBuilds(t *testing.T, rounds int, tools ...string) ([]build, int) {
	before := os.Getenv("ATMLAB_BEFORE")
	if os.Getenv("ATMLAB_BENCH") == "" || before == "" {
		t.Skip("benchmark: run with ATMLAB_BENCH=1 ATMLAB_BEFORE=/path/to/other/atmlab")
	}
	requireRoot(t, tools...)
	if n, err := strconv.Atoi(os.Getenv("ATMLAB_ROUNDS")); err == nil && n > 0 {
		rounds = n
	}
	after := atmlab
	t.Cleanup(func() { atmlab = after })
	var builds []build
	for _, b := range strings.Split(before, ",") {
		name, bin, ok := strings.Cut(b, "=")
		if !ok {
			name, bin = "before", b
		}
		builds = append(builds, build{name, bin})
	}
	return append(builds, build{"after", after}), rounds
}

// TestLatencyAB measures the benchmark rows that depend on how the
// real-time loop waits between events, for builds of atmlab side by side
// in one run, alternating (ATMLAB_BEFORE as for TestBenchAB; the last
// build is this tree's): OC-3c AAL5 UDP at 200 B through an atm-switch
// (events ~17 µs apart, under the loop's spin), the median ping RTT
// through a 100M switch over a veth pair's and the model's, and the time
// `delay: 5ms` adds to a TCP_RR transaction (against the same build's
// zero-delay lab) over the model's 10 ms. ATMLAB_ROUNDS rounds (default
// 2). It asserts nothing and runs only with ATMLAB_BENCH=1 and
// ATMLAB_BEFORE set.
func TestLatencyAB(t *testing.T) {
	builds, rounds := abBuilds(t, 2, "iperf3", "ping")
	veth := vethPair(t)
	veth.exec("h1", "ping", "-c", "1", "10.9.0.2")
	c := oc3(t, atm.AAL5, 200, "udp")
	var rows []string
	for round := range rounds {
		for _, b := range builds {
			atmlab = b.bin
			tag := fmt.Sprintf("%d %-7s", round+1, b.name)

			a := up(t, atmPairLab)
			a.exec("h1", "ping", "-c", "1", "10.0.0.2")
			var got []string
			for i := range 3 {
				g, _ := a.udpSteady("h1", "h2", "10.0.0.2", 5201+i, 6, 200)
				got = append(got, fmt.Sprintf("%.4f", g/c))
			}
			st := a.stats().Loop
			rows = append(rows, fmt.Sprintf("%s OC-3c UDP 200 B     %s of the ceiling  (lateness p50 %v p99 %v, CPU %.0f%%)", tag, strings.Join(got, " "), st.Lateness.P50, st.Lateness.P99, 100*st.CPU))
			a.stop()

			sw := up(t, strings.ReplaceAll(pairLab, "RATE", "100M"))
			sw.exec("h1", "ping", "-c", "1", "10.0.0.2")
			vp, ep := pingRTT(t, veth, "10.9.0.2"), pingRTT(t, sw, "10.0.0.2")
			sw.perfServer("h2")
			er := rrRate(t, sw, "10.0.0.2", "TCP_RR")
			sw.stop()
			d := up(t, delayLab)
			d.perfServer("h2")
			dr := rrRate(t, d, "10.0.0.2", "TCP_RR")
			st = d.stats().Loop
			d.stop()
			rows = append(rows, fmt.Sprintf("%s ping, 100M switch    %+.1f µs over veth %.1f + model  (TCP_RR %.0f/s)", tag, us(ep-vp-4*hop100M(98)), us(vp), er))
			rows = append(rows, fmt.Sprintf("%s TCP_RR, delay 5ms    %.4f of the model's 10 ms  (lateness p50 %v p99 %v)", tag, (1/dr-1/er)/10e-3, st.Lateness.P50, st.Lateness.P99))
		}
	}
	for _, r := range rows {
		fmt.Println(r)
	}
}
