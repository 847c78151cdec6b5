package router

import (
	"encoding/binary"
	"net/netip"
	"testing"
	"time"

	"github.com/atmlab/atmlab/emulator"
	"github.com/atmlab/atmlab/emulator/internal/allocs"
	"github.com/atmlab/atmlab/emulator/sched"
	"github.com/atmlab/atmlab/emulator/units"
)

// releaser is a host that releases every frame it is handed, as the
// kernel's TAP writer does, and counts them and the pooled ones.
type releaser struct {
	got, pooled int
}

func (h *releaser) PortName() string           { return "sink" }
func (h *releaser) SetTX(emulator.Transmitter) {}
func (h *releaser) Stats() emulator.PortStats  { return emulator.PortStats{} }
func (h *releaser) Receive(f *emulator.Frame) {
	h.got++
	if f.Pooled() {
		h.pooled++
	}
	f.Release()
}

// A 1460-octet datagram from a pool crosses a router with a CPU (the
// label push of gns3-mpls's routers, 18.75 µs) to a host that releases
// what it is handed: after the first, the router copies each packet into
// a frame of its own pool and releases the one it was handed once the
// CPU has copied it, so a packet allocates no buffer and no event. What
// is left is the CPU job's closure: one allocation of a few words.
// Before, each hop allocated a new frame, its buffer and a timer (about
// 1.6 KB a packet a router: most of the 200 MB/s of garbage gns3-mpls's
// ATM core made at 10,800 packets a second through five routers).
func TestRouterForwardsFromItsPoolAndReleasesWhatItWasHanded(t *testing.T) {
	s := sched.New()
	r := New(s, "r", Config{MPLS: true, Cost: Cost{IP: 17500 * time.Nanosecond, Push: 18750 * time.Nanosecond}})
	in := r.AddIface("eth0", [6]byte{2, 1}, netip.MustParsePrefix("10.0.0.254/24"), 1500)
	out := r.AddIface("eth1", [6]byte{2, 2}, netip.MustParsePrefix("10.0.1.1/24"), 1500)
	src := &host{s: s, mac: [6]byte{2, 0, 0, 0, 0, 0xA}, addr: addr("10.0.0.1")}
	sink := &releaser{}
	cc := emulator.ChannelConfig{Rate: units.Gbps}
	emulator.Connect(s, src, in, cc, cc)
	emulator.Connect(s, out, sink, cc, cc)
	dst := addr("10.0.1.2")
	out.arp[dst] = [6]byte{2, 0, 0, 0, 0, 0xB}
	r.Push(netip.MustParsePrefix("10.0.1.0/24"), 300)
	ip := udp(src.addr, dst, 64, 1460-8)
	var pool emulator.Pool
	var handed []*emulator.Frame
	send := func() {
		f := pool.Get(emulator.EtherHeader + len(ip))
		copy(f.Data, in.MAC[:])
		copy(f.Data[6:], src.mac[:])
		binary.BigEndian.PutUint16(f.Data[12:], etherIPv4)
		copy(f.Data[emulator.EtherHeader:], ip)
		if len(handed) < cap(handed) {
			handed = append(handed, f)
		}
		src.tx.Send(f)
		s.Run()
	}
	handed = make([]*emulator.Frame, 0, 10)
	for range 10 {
		send()
	}
	for k, f := range handed {
		if f.Pooled() {
			t.Fatalf("frame %d handed to the router is still its pool's: the router did not release it", k)
		}
	}
	for range 990 { // the rings and the pools grown
		send()
	}
	const runs = 100
	n := allocs.Count(runs, send)
	t.Logf("%v allocations in %d packets", n, runs)
	if n > runs {
		t.Errorf("%v allocations in %d packets through a router: want at most %d (the CPU job's closure)", n, runs, runs)
	}
	want := 1000 + 2*allocs.Tries*runs // AllocsPerRun runs f once more to warm up
	if sink.got != want || sink.pooled != want {
		t.Errorf("%d packets delivered, %d of them pooled: want %d, all", sink.got, sink.pooled, want)
	}
	if st := in.Stats().Router; st.Pushed != uint64(want) || st.CPUDrops != 0 {
		t.Errorf("router stats %+v: want %d pushed, no CPU drops", st, want)
	}
}
