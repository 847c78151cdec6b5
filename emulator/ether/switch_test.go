package ether

import (
	"testing"
	"time"

	"github.com/atmlab/atmlab/emulator"
	"github.com/atmlab/atmlab/emulator/sched"
	"github.com/atmlab/atmlab/emulator/units"
)

// station is a host NIC that records what it receives.
type station struct {
	*emulator.HostPort
	got []time.Duration
	ids []uint64
}

func newStation(s *sched.Scheduler, name string) *station {
	st := &station{HostPort: &emulator.HostPort{Name: name}}
	st.Sink = func(f *emulator.Frame) { st.got = append(st.got, s.Now()); st.ids = append(st.ids, f.ID) }
	return st
}

func mac(b byte) []byte { return []byte{0x02, 0, 0, 0, 0, b} }

var broadcast = []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}

func ethFrame(id uint64, dst, src []byte, n int) *emulator.Frame {
	d := make([]byte, n)
	copy(d[0:6], dst)
	copy(d[6:12], src)
	return &emulator.Frame{ID: id, Data: d}
}

// pooledFrame is ethFrame's frame in a frame of pool, without its ID;
// past the two addresses its octets are as the pool left them.
func pooledFrame(pool *emulator.Pool, dst, src []byte, n int) *emulator.Frame {
	f := pool.Get(n)
	copy(f.Data, dst)
	copy(f.Data[6:], src)
	return f
}

// lab builds n stations on one switch at rate, each with a 256-frame ring.
func lab(n int, rate units.BitRate, buffer int) (*sched.Scheduler, *Switch, []*station) {
	s := sched.New()
	sw := NewSwitch(s, "sw1")
	var sts []*station
	for i := range n {
		st := newStation(s, "h")
		p := sw.AddPort("p" + string(rune('1'+i)))
		emulator.Connect(s, st.HostPort, p,
			emulator.ChannelConfig{Rate: rate, QueueFrames: 256},
			emulator.ChannelConfig{Rate: rate, QueueBytes: buffer})
		sts = append(sts, st)
	}
	return s, sw, sts
}

func TestSwitchFloodLearnForward(t *testing.T) {
	s, sw, h := lab(3, 100*units.Mbps, DefaultBuffer)
	// h1 broadcasts: flooded to h2 and h3, not back to h1. Store and forward:
	// 122.08 µs to reach the switch, 122.08 µs more to reach each host.
	h[0].Input(ethFrame(1, broadcast, mac(1), 1514))
	s.Run()
	if len(h[0].got) != 0 || len(h[1].got) != 1 || len(h[2].got) != 1 {
		t.Fatalf("broadcast reached h1=%d h2=%d h3=%d frames, want 0 1 1", len(h[0].got), len(h[1].got), len(h[2].got))
	}
	if h[1].got[0] != 244160 || h[2].got[0] != 244160 {
		t.Fatalf("broadcast arrived at %v and %v, want 244.16µs", h[1].got[0], h[2].got[0])
	}
	// h2 answers h1: learned, so only h1 gets it.
	s.At(time.Millisecond, func() { h[1].Input(ethFrame(2, mac(1), mac(2), 60)) })
	s.Run()
	if len(h[0].got) != 1 || len(h[2].got) != 1 {
		t.Fatalf("unicast to a learned address was flooded: h1=%d h3=%d", len(h[0].got), len(h[2].got))
	}
	if want := time.Millisecond + 2*5760; h[0].got[0] != want {
		t.Fatalf("unicast arrived at %v, want %v", h[0].got[0], want)
	}
	// After the ageing time the entry is forgotten and frames flood again.
	sw.Ageing = 10 * time.Second
	s.At(20*time.Second, func() { h[2].Input(ethFrame(3, mac(2), mac(3), 60)) })
	s.Run()
	if len(h[0].got) != 2 || len(h[1].got) != 2 {
		t.Fatalf("after ageing, unicast to h2 reached h1=%d h2=%d, want flooding", len(h[0].got), len(h[1].got))
	}
	if p, ok := sw.Lookup(MAC(mac(3))); !ok || p != sw.Ports()[2] {
		t.Fatal("h3's address was not learned on p3")
	}
}

