package hist

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

func TestBucketEdges(t *testing.T) {
	for v := uint64(0); v < 1<<20; v++ {
		b := bucket(v)
		if lo := lowest(b); lo > v || (b+1 < len(Histogram{}.counts) && lowest(b+1) <= v) {
			t.Fatalf("value %d in bucket %d with range [%d, %d)", v, b, lo, lowest(b+1))
		}
	}
}

func TestQuantilesWithinResolution(t *testing.T) {
	var h Histogram
	r := rand.New(rand.NewPCG(1, 2))
	var vals []time.Duration
	for range 100000 {
		v := time.Duration(r.ExpFloat64() * 50000)
		vals = append(vals, v)
		h.Record(v)
	}
	slices.Sort(vals)
	for _, q := range []float64{0.5, 0.9, 0.99} {
		exact := vals[int(q*float64(len(vals)-1))]
		got := h.Quantile(q)
		if d := float64(got-exact) / float64(exact); d > 0.001 || d < -1.0/32-0.001 {
			t.Errorf("Quantile(%v) = %v, exact %v (%.2f%%)", q, got, exact, 100*d)
		}
	}
	if h.Max() != vals[len(vals)-1] || h.Min() != vals[0] || h.Count() != 100000 {
		t.Errorf("max/min/count = %v/%v/%d", h.Max(), h.Min(), h.Count())
	}
}

func TestEmptyAndSmall(t *testing.T) {
	var h Histogram
	if h.Quantile(0.5) != 0 || h.Mean() != 0 {
		t.Fatal("empty histogram should report zeros")
	}
	for _, v := range []time.Duration{3, 1, 2, -5} {
		h.Record(v)
	}
	if s := h.Summary(); s.P50 != 1 || s.Max != 3 || s.Count != 4 || h.Min() != 0 {
		t.Fatalf("Summary() = %+v", s)
	}
}

// Since digests only what came after the copy: a stall before it does not
// show in the later part's quantiles or max, and one after it does.
func TestSince(t *testing.T) {
	var h Histogram
	for range 1000 {
		h.Record(2 * time.Microsecond)
	}
	h.Record(300 * time.Millisecond) // a stall before the copy
	old := h
	for i := range 1000 {
		h.Record(time.Duration(10+i%10) * time.Microsecond)
	}
	d := h.Since(&old)
	us := time.Microsecond
	// near: a bucket's lower edge, at most 1/32 below the value.
	near := func(got, want time.Duration) bool { return got <= want && got >= want-want/32 }
	if s := d.Summary(); s.Count != 1000 || !near(s.P50, 14*us) || !near(s.Max, 19*us+us/2) || !near(d.Min(), 10*us) || s.Mean != 14500*time.Nanosecond {
		t.Errorf("after the stall: %+v, min %v; want 1000 of 10-19 µs, p50 14, max 19-20, min 10, mean 14.5", s, d.Min())
	}
	old = h
	h.Record(5 * time.Microsecond)
	h.Record(time.Second) // a stall in the part: its max is exact
	d = h.Since(&old)
	if s := d.Summary(); s.Count != 2 || s.Max != time.Second || !near(s.P50, 5*us) {
		t.Errorf("with a stall: %+v; want 2, p50 5 µs, max 1 s", s)
	}
	d = h.Since(&h)
	if s := d.Summary(); s != (Summary{}) {
		t.Errorf("nothing since: %+v", s)
	}
	var empty Histogram
	if d := h.Since(&empty); d.Summary() != h.Summary() || d.Min() != h.Min() {
		t.Errorf("since an empty copy: %+v, want the whole %+v", d.Summary(), h.Summary())
	}
}
