package netstat

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
