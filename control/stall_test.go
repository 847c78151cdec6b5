package control

import (
	"testing"
	"time"
)

const ms = time.Millisecond

// A stall's cause is the share of its window that explains at least half
// of it.
func TestStallCause(t *testing.T) {
	for _, c := range []struct {
		s    Stall
		want string
	}{
		{Stall{Len: 40 * ms, Window: 45 * ms, Ran: 2 * ms, Waited: 39 * ms, Switches: 2}, "another thread held its CPU"},
		{Stall{Len: 40 * ms, Window: 45 * ms, Ran: 4 * ms, Steal: 40 * ms}, "the hypervisor took its CPU"},
		{Stall{Len: 40 * ms, Window: 45 * ms, Ran: 4 * ms, GCs: 1}, "Go's runtime parked its thread during a garbage collection"},
		{Stall{Len: 40 * ms, Window: 45 * ms, Ran: 4 * ms, Switches: 3}, "its thread slept: parked by Go's runtime, or blocked in the kernel"},
		{Stall{Len: 40 * ms, Window: 45 * ms, Ran: 44 * ms, GCs: 1}, "its thread ran, a garbage collection among it"},
		{Stall{Len: 40 * ms, Window: 45 * ms, Ran: 44 * ms}, "its thread ran: the loop's own work, or Go's runtime on it"},
		{Stall{Len: 40 * ms, Window: 45 * ms, Ran: 15 * ms, Waited: 15 * ms}, "no one cause"},
	} {
		if got := c.s.Cause(); got != c.want {
			t.Errorf("%+v: %q, want %q", c.s, got, c.want)
		}
	}
	if off := (Stall{Window: 5 * ms, Ran: 4 * ms, Waited: 2 * ms}).Off(); off != 0 {
		t.Errorf("Off of a window the counters overfill: %v, want 0", off)
	}
}

// During says the collections and the stalls between two stats, the
// longest three first, and how many of them the loop no longer kept.
func TestLoopStatsDuring(t *testing.T) {
	a := LoopStats{Uptime: 10 * time.Second, GCCycles: 3, StallCount: 5, Stalls: []Stall{{At: 9 * time.Second, Len: 80 * ms}}}
	stall := func(at time.Duration, l time.Duration) Stall {
		return Stall{At: at, Len: l, Window: l + 5*ms, Ran: 5 * ms, Waited: l, Switches: 2}
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
