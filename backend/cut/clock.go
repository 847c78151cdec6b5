package cut

import (
	"fmt"
	"slices"
	"time"
)

// Sample is one clock exchange with a peer, NTP's four times: T1 the ping
// sent and T4 its pong read, on this instance's model clock; T2 the ping
// read and T3 the pong sent, on the peer's.
type Sample struct{ T1, T2, T3, T4 time.Duration }

// RTT is the exchange's round trip, less the time the peer held it.
func (s Sample) RTT() time.Duration { return (s.T4 - s.T1) - (s.T3 - s.T2) }

// Offset is the peer's model clock minus this one's, assuming the two
// ways took as long.
func (s Sample) Offset() time.Duration { return ((s.T2 - s.T1) + (s.T3 - s.T4)) / 2 }

// Window is how many of the latest exchanges an estimate reads.
const Window = 64

// Clock keeps a peer's latest exchanges (at most Window of them).
type Clock struct{ samples []Sample }

// Add records an exchange, forgetting the oldest beyond Window.
func (c *Clock) Add(s Sample) {
	if len(c.samples) == Window {
		c.samples = append(c.samples[:0], c.samples[1:]...)
	}
	c.samples = append(c.samples, s)
}

// Estimate is what the exchanges say about a peer.
type Estimate struct {
	Samples int
	// Offset is the peer's model clock minus this one's, from the
	// exchange with the shortest round trip (the least skewed by queues,
	// as NTP's clock filter takes it).
	Offset time.Duration
	// Latency is the one-way latency: half the median round trip.
	Latency time.Duration
	// Jitter is the mean distance of the one-way latencies (half each
	// round trip) from Latency.
	Jitter                    time.Duration
	RTTMin, RTTMedian, RTTMax time.Duration
}

// Estimate reads the exchanges kept; the zero Estimate if there are none.
func (c *Clock) Estimate() Estimate {
	n := len(c.samples)
	if n == 0 {
		return Estimate{}
	}
	rtts := make([]time.Duration, n)
	best := 0
	for i, s := range c.samples {
		rtts[i] = s.RTT()
		if rtts[i] < rtts[best] {
			best = i
		}
	}
	e := Estimate{Samples: n, Offset: c.samples[best].Offset()}
	slices.Sort(rtts)
	e.RTTMin, e.RTTMax = rtts[0], rtts[n-1]
	e.RTTMedian = rtts[n/2]
	if n%2 == 0 {
		e.RTTMedian = (rtts[n/2-1] + rtts[n/2]) / 2
	}
	e.Latency = e.RTTMedian / 2
	var dev time.Duration
	for _, r := range rtts {
		d := r/2 - e.Latency
		dev += max(d, -d)
	}
	e.Jitter = dev / time.Duration(n)
	return e
}

// Refuse says why a cut of the given delay cannot run over a path the
// estimate describes: its frames would arrive after they are due. It is
// nil when delay >= latency + jitter.
func Refuse(link, peer string, delay time.Duration, e Estimate) error {
	if delay >= e.Latency+e.Jitter {
		return nil
	}
	return fmt.Errorf("cut %s to part %s: its delay %v is below the measured one-way latency %v + jitter %v = %v between the instances (%d exchanges, round trip min %v median %v max %v); frames would arrive after they are due: lengthen the link or place the parts closer",
		link, peer, delay, e.Latency, e.Jitter, e.Latency+e.Jitter, e.Samples, e.RTTMin, e.RTTMedian, e.RTTMax)
}
