package control

import (
	"testing"
	"time"

	"github.com/atmlab/atmlab/netstat"
)

const ms = time.Millisecond

// During says the collections and the stalls between two stats, the
// longest three first, and how many of them the loop no longer kept.
func TestLoopStatsDuring(t *testing.T) {
	a := LoopStats{Uptime: 10 * time.Second, GCCycles: 3, StallCount: 5, Stalls: []netstat.Stall{{At: 9 * time.Second, Len: 80 * ms}}}
	stall := func(at time.Duration, l time.Duration) netstat.Stall {
		return netstat.Stall{At: at, Len: l, Window: l + 5*ms, Ran: 5 * ms, Waited: l, Switches: 2}
	}
	b := a
	b.Uptime = 16 * time.Second
	if got, want := b.During(a), "0 GCs, 0 KiB allocated, no stall over 1ms"; got != want {
		t.Errorf("none: %q, want %q", got, want)
	}
	b.GCCycles, b.StallCount, b.Allocated = 4, 9, 300<<10
	b.Stalls = append(b.Stalls, stall(12*time.Second, 2*ms), stall(12500*ms, 40300*ms/1000), stall(13*time.Second, 3*ms), stall(16*time.Second, 9*ms))
	want := "1 GCs, 300 KiB allocated, 4 stalls over 1ms (3 kept), longest 40.3 ms at 12.500 s: another thread held its CPU (of 45.3 ms: ran 5.0 ms, waited for a CPU 40.3 ms, off 0.0 ms; 2 switches, 0 GCs, steal 0.0 ms); " +
		"3.0 ms at 13.000 s: another thread held its CPU (of 8.0 ms: ran 5.0 ms, waited for a CPU 3.0 ms, off 0.0 ms; 2 switches, 0 GCs, steal 0.0 ms); " +
		"2.0 ms at 12.000 s: another thread held its CPU (of 7.0 ms: ran 5.0 ms, waited for a CPU 2.0 ms, off 0.0 ms; 2 switches, 0 GCs, steal 0.0 ms)"
	if got := b.During(a); got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	b.StallCount = 6
	b.Stalls = b.Stalls[:2]
	if got, want := b.During(a), "1 GCs, 300 KiB allocated, 1 stall over 1ms, longest 2.0 ms at 12.000 s: another thread held its CPU (of 7.0 ms: ran 5.0 ms, waited for a CPU 2.0 ms, off 0.0 ms; 2 switches, 0 GCs, steal 0.0 ms)"; got != want {
		t.Errorf("one: %q, want %q", got, want)
	}
}
