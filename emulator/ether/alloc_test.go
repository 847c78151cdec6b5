package ether

import (
	"testing"
	"time"

	"github.com/atmlab/atmlab/emulator"
	"github.com/atmlab/atmlab/emulator/internal/allocs"
	"github.com/atmlab/atmlab/emulator/units"
)

// A frame from a pool crosses channel, switch and channel to a host whose
// sink releases it, as the kernel's TAP writer does: after the first, no
// frame allocates anything, the pool's frame is reused every time.
func TestFrameAllocations(t *testing.T) {
	s, _, h := lab(2, units.Gbps, DefaultBuffer)
	h[1].Input(ethFrame(0, broadcast, mac(2), 60)) // learn h2
	s.Run()
	var pool emulator.Pool
	var got int
	var last *emulator.Frame
	h[1].Sink = func(f *emulator.Frame) {
		if !f.Pooled() {
			t.Fatal("the frame reached the host no longer pooled")
		}
		got++
		last = f
		f.Release()
	}
	send := func() {
		h[0].Input(pooledFrame(&pool, mac(2), mac(1), 1514))
		s.Run()
	}
	for range warmup {
		send()
	} // see warmup
	first := last
	const runs = 1000
	if n := allocs.Count(runs, send); n != 0 {
		t.Errorf("%v allocations in %d frames through channel, switch and channel to a host: want 0", n, runs)
	}
	if got != 2*allocs.Tries*runs+warmup || last != first {
		t.Errorf("%d frames delivered, the last %p: want %d, all the pool's one frame %p", got, last, 2*allocs.Tries*runs+warmup, first)
	}
}

// Bursts of three frames from a pool go from a slow host through a
// software switch to a slow host, each with a CPU model (gns3-mpls's
// costs: 59.4 µs a frame a host, 75.4 µs the switch), so that frames
// wait for each CPU: a CPU's job is reused, not allocated, and no frame
// allocates anything, sent, switched or received.
func TestCPUAllocations(t *testing.T) {
	s, sw, h := lab(2, units.Gbps, DefaultBuffer)
	sw.CPU = emulator.NewFrameCPU(s, 75400*time.Nanosecond, 0, 0)
	for _, st := range h {
		st.CPU = emulator.NewFrameCPU(s, 59400*time.Nanosecond, 0, 0)
	}
	h[1].Input(ethFrame(0, broadcast, mac(2), 60)) // learn h2
	s.Run()
	var pool emulator.Pool
	var got, pooled int
	h[1].Sink = func(f *emulator.Frame) {
		got++
		if f.Pooled() {
			pooled++
		}
		f.Release()
	}
	const burst = 3
	send := func() {
		for range burst {
			h[0].Input(pooledFrame(&pool, mac(2), mac(1), 1514))
		}
		s.Run()
	}
	for range warmup {
		send()
	}
	const runs = 300
	if n := allocs.Count(runs, send); n != 0 {
		t.Errorf("%v allocations in %d bursts of %d frames through two hosts' CPUs and a switch's: want 0", n, runs, burst)
	}
	want := burst * (2*allocs.Tries*runs + warmup)
	if got != want || pooled != want || sw.CPU.Overruns != 0 || h[1].CPU.Overruns != 0 {
		t.Errorf("%d frames delivered, %d pooled, %d and %d overruns: want %d, all, none", got, pooled, sw.CPU.Overruns, h[1].CPU.Overruns, want)
	}
}

// A TCP super-frame from a pool crosses a two-port switch as a train and
// is handed to the receiving host whole (SetSinkTrain), which releases it
// when its last segment is written: no allocation per super-frame.
func TestSuperFrameAllocations(t *testing.T) {
	s, _, h := lab(2, 10*units.Gbps, 1<<20)
	h[1].Input(ethFrame(0, broadcast, mac(2), 60)) // learn h2
	s.Run()
	src := superFrame(2, 1, 1, 44*1448, 1448)
	var pool emulator.Pool
	var segs, calls int
	h[1].SetSinkTrain(s, 100*time.Microsecond, func(f *emulator.Frame, first, n int) {
		calls++
		segs += n
		if first+n == f.GSO.Segs {
			f.Release()
		}
	})
	send := func() {
		f := pool.Get(len(src.data))
		copy(f.Data, src.data)
		sp, err := emulator.PlanSuper(f.Data, src.gso)
		if err != nil {
			t.Fatal(err)
		}
		f.GSO = sp
		h[0].InputSuper(f)
		s.Run()
	}
	for range warmup {
		send()
	}
	const runs = 200
	if n := allocs.Count(runs, send); n != 0 {
		t.Errorf("%v allocations in %d super-frames of 44 segments through a switch: want 0", n, runs)
	}
	if want := (2*allocs.Tries*runs + warmup) * 44; segs != want || calls != 2*allocs.Tries*runs+warmup {
		t.Errorf("the host was handed %d segments in %d writes: want %d in %d (one a super-frame)", segs, calls, want, 2*allocs.Tries*runs+warmup)
	}
}

// A switch that floods a pooled frame shares it: a host that releases
// its copy does not let the pool hand out a buffer another port still
// holds.
func TestFloodShares(t *testing.T) {
	s, _, h := lab(3, units.Gbps, DefaultBuffer)
	var pool emulator.Pool
	var got [][]byte
	for _, st := range h[1:] {
		st.Sink = func(f *emulator.Frame) {
			got = append(got, append([]byte(nil), f.Data...))
			f.Release()
			g := pool.Get(1514) // what the loop's next read does
			for i := range g.Data {
				g.Data[i] = 0xEE
			}
		}
	}
	f := pool.Get(1514)
	for i := range f.Data {
		f.Data[i] = byte(i)
	}
	copy(f.Data, broadcast)
	copy(f.Data[6:], mac(1))
	want := append([]byte(nil), f.Data...)
	h[0].Input(f)
	s.Run()
	if len(got) != 2 {
		t.Fatalf("%d hosts got the flooded frame, want 2", len(got))
	}
	for i, d := range got {
		if string(d) != string(want) {
			t.Errorf("host %d got the flooded frame's bytes changed", i+2)
		}
	}
	if f.Pooled() {
		t.Error("a flooded frame is still pooled")
	}
}

// warmup frames grow the rings and the pool before the count.
const warmup = 1000
