package router

import (
	"fmt"
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
// CPU has copied it, and the CPU queues the job as a value, so a packet
// allocates nothing: no buffer, no event, no closure. Before, each hop
// allocated a new frame, its buffer and a timer (about 1.6 KB a packet a
// router: most of the 200 MB/s of garbage gns3-mpls's ATM core made at
// 10,800 packets a second through five routers), and then a closure for
// the CPU job (144 octets a packet a router).
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
		f := src.sendPooled(&pool, in.MAC, ip)
		if len(handed) < cap(handed) {
			handed = append(handed, f)
		}
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
	if n != 0 {
		t.Errorf("%v allocations in %d packets through a router: want 0", n, runs)
	}
	want := 1000 + 2*allocs.Tries*runs // AllocsPerRun runs f once more to warm up
	if sink.got != want || sink.pooled != want {
		t.Errorf("%d packets delivered, %d of them pooled: want %d, all", sink.got, sink.pooled, want)
	}
	if st := in.Stats().Router; st.Pushed != uint64(want) || st.CPUDrops != 0 {
		t.Errorf("router stats %+v: want %d pushed, no CPU drops", st, want)
	}
}

// Packets cross gns3-mpls's chain, five routers on one CPU with its
// costs, to a host that releases them: routed as IP by every router; or
// pushed by the first, swapped by the second and third and popped by the
// fourth (penultimate-hop popping), the fifth routing them as IP; or
// with explicit null, swapped to label 0 by the fourth and popped by the
// fifth, which routes what was under it. After warm-up no packet
// allocates anything in any of them.
func TestRouterChainAllocations(t *testing.T) {
	const n = 5
	for _, tc := range []struct {
		name     string
		mpls     bool
		explicit bool
		// want is each router's counters per packet, on its way in.
		want [n]emulator.RouterStats
	}{
		{"ip", false, false, [n]emulator.RouterStats{{Forwarded: 1}, {Forwarded: 1}, {Forwarded: 1}, {Forwarded: 1}, {Forwarded: 1}}},
		{"php", true, false, [n]emulator.RouterStats{{Pushed: 1}, {Swapped: 1}, {Swapped: 1}, {Popped: 1}, {Forwarded: 1}}},
		{"explicit null", true, true, [n]emulator.RouterStats{{Pushed: 1}, {Swapped: 1}, {Swapped: 1}, {Swapped: 1}, {Popped: 1, Forwarded: 1}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := sched.New()
			cpu := NewCPU(s, 0)
			nt := &net{s: s}
			src := &host{s: s, mac: [6]byte{2, 0, 0, 0, 0, 0xA}, addr: addr("10.0.0.1")}
			sink := &releaser{}
			cc := emulator.ChannelConfig{Rate: units.Gbps}
			var prev emulator.Port = src
			for i := range n {
				r := New(s, fmt.Sprintf("r%d", i+1), Config{MPLS: tc.mpls, CPU: cpu, Cost: Cost{IP: 17500 * time.Nanosecond, Push: 18750 * time.Nanosecond, Swap: 18750 * time.Nanosecond, Pop: 18750 * time.Nanosecond}})
				left := r.AddIface("eth0", [6]byte{2, 1, byte(i), 0, 0, 0}, netip.MustParsePrefix(fmt.Sprintf("10.0.%d.254/24", i)), 1500)
				right := r.AddIface("eth1", [6]byte{2, 1, byte(i), 0, 0, 1}, netip.MustParsePrefix(fmt.Sprintf("10.0.%d.1/24", i+1)), 1500)
				emulator.Connect(s, prev, left, cc, cc)
				prev = right
				if i < n-1 {
					r.AddRoute(Route{Prefix: netip.MustParsePrefix(fmt.Sprintf("10.0.%d.0/24", n)), Via: addr(fmt.Sprintf("10.0.%d.254", i+1)), Iface: right})
				}
				nt.r = append(nt.r, r)
			}
			emulator.Connect(s, prev, sink, cc, cc)
			dst := addr(fmt.Sprintf("10.0.%d.2", n))
			nt.r[n-1].ifaces[1].arp[dst] = [6]byte{2, 0, 0, 0, 0, 0xB}
			if tc.mpls {
				nt.lsp(tc.explicit)
			}
			in := nt.r[0].ifaces[0]
			ip := udp(src.addr, dst, 64, 1460-8)
			var pool emulator.Pool
			send := func() {
				src.sendPooled(&pool, in.MAC, ip)
				s.Run()
			}
			for range 1000 { // ARP resolved, the rings and the pools grown
				send()
			}
			const runs = 100
			if got := allocs.Count(runs, send); got != 0 {
				t.Errorf("%v allocations in %d packets through %d routers: want 0", got, runs, n)
			}
			sent := uint64(1000 + 2*allocs.Tries*runs) // AllocsPerRun runs f once more to warm up
			if sink.got != int(sent) || sink.pooled != int(sent) {
				t.Errorf("%d packets delivered, %d of them pooled: want %d, all", sink.got, sink.pooled, sent)
			}
			for i, r := range nt.r {
				w := tc.want[i]
				w.Forwarded *= sent
				w.Pushed *= sent
				w.Swapped *= sent
				w.Popped *= sent
				if got := r.ifaces[0].Stats().Router; *got != w {
					t.Errorf("r%d: %+v, want %+v", i+1, *got, w)
				}
			}
		})
	}
}
