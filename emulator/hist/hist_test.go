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
