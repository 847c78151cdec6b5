package cut

import (
	"strings"
	"testing"
	"time"
)

// exchange is one ping over a path with the given one-way times to and
// from a peer whose clock reads offset more than ours, sent at t1 and
// held hold by the peer.
func exchange(t1, offset, there, back, hold time.Duration) Sample {
	t2 := t1 + there + offset
	t3 := t2 + hold
	return Sample{T1: t1, T2: t2, T3: t3, T4: t3 - offset + back}
}

func TestSampleOffsetAndRoundTrip(t *testing.T) {
	s := exchange(time.Second, 5*time.Millisecond, 40*time.Microsecond, 40*time.Microsecond, 3*time.Microsecond)
	if s.RTT() != 80*time.Microsecond || s.Offset() != 5*time.Millisecond {
		t.Fatalf("rtt %v offset %v, want 80µs and 5ms", s.RTT(), s.Offset())
	}
	// Asymmetry shows as half its difference in the offset, as in NTP.
	s = exchange(time.Second, 5*time.Millisecond, 60*time.Microsecond, 20*time.Microsecond, 0)
	if s.RTT() != 80*time.Microsecond || s.Offset() != 5*time.Millisecond+20*time.Microsecond {
		t.Fatalf("rtt %v offset %v, want 80µs and 5.02ms", s.RTT(), s.Offset())
	}
}

// The estimate takes the offset of the shortest exchange, half the median
// round trip as latency and the mean deviation as jitter, over the latest
// Window exchanges.
func TestClockEstimateFromExchanges(t *testing.T) {
	var c Clock
	offset := -3 * time.Millisecond
	// Round trips 100, 120, ..., 280 µs, the shortest skewed least.
	for i := range 10 {
		way := time.Duration(50+10*i) * time.Microsecond
		skew := time.Duration(i) * time.Microsecond // the way back longer by 2i
		c.Add(exchange(time.Duration(i)*time.Millisecond, offset, way-skew, way+skew, 2*time.Microsecond))
	}
	e := c.Estimate()
	want := Estimate{Samples: 10, Offset: offset, Latency: 95 * time.Microsecond, Jitter: 25 * time.Microsecond,
		RTTMin: 100 * time.Microsecond, RTTMedian: 190 * time.Microsecond, RTTMax: 280 * time.Microsecond}
	if e != want {
		t.Fatalf("estimate\n got %+v\nwant %+v", e, want)
	}
	for i := range Window {
		c.Add(exchange(time.Second+time.Duration(i)*time.Millisecond, offset+time.Millisecond, 30*time.Microsecond, 30*time.Microsecond, 0))
	}
	e = c.Estimate()
	if e.Samples != Window || e.Offset != offset+time.Millisecond || e.Latency != 30*time.Microsecond || e.Jitter != 0 {
		t.Fatalf("after %d more exchanges the old ones still count: %+v", Window, e)
	}
}

func TestRefuseCutShorterThanLatencyPlusJitter(t *testing.T) {
	e := Estimate{Samples: 32, Latency: 60 * time.Microsecond, Jitter: 15 * time.Microsecond, RTTMin: 100 * time.Microsecond, RTTMedian: 120 * time.Microsecond, RTTMax: 400 * time.Microsecond}
	if err := Refuse("s1:p9-s2:p9", "right", 75*time.Microsecond, e); err != nil {
		t.Fatalf("a delay of exactly latency + jitter refused: %v", err)
	}
	err := Refuse("s1:p9-s2:p9", "right", 74*time.Microsecond, e)
	if err == nil {
		t.Fatal("a delay below latency + jitter was not refused")
	}
	for _, fig := range []string{"s1:p9-s2:p9", "part right", "74µs", "60µs", "15µs", "75µs", "32 exchanges", "min 100µs", "median 120µs", "max 400µs"} {
		if !strings.Contains(err.Error(), fig) {
			t.Errorf("refusal lacks %q: %v", fig, err)
		}
	}
}
