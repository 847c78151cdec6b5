//go:build integration

package test

import (
	"strings"
	"testing"
)

// TCP through a 1G switch with super-frames (TSO on
// the hosts' TAPs, cut into wire frames at the NIC model), TCP reaches its
// ceiling of 941.48 Mbit/s within 1 % one way; the hosts' token buckets,
// billing super-frames as their segments, pace the senders, so nothing is
// dropped and nothing is retransmitted, also with both directions at once.
// Both ways the machine, not the model, sets the rate (twice the frames on
// two cores: 914-932 Mbit/s each measured, the goal is 2 %): CI holds it
// to 5 %, the 2 % figure is make bench's row.
func TestGSOGigabit(t *testing.T) {
	requireRoot(t, "iperf3")
	r := up(t, strings.ReplaceAll(pairLab, "RATE", "1G"))
	r.exec("h1", "ping", "-c", "1", "-W", "2", "10.0.0.2")
	want := ceiling(1e9, 1448, 52)

	one := r.runIperf("h1", "h2", "10.0.0.2", 5201, 6)
	st := r.stats()
	got := steady(t, one.Received, 2)
	t.Logf("TCP one way: %.2f Mbit/s (median of %v), ceiling %.2f, %d retransmits; %d super-frames (%.1f segments each), emulator CPU %.0f%%; release lateness p99 %v max %v, %d dropped late",
		got/1e6, mbps(one.Received), want/1e6, one.Retransmit, st.Loop.SuperFrames,
		float64(st.Loop.SuperSegments)/float64(max(st.Loop.SuperFrames, 1)), 100*st.Loop.CPU, st.Loop.Lateness.P99, st.Loop.Lateness.Max, st.Loop.LateDropped)
	if !within(got, want, 0.01) {
		t.Errorf("TCP one way: %.2f Mbit/s, want %.2f ± 1%%", got/1e6, want/1e6)
	}
	if st.Loop.SuperFrames == 0 || st.Loop.GSOErrors != 0 {
		t.Errorf("%d super-frames read, %d refused: the hosts' TSO is not in use", st.Loop.SuperFrames, st.Loop.GSOErrors)
	}

	ab, ba := r.bothWays(5202, 6)
	both := r.stats()
	for _, d := range []struct {
		name string
		it   iperf
	}{{"h1 to h2", ab}, {"h2 to h1", ba}} {
		if d.it.err != nil {
			t.Fatal(d.it.err)
		}
		got := steady(t, d.it.Received, 2)
		t.Logf("both ways, %s: %.2f Mbit/s (median of %v), %d retransmits; release lateness max %v, %d dropped late in all", d.name, got/1e6, mbps(d.it.Received), d.it.Retransmit, both.Loop.Lateness.Max, both.Loop.LateDropped)
		if !within(got, want, 0.05) {
			t.Errorf("both ways, %s: %.2f Mbit/s, want %.2f ± 5%%", d.name, got/1e6, want/1e6)
		}
		if d.it.Retransmit != 0 {
			t.Errorf("both ways, %s: %d retransmissions, want none (pushback paces the sender); release lateness max %v, %d TAP write errors", d.name, d.it.Retransmit, both.Loop.Lateness.Max, both.Loop.WriteErrors)
		}
	}
	if one.Retransmit != 0 {
		t.Errorf("TCP one way: %d retransmissions, want none", one.Retransmit)
	}
	for _, h := range []string{"h1", "h2"} {
		if d := tapDrops(t, r, h); d != 0 {
			t.Errorf("%s's TAP or qdisc dropped %d frames", h, d)
		}
	}
	after := r.stats()
	for _, p := range []string{"h1:eth0", "h2:eth0", "sw1:p1", "sw1:p2"} {
		if d := port(t, after, p).Drops; d != 0 {
			t.Errorf("%d drops at %s", d, p)
		}
	}
}
