//go:build integration

package test

import (
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/atmlab/atmlab/kernel"
)

// Two hosts through a 1G switch flood each other with UDP at 957 Mbit/s
// at once, with iperf3's default buffers. The loop, short of CPU, ran
// ~100 ms behind its model at the median (its stage held 33 ms of frames
// at 1G and drained at the rate the loop kept up); now frames that would
// enter the model more than its bound (5 ms) late are held back to it,
// and counted. Short of CPU (its stages full), the loop reads a TAP in
// batches and drops what it would hand over more than its release bound
// (5 ms) late. The test prints each direction's share of the ceiling, the
// release lateness and the counts. It asserts what the loop enforces, not
// a rate: release lateness p99 within the bound, and every frame dropped
// late counted at the port it was for (the ports' counts sum to the
// loop's).
func TestLoopLatenessBoundedUnderTwoFloods(t *testing.T) {
	requireRoot(t, "iperf3")
	g := up(t, strings.ReplaceAll(pairLab, "RATE", "1G"))
	g.exec("h1", "ping", "-c", "1", "10.0.0.2")
	before := g.stats()
	ab, ba := g.bothWays(5301, 6, "-u", "-b", "957M", "-l", "1472")
	after := g.stats()
	ceil := ceiling(1e9, 1472, 28)
	for i, it := range []iperf{ab, ba} {
		if it.err != nil {
			t.Fatal(it.err)
		}
		if len(it.Received) <= 2 {
			t.Logf("%s: %d one-second reports", []string{"h1 to h2", "h2 to h1"}[i], len(it.Received))
			continue
		}
		b := steady(t, it.Received, 2)
		t.Logf("%s: %.2f Mbit/s, %.3f of the ceiling", []string{"h1 to h2", "h2 to h1"}[i], b/1e6, b/ceil)
	}
	load, _ := exec.Command("uptime").Output()
	l := after.Loop
	t.Logf("passes that released began late by p50 %v p99 %v max %v", l.Wake.P50, l.Wake.P99, l.Wake.Max)
	t.Logf("release lateness p50 %v p99 %v max %v over %d releases; held back %d; dropped late %d; hosts' TAP drops %d; emulator CPU %.0f%%; %s",
		l.Lateness.P50, l.Lateness.P99, l.Lateness.Max, l.Lateness.Count, l.LateHeld-before.Loop.LateHeld, l.LateDropped-before.Loop.LateDropped,
		after.HostDrops()-before.HostDrops(), 100*l.CPU, strings.TrimSpace(string(load)))
	if l.Wake.P50 > 25*time.Millisecond {
		t.Errorf("passes that released frames began %v late at the median: the model ran far behind the wall clock", l.Wake.P50)
	}
	if l.Lateness.P99 > kernel.DefaultReleaseBound {
		t.Errorf("release lateness p99 %v, want at most the release bound %v", l.Lateness.P99, kernel.DefaultReleaseBound)
	}
	var ports uint64
	late0 := map[string]uint64{}
	for _, p := range before.Ports {
		late0[p.Port] = p.LateDropped
	}
	for _, p := range after.Ports {
		ports += p.LateDropped - late0[p.Port]
	}
	if dropped := l.LateDropped - before.Loop.LateDropped; ports != dropped {
		t.Errorf("the ports count %d frames dropped late, the loop %d", ports, dropped)
	}
}
