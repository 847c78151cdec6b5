// Package hist is a log-linear histogram of durations, in the manner of HDR
// histograms: 32 sub-buckets per power of two, so any quantile it reports is
// within about 3 % of the true value, in constant memory.
package hist

import (
	"math/bits"
	"time"
)

const subBits = 5 // 32 sub-buckets per octave

// Histogram records non-negative durations. The zero value is ready to use.
// It is not safe for concurrent use.
type Histogram struct {
	counts [64 << subBits]uint64
	n      uint64
	sum    time.Duration
	min    time.Duration
	max    time.Duration
}

func bucket(v uint64) int {
	if v < 1<<subBits {
		return int(v)
	}
	exp := bits.Len64(v) - subBits // ≥ 1
	return exp<<subBits | int(v>>(exp-1))&(1<<subBits-1)
}

// lowest returns the smallest value that falls in bucket b.
func lowest(b int) uint64 {
	exp, sub := b>>subBits, uint64(b&(1<<subBits-1))
	if exp == 0 {
		return sub
	}
	return (1<<subBits | sub) << (exp - 1)
}

// Record adds one observation; negative durations count as zero.
func (h *Histogram) Record(d time.Duration) {
	d = max(d, 0)
	h.counts[bucket(uint64(d))]++
	if h.n == 0 || d < h.min {
		h.min = d
	}
	h.max = max(h.max, d)
	h.n++
	h.sum += d
}

// Count returns the number of observations.
func (h *Histogram) Count() uint64 { return h.n }

// Max returns the largest observation.
func (h *Histogram) Max() time.Duration { return h.max }

// Min returns the smallest observation.
func (h *Histogram) Min() time.Duration { return h.min }

// Mean returns the mean observation.
func (h *Histogram) Mean() time.Duration {
	if h.n == 0 {
		return 0
	}
	return h.sum / time.Duration(h.n)
}

// Quantile returns the value below which a fraction q of observations lie
// (the lower edge of that bucket, clamped to the observed range).
func (h *Histogram) Quantile(q float64) time.Duration {
	if h.n == 0 {
		return 0
	}
	rank := uint64(q*float64(h.n-1)) + 1
	var seen uint64
	for b, c := range h.counts {
		seen += c
		if seen >= rank {
			return min(max(time.Duration(lowest(b)), h.min), h.max)
		}
	}
	return h.max
}

// Since returns the observations h gained after old, an earlier copy of
// it: the release lateness of one measurement out of a lab's whole run.
// Its quantiles are as exact as h's; its max (min) is exact when it is
// h's own, otherwise its highest bucket's upper (lowest's lower) edge,
// within 3 %.
func (h *Histogram) Since(old *Histogram) Histogram {
	var d Histogram
	if h.n <= old.n {
		return d
	}
	d.n, d.sum = h.n-old.n, h.sum-old.sum
	lo, hi := -1, 0
	for b := range h.counts {
		if d.counts[b] = h.counts[b] - old.counts[b]; d.counts[b] > 0 {
			if lo < 0 {
				lo = b
			}
			hi = b
		}
	}
	d.max, d.min = h.max, h.min
	if old.n > 0 && h.max == old.max && hi+1 < len(h.counts) {
		d.max = min(time.Duration(lowest(hi+1)-1), h.max)
	}
	if old.n > 0 && h.min == old.min {
		d.min = max(time.Duration(lowest(lo)), h.min)
	}
	return d
}

// Summary is a histogram's digest, as reports show it.
type Summary struct {
	Count uint64        `json:"count"`
	Mean  time.Duration `json:"mean_ns"`
	P50   time.Duration `json:"p50_ns"`
	P90   time.Duration `json:"p90_ns"`
	P99   time.Duration `json:"p99_ns"`
	Max   time.Duration `json:"max_ns"`
}

// Summary digests the histogram.
func (h *Histogram) Summary() Summary {
	return Summary{Count: h.n, Mean: h.Mean(), P50: h.Quantile(0.5), P90: h.Quantile(0.9), P99: h.Quantile(0.99), Max: h.max}
}
