package emulator

import (
	"math"
	"testing"
	"time"

	"github.com/atmlab/atmlab/emulator/sched"
	"github.com/atmlab/atmlab/emulator/units"
)

// A host that copies at 77 Mbit/s (104 ns per octet) sends at that rate
// through a faster link, one frame at a time; a slow receiver with a queue
// of 4 overruns under a burst and counts it.
func TestHostCPU(t *testing.T) {
	s := sched.New()
	cc := ChannelConfig{Rate: 155 * units.Mbps, QueueFrames: 64}
	a := &HostPort{Name: "a"}
	b := &HostPort{Name: "b"}
	Connect(s, a, b, cc, cc)
	a.CPU = NewFrameCPU(s, 0, 77*units.Mbps, 0)
	var arrivals []time.Duration
	b.Sink = func(*Frame) { arrivals = append(arrivals, s.Now()) }
	sent := 0
	fill := func() {
		for sent < 200 && a.CanAccept() {
			a.Input(&Frame{Data: make([]byte, 1500)})
			sent++
		}
	}
	a.SetOnSpace(fill)
	fill()
	s.Run()
	if len(arrivals) != 200 {
		t.Fatalf("%d of 200 arrived", len(arrivals))
	}
	rate := float64(199*1500*8) / (arrivals[199] - arrivals[0]).Seconds()
	if math.Abs(rate/1e6-77) > 0.001 {
		t.Errorf("a slow host sends at %.4f Mbit/s, want 77", rate/1e6)
	}

	c := &HostPort{Name: "c", CPU: NewFrameCPU(s, 100*time.Microsecond, 0, 4)}
	got := 0
	c.Sink = func(*Frame) { got++ }
	for range 10 {
		c.Receive(&Frame{Data: make([]byte, 100)})
	}
	s.Run()
	if got != 4 || c.Stats().HostOverruns != 6 {
		t.Errorf("a burst of 10 into a queue of 4: %d delivered, %d overruns", got, c.Stats().HostOverruns)
	}
}

// A frame that waited in the TAP while the real-time loop ran late is
// worked on from when it was ready (Born), so a slow host keeps its rate.
func TestHostCPUFromReady(t *testing.T) {
	for _, tc := range []struct {
		born, want time.Duration
	}{
		{0, 1100*time.Microsecond + 11936*time.Nanosecond},                      // not said: from now (1 ms)
		{950 * time.Microsecond, 1050*time.Microsecond + 11936*time.Nanosecond}, // ready 50 µs before it was read
	} {
		s := sched.New()
		cc := ChannelConfig{Rate: units.Gbps, QueueFrames: 64}
		a, b := &HostPort{Name: "a"}, &HostPort{Name: "b"}
		Connect(s, a, b, cc, cc)
		a.CPU = NewFrameCPU(s, 100*time.Microsecond, 0, 0)
		var at time.Duration
		b.Sink = func(*Frame) { at = s.Now() }
		s.At(time.Millisecond, func() { a.Input(&Frame{Data: make([]byte, 1480), Born: tc.born}) })
		s.Run()
		if at != tc.want { // 1480 octets, FCS and preamble at 1G: 11.936 µs
			t.Errorf("born %v: arrived at %v, want %v", tc.born, at, tc.want)
		}
	}
}
