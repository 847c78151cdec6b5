//go:build linux

package kernel

import (
	"testing"
	"time"
)

// The emulator's added latency is split by how far apart each host's
// frames were released: a host's first release has no spacing and counts
// only in the whole; pings a second apart land in the sleeping class,
// a stream's frames in the busy one, each with its own lateness.
func TestAddedLatencySplitsReleasesBySpacing(t *testing.T) {
	var a added
	h1, h2 := &tap{}, &tap{}
	ms := time.Millisecond
	// the first to each host, then a stream's frames 100 µs apart to h2
	for i, at := range []time.Duration{0, 0, 100 * time.Microsecond, 200 * time.Microsecond} {
		h := []*tap{h1, h2, h2, h2}[i]
		a.note(h, at)
		a.handed(h, []time.Duration{9 * ms, 9 * ms, 3 * time.Microsecond, 5 * time.Microsecond}[i])
	}
	// pings to h1 a second apart, then 5 ms apart
	for i, at := range []time.Duration{time.Second, 2 * time.Second, 2*time.Second + 5*ms} {
		a.note(h1, at)
		a.handed(h1, []time.Duration{40, 60, 7}[i]*time.Microsecond)
	}
	got := a.stats()
	if len(got) != 3 {
		t.Fatalf("want three classes, got %+v", got)
	}
	for i, w := range []struct {
		from, to      time.Duration
		n             uint64
		max, spacingP time.Duration
	}{
		{0, ms, 2, 5 * time.Microsecond, 100 * time.Microsecond},
		{ms, DefaultIdleSpin, 1, 7 * time.Microsecond, 5 * ms},
		{DefaultIdleSpin, 0, 2, 60 * time.Microsecond, time.Second},
	} {
		g := got[i]
		if g.From != w.from || g.To != w.to || g.Lateness.Count != w.n || g.Lateness.Max != w.max || g.Spacing.Max < w.spacingP || g.Spacing.Max > w.spacingP+w.spacingP/32 {
			t.Errorf("class %d: %+v, want from %v to %v, %d releases, max lateness %v, spacing %v", i, g, w.from, w.to, w.n, w.max, w.spacingP)
		}
	}
	if s := a.spacing; s.Count() != 5 {
		t.Errorf("%d spacings recorded, want 5 (a host's first release has none)", s.Count())
	}
}
