package emulator

import (
	"bytes"
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
	var pool Pool
	var burst []*Frame
	for range 10 {
		f := pool.Get(100)
		burst = append(burst, f)
		c.Receive(f)
	}
	s.Run()
	if got != 4 || c.Stats().HostOverruns != 6 {
		t.Errorf("a burst of 10 into a queue of 4: %d delivered, %d overruns", got, c.Stats().HostOverruns)
	}
	// Each overrun went back to its pool at once, and the next frame of
	// the burst was read into it: five frames in all.
	distinct := map[*Frame]bool{}
	for _, f := range burst {
		distinct[f] = true
	}
	if len(distinct) != 5 || burst[9] != burst[4] {
		t.Errorf("a burst of 10 with 6 overruns took %d frames from its pool, want 5 (the refused one reused)", len(distinct))
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

// A super-frame's segments depart at exactly the instants the same frames
// handed over one at a time do (model time must not change with
// offloads), through a small ring that makes them wait, with and without a
// CPU-limited host, whether the NIC takes its segments (InputSegments) or
// the frame whole as a train (InputSuper); and the 1G wire times are exact: segment k of 1514
// octets arrives at (k+1) x 1538 byte times less the 12-octet gap.
func TestSuperFrameDepartures(t *testing.T) {
	super := buildFrame(t, false, true, 1, 1, tcpFlags{psh: true}, payloadOf(45*1448))
	small := buildFrame(t, false, true, 2, 1, tcpFlags{}, payloadOf(10))
	h := VNetHdr{GSOType: GSOTCPv4, GSOSize: 1448}
	var batches [][][]byte
	tap := [][]byte{super, small, super}
	for _, f := range tap {
		segs, err := Segment(nil, f, h)
		if err != nil {
			t.Fatal(err)
		}
		batches = append(batches, segs)
	}
	type arrival struct {
		at   time.Duration
		data []byte
	}
	run := func(cpu bool, together, train bool) []arrival {
		s := sched.New()
		cc := ChannelConfig{Rate: units.Gbps, QueueFrames: 4}
		a, b := &HostPort{Name: "a"}, &HostPort{Name: "b"}
		Connect(s, a, b, cc, cc)
		if cpu {
			a.CPU = NewFrameCPU(s, 2*time.Microsecond, 2*units.Gbps, 0)
		}
		var got []arrival
		b.Sink = func(f *Frame) { got = append(got, arrival{s.Now(), f.Data}) }
		bi, si := 0, 0
		fill := func() {
			for bi < len(batches) && a.CanAccept() {
				if train {
					sp, err := PlanSuper(tap[bi], h)
					if err != nil {
						t.Fatal(err)
					}
					a.InputSuper(&Frame{Data: tap[bi], GSO: sp})
					bi++
					continue
				}
				if together {
					var fs []*Frame
					for _, d := range batches[bi] {
						fs = append(fs, &Frame{Data: d})
					}
					a.InputSegments(fs)
					bi++
					continue
				}
				a.Input(&Frame{Data: batches[bi][si]})
				if si++; si == len(batches[bi]) {
					bi, si = bi+1, 0
				}
			}
		}
		a.SetOnSpace(fill)
		fill()
		s.Run()
		return got
	}
	for _, cpu := range []bool{false, true} {
		one, super, train := run(cpu, false, false), run(cpu, true, false), run(cpu, false, true)
		if len(one) != 91 || len(super) != 91 || len(train) != 91 {
			t.Fatalf("cpu %v: %d, %d and %d frames arrived, want 91", cpu, len(one), len(super), len(train))
		}
		for i := range one {
			if one[i].at != super[i].at || !bytes.Equal(one[i].data, super[i].data) {
				t.Fatalf("cpu %v: frame %d at %v (%d octets) one by one, %v (%d) as a super-frame",
					cpu, i, one[i].at, len(one[i].data), super[i].at, len(super[i].data))
			}
			if one[i].at != train[i].at || !bytes.Equal(one[i].data, train[i].data) {
				t.Fatalf("cpu %v: frame %d at %v (%d octets) one by one, %v (%d) as a train",
					cpu, i, one[i].at, len(one[i].data), train[i].at, len(train[i].data))
			}
		}
		if cpu {
			continue
		}
		for _, k := range []int{0, 1, 44} {
			if want := time.Duration(k+1)*12304*time.Nanosecond - 96; super[k].at != want {
				t.Errorf("segment %d arrived at %v, want %v", k, super[k].at, want)
			}
		}
		// The small frame (76 octets, 100 on the wire) follows the 45th segment.
		if want := 45*12304*time.Nanosecond + 800 - 96; super[45].at != want {
			t.Errorf("the small frame arrived at %v, want %v", super[45].at, want)
		}
	}
}
