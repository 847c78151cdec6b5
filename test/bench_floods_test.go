//go:build integration

package test

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/atmlab/atmlab/kernel"
)

// TestBenchTwoFloods prints `make bench`'s rows for 1 GbE UDP both ways at
// once (iperf3 UDP 1472 at 957 Mbit/s from each host through a 1G
// switch), with iperf3's default socket buffers and with -w 4M: what
// atmlab carries each way, beside the ceiling and beside the bare relay
// (test/relay, a thread a direction sleeping in read) whose hosts sit
// behind the same token bucket, measured just before in the same run:
// the most a forwarder between TAP hosts carries on this machine as it
// is loaded now. Each atmlab row gives the ceiling, the loop's release
// lateness, the frames it held back at its model's bound and dropped
// rather than hand over later than its release bound, the hosts' TAP
// drops, the emulator's CPU, how often the loop raised its thread's
// priority short of CPU (kernel.Loop.ShortNice), a flag (floodFlag) and the load average. It
// asserts nothing and runs only with ATMLAB_BENCH=1.
func TestBenchTwoFloods(t *testing.T) {
	if os.Getenv("ATMLAB_BENCH") == "" {
		t.Skip("benchmark: run with ATMLAB_BENCH=1 (make bench)")
	}
	requireRoot(t, "iperf3")
	ceil := ceiling(1e9, 1472, 28)
	flood := []string{"-u", "-b", "957M", "-l", "1472"}
	fmt.Println("| 1G UDP 1472 both ways at 957M | h1 to h2 | h2 to h1 | bare relay (of the ceiling) | ceiling | loop | flag | load average |")
	fmt.Println("|---|---|---|---|---|---|---|---|")
	for _, buf := range []struct {
		name string
		args []string
	}{{"iperf3's buffers", flood}, {"-w 4M", append(slices.Clone(flood), "-w", "4M")}} {
		relay := relayPushedBothWays(t, true, buf.args...)
		g := up(t, strings.ReplaceAll(pairLab, "RATE", "1G"))
		g.exec("h1", "ping", "-c", "1", "10.0.0.2")
		before, load0, t0 := g.stats(), loadAverage(), time.Now()
		ab, ba := g.bothWays(5301, 6, buf.args...)
		after, load1, took := g.stats(), loadAverage(), time.Since(t0)
		g.stop()
		var got [2]float64
		for i, it := range []iperf{ab, ba} {
			if it.err != nil {
				t.Fatal(it.err)
			}
			got[i] = floodRate(t, it, 6)
		}
		l := after.Loop
		dropped := l.LateDropped - before.Loop.LateDropped
		fmt.Printf("| %s | %.1f Mbit/s, %.3f | %.1f Mbit/s, %.3f | %.3f, %.3f | %.2f Mbit/s | lateness p50 %v p99 %v max %v; held back %d, dropped late %d; TAP drops %d; CPU %.0f%%; priority raised %d times | %s | %s, %s |\n",
			buf.name, got[0]/1e6, got[0]/ceil, got[1]/1e6, got[1]/ceil, relay[0]/ceil, relay[1]/ceil, ceil/1e6,
			l.Lateness.P50, l.Lateness.P99, l.Lateness.Max, l.LateHeld-before.Loop.LateHeld, dropped,
			after.HostDrops()-before.HostDrops(), 100*float64(l.CPUTime-before.Loop.CPUTime)/float64(took), l.PriorityRaised-before.Loop.PriorityRaised,
			floodFlag(got, relay, ceil, l.Lateness.P99, dropped), load0, load1)
	}
	fmt.Printf("ceiling %.2f Mbit/s each way\n", ceil/1e6)
}

// floodFlag is the row's verdict: "ceiling" when each direction carried
// 0.9 of it; else "short" and, for each direction, whether the bare relay
// beside it carried no more (the machine's limit, "relay-limited") or more
// ("short of the relay"); and the emulator's own flags: release lateness
// p99 above the release bound, frames dropped late.
func floodFlag(got, relay [2]float64, ceil float64, p99 time.Duration, dropped uint64) string {
	var f []string
	if got[0] >= 0.9*ceil && got[1] >= 0.9*ceil {
		f = append(f, "ceiling")
	} else {
		for i, way := range []string{"h1 to h2", "h2 to h1"} {
			if got[i] >= 0.9*min(relay[i], ceil) {
				f = append(f, way+" relay-limited")
			} else {
				f = append(f, way+" short of the relay")
			}
		}
	}
	if p99 > kernel.DefaultReleaseBound {
		f = append(f, fmt.Sprintf("lateness p99 above %v", kernel.DefaultReleaseBound))
	}
	if dropped > 0 {
		f = append(f, "emulator_lateness: dropped late")
	}
	return strings.Join(f, "; ")
}

// floodRate is what a UDP 1472 flood of secs seconds delivered: the
// median of its seconds after the first two, or, when the receiver's
// per-second reports did not come back whole (its host short of CPU),
// its datagrams received over the whole run.
func floodRate(t *testing.T, it iperf, secs int) float64 {
	if len(it.Received) > 2 {
		return steady(t, it.Received, 2)
	}
	t.Logf("%d per-second reports: the rate is the whole run's", len(it.Received))
	return float64(it.Packets-it.Lost) * 1472 * 8 / float64(secs)
}

// loadAverage is the machine's 1-minute load average, as /proc/loadavg
// gives it.
func loadAverage() string {
	b, _ := os.ReadFile("/proc/loadavg")
	return strings.Fields(string(b) + " ?")[0]
}