// A switch drops 802.1D's reserved addresses, frames back to the port
// they came from and runts, and hands each back to its pool.
func TestSwitchFilters(t *testing.T) {
	s, sw, h := lab(2, 100*units.Mbps, DefaultBuffer)
	var pool emulator.Pool
	var sent []*emulator.Frame
	for i, f := range []*emulator.Frame{
		ethFrame(1, []byte{0x01, 0x80, 0xC2, 0, 0, 0x01}, mac(1), 60), // PAUSE
		ethFrame(2, mac(1), mac(1), 60),                               // to itself
		{ID: 3, Data: make([]byte, 10)},                               // runt
	} {
		p := pool.Get(len(f.Data))
		copy(p.Data, f.Data)
		p.ID = uint64(i + 1)
		sent = append(sent, p)
		h[0].Input(p)
		s.Run()
	}
	if len(h[1].got) != 0 || sw.Filtered != 2 || sw.Ports()[0].rxErrors != 1 {
		t.Fatalf("reserved/self frames: h2 got %d, filtered %d, errors %d; want 0, 2 and 1", len(h[1].got), sw.Filtered, sw.Ports()[0].rxErrors)
	}
	// Each went back to the pool before the next was taken from it.
	if sent[1] != sent[0] || sent[2] != sent[0] {
		t.Errorf("three filtered frames took %p, %p and %p from the pool: want one frame, released each time", sent[0], sent[1], sent[2])
	}
}

// Two senders at line rate into one output port: the port runs at line rate,
// its queue tail-drops, and delivered + dropped = sent.
func TestSwitchCongestion(t *testing.T) {
	s, sw, h := lab(3, 100*units.Mbps, 32<<10)
	// Teach the switch where h3 is.
	h[2].Input(ethFrame(0, broadcast, mac(3), 60))
	s.RunFor(time.Millisecond)
	const perSender = 2000
	start := s.Now()
	for i := range 2 {
		src := h[i]
		sent := 0
		var pump func()
		pump = func() {
			for sent < perSender && src.CanAccept() {
				src.Input(ethFrame(uint64(1000000*(i+1)+sent), mac(3), mac(byte(i+1)), 1514))
				sent++
			}
		}
		src.TX.SetOnSpace(pump)
		s.At(start, pump)
	}
	s.Run()
	out := sw.Ports()[2].Stats()
	delivered := uint64(len(h[2].got))
	if delivered+out.Drops != 2*perSender {
		t.Fatalf("delivered %d + dropped %d != sent %d", delivered, out.Drops, 2*perSender)
	}
	if out.Drops == 0 || out.QueueHigh > 32<<10 {
		t.Fatalf("drops %d, queue high-water %d: want drops and a queue within 32KiB", out.Drops, out.QueueHigh)
	}
	// Once the queue is full, the output sends back to back: 123.04 µs per frame.
	first, last := h[2].got[1], h[2].got[len(h[2].got)-1]
	if gap := (last - first) / time.Duration(delivered-2); gap != 123040 {
		t.Fatalf("output port spacing %v per frame, want 123.04µs (line rate)", gap)
	}
}

// A software switch spends its per-frame cost on each frame before it
// forwards it, one at a time: frames leave at its pace, not the links', and
// a full CPU queue drops and counts.
func TestSoftwareSwitch(t *testing.T) {
	s, sw, h := lab(2, units.Gbps, DefaultBuffer)
	sw.CPU = emulator.NewFrameCPU(s, 75*time.Microsecond, 0, 3)
	h[1].Input(ethFrame(0, mac(1), mac(2), 64)) // h2 is learned: later frames are unicast
	s.Run()
	h[1].got = nil
	var pool emulator.Pool
	var sent []*emulator.Frame
	for i := range 6 {
		f := pooledFrame(&pool, mac(2), mac(1), 1000)
		f.ID = uint64(i + 1)
		sent = append(sent, f)
		h[0].Input(f) // 8.16 µs apart at 1G (1000 + 20 octets)
	}
	s.Run()
	// What the full CPU dropped went back to its pool (the last first).
	if f := pool.Get(1000); f != sent[5] {
		t.Errorf("the pool gives %p after the CPU dropped frames 4-6, want the last dropped %p", f, sent[5])
	}
	// Frames arrive every 8.16 µs; the first is processed at once, the CPU
	// holds 3 including the one in service, so 4, 5 and 6 (all before the
	// first is done at 75 µs) find it full.
	if len(h[1].got) != 3 || sw.Ports()[0].Stats().CPUDrops != 3 || sw.CPU.Overruns != 3 {
		t.Fatalf("delivered %d, cpu drops %d; want 3 and 3", len(h[1].got), sw.Ports()[0].Stats().CPUDrops)
	}
	for i := 1; i < len(h[1].got); i++ {
		if gap := h[1].got[i] - h[1].got[i-1]; gap != 75*time.Microsecond {
			t.Errorf("gap %d = %v, want the switch's 75µs", i, gap)
		}
	}
}
