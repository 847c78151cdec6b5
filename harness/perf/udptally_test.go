package perf

import (
	"testing"
	"time"
)

func TestUDPTally(t *testing.T) {
	var u UDPTally
	// 0, 2, 1 (late), 2 again (a duplicate), 70 (a second word of the bitset).
	for _, d := range []struct {
		seq     uint64
		transit time.Duration
		want    bool
	}{{0, 100, true}, {2, 116, true}, {1, 100, true}, {2, 500, false}, {70, 100, true}} {
		if got := u.Add(d.seq, d.transit); got != d.want {
			t.Errorf("Add(%d) = %v, want %v", d.seq, got, d.want)
		}
	}
	if u.Duplicates != 1 || u.Reordered != 1 {
		t.Errorf("duplicates %d, reordered %d; want 1, 1", u.Duplicates, u.Reordered)
	}
	// RFC 3550: J += (|D| - J)/16 over the transits 100, 116, 100, 100
	// (the duplicate does not count): 1, then 1.9375, then 1.81640625.
	if j := u.JitterNs(); j != 1.81640625 {
		t.Errorf("jitter %v ns, want 1.81640625", j)
	}
}
