package router

import (
	"encoding/binary"
	"fmt"
	"net/netip"
	"testing"
	"time"

	"github.com/atmlab/atmlab/emulator"
	"github.com/atmlab/atmlab/emulator/ether"
	"github.com/atmlab/atmlab/emulator/sched"
	"github.com/atmlab/atmlab/emulator/units"
)

// host is a test station: it answers ARP for its address and keeps every
// IP packet it receives.
type host struct {
	s    *sched.Scheduler
	mac  [6]byte
	addr netip.Addr
	gw   netip.Addr
	tx   emulator.Transmitter
	got  [][]byte
}

func (h *host) PortName() string             { return "host" }
func (h *host) SetTX(t emulator.Transmitter) { h.tx = t }
func (h *host) Stats() emulator.PortStats    { return emulator.PortStats{} }
func (h *host) Receive(f *emulator.Frame) {
	d := f.Data
	switch binary.BigEndian.Uint16(d[12:]) {
	case emulator.EtherTypeARP:
		if a, ok := emulator.ParseARP(d[14:]); ok && a.Op == emulator.ARPRequest && a.TPA == h.addr {
			h.tx.Send(&emulator.Frame{Data: a.Reply(h.mac).Frame()})
		}
	case etherIPv4:
		h.got = append(h.got, d[14:])
	}
}

// sendIP sends an IPv4 packet to the gateway, whose MAC the test knows.
func (h *host) sendIP(gwMAC [6]byte, p []byte) {
	f := &emulator.Frame{Data: make([]byte, emulator.EtherHeader+len(p))}
	h.putIP(f, gwMAC, p)
	h.tx.Send(f)
}

// sendPooled is sendIP in a frame of pool, which it returns.
func (h *host) sendPooled(pool *emulator.Pool, gwMAC [6]byte, p []byte) *emulator.Frame {
	f := pool.Get(emulator.EtherHeader + len(p))
	h.putIP(f, gwMAC, p)
	h.tx.Send(f)
	return f
}

// putIP fills f, of EtherHeader+len(p) octets, with an Ethernet frame of
// IPv4 packet p from h to the gateway.
func (h *host) putIP(f *emulator.Frame, gwMAC [6]byte, p []byte) {
	copy(f.Data, gwMAC[:])
	copy(f.Data[6:], h.mac[:])
	binary.BigEndian.PutUint16(f.Data[12:], etherIPv4)
	copy(f.Data[emulator.EtherHeader:], p)
}

func udp(src, dst netip.Addr, ttl byte, n int) []byte {
	p := newIPv4(src, dst, 17, make([]byte, n))
	setTTL(p, ttl)
	return p
}

// net is a chain: host a, routers r[0..n-1], host b, on 100M links; the
// subnet between r[i-1] and r[i] is 10.0.i.0/24 (a on 10.0.0.0/24, b on
// 10.0.n.0/24). taps[i] records the frames on link i, both ways.
type net struct {
	s    *sched.Scheduler
	a, b *host
	r    []*Router
	taps [][][]byte
}

func addr(s string) netip.Addr { return netip.MustParseAddr(s) }

func chain(n int, cfg func(s *sched.Scheduler, i int) Config) *net {
	s := sched.New()
	nt := &net{s: s, taps: make([][][]byte, n+1)}
	nt.a = &host{s: s, mac: [6]byte{2, 0, 0, 0, 0, 0xA}, addr: addr("10.0.0.1")}
	nt.b = &host{s: s, mac: [6]byte{2, 0, 0, 0, 0, 0xB}, addr: addr(fmt.Sprintf("10.0.%d.2", n))}
	cc := emulator.ChannelConfig{Rate: 100 * units.Mbps}
	var prev emulator.Port = nt.a
	for i := range n {
		r := New(s, fmt.Sprintf("r%d", i+1), cfg(s, i))
		left := r.AddIface("eth0", [6]byte{2, 1, byte(i), 0, 0, 0}, netip.MustParsePrefix(fmt.Sprintf("10.0.%d.254/24", i)), 1500)
		right := r.AddIface("eth1", [6]byte{2, 1, byte(i), 0, 0, 1}, netip.MustParsePrefix(fmt.Sprintf("10.0.%d.1/24", i+1)), 1500)
		ab, ba := emulator.Connect(s, prev, left, cc, cc)
		nt.tap(i, ab, ba)
		prev = right
		nt.r = append(nt.r, r)
	}
	ab, ba := emulator.Connect(s, prev, nt.b, cc, cc)
	nt.tap(n, ab, ba)
	// Static routes along the chain: left of r[i] via r[i-1], right via r[i+1].
	for i, r := range nt.r {
		for j := 0; j <= n; j++ {
			p := netip.MustParsePrefix(fmt.Sprintf("10.0.%d.0/24", j))
			switch {
			case j < i:
				r.AddRoute(Route{Prefix: p, Via: addr(fmt.Sprintf("10.0.%d.1", i)), Iface: r.ifaces[0]})
			case j > i+1:
				r.AddRoute(Route{Prefix: p, Via: addr(fmt.Sprintf("10.0.%d.254", i+1)), Iface: r.ifaces[1]})
			}
		}
	}
	return nt
}

func (nt *net) tap(i int, chans ...*emulator.Channel) {
	for _, c := range chans {
		c.SetTap(func(f *emulator.Frame, _ time.Duration) { nt.taps[i] = append(nt.taps[i], f.Data) })
	}
}

// lsp binds labels along the chain for b's subnet as the lab builder would:
// r[i] (i < n-1) pushes or swaps to r[i+1]'s label 100+i+1; the last router
// is the egress and asks for implicit null (penultimate-hop popping) or
// explicit null.
func (nt *net) lsp(explicit bool) {
	n := len(nt.r)
	fec := netip.MustParsePrefix(fmt.Sprintf("10.0.%d.0/24", n))
	labelOf := func(i int) (uint32, bool) { // the label r[i] asks for; pop means implicit null
		if i == n-1 {
			if explicit {
				return ExplicitNull, false
			}
			return ImplicitNull, true
		}
		return uint32(100 + i), false
	}
	for i := 0; i < n-1; i++ {
		via := addr(fmt.Sprintf("10.0.%d.254", i+1))
		out, pop := labelOf(i + 1)
		if i == 0 && !pop {
			nt.r[i].Push(fec, out)
		}
		if i > 0 {
			in, _ := labelOf(i)
			nt.r[i].Bind(in, ILM{Pop: pop, Out: out, Via: via, Iface: nt.r[i].ifaces[1]})
		}
	}
}

// labels returns the label stacks of the MPLS frames on link i, top first.
func (nt *net) labels(i int) [][]Entry {
	var out [][]Entry
	for _, f := range nt.taps[i] {
		if binary.BigEndian.Uint16(f[12:]) != etherMPLS {
			continue
		}
		var stack []Entry
		for p := f[14:]; len(p) >= 4; p = p[4:] {
			e := ParseEntry(p)
			stack = append(stack, e)
			if e.Bottom {
				break
			}
		}
		out = append(out, stack)
	}
	return out
}

func TestEntryLayout(t *testing.T) {
	e := Entry{Label: 1048575, TC: 5, Bottom: true, TTL: 17}
	if w := e.Word(); w != 0xFFFFF000|5<<9|1<<8|17 || ParseEntry(binary.BigEndian.AppendUint32(nil, w)) != e {
		t.Fatalf("entry %+v -> %#x", e, e.Word())
	}
	if ParseEntry([]byte{0, 1, 0x40, 0x10}) != (Entry{Label: 20, Bottom: false, TTL: 0x10}) {
		t.Fatal("an entry without S decoded wrongly (0x10 is a TTL bit, not S)")
	}
}

// IP through three routers: ARP resolves each hop, and the TTL drops by one
// per router with a valid checksum.
func TestForwardIP(t *testing.T) {
	nt := chain(3, func(*sched.Scheduler, int) Config { return Config{} })
	nt.a.sendIP(nt.r[0].ifaces[0].MAC, udp(nt.a.addr, nt.b.addr, 64, 100))
	nt.s.Run()
	if len(nt.b.got) != 1 {
		t.Fatalf("b got %d packets", len(nt.b.got))
	}
	p := nt.b.got[0]
	if p[8] != 61 || checksum(p[:20]) != 0 {
		t.Errorf("TTL %d, header checksum verifies to %#x", p[8], checksum(p[:20]))
	}
	if st := nt.r[1].ifaces[0].Stats().Router; st.Forwarded != 1 {
		t.Errorf("r2 stats %+v", st)
	}
}

// Traceroute's view: TTL 1, 2, 3 expire at r1, r2, r3, each answering with
// ICMP time exceeded from its address toward a; an unknown destination
// gets net unreachable.
func TestTimeExceededAndUnreachable(t *testing.T) {
	nt := chain(3, func(*sched.Scheduler, int) Config { return Config{} })
	gw := nt.r[0].ifaces[0].MAC
	for ttl := byte(1); ttl <= 3; ttl++ {
		nt.a.sendIP(gw, udp(nt.a.addr, nt.b.addr, ttl, 10))
	}
	nt.a.sendIP(gw, udp(nt.a.addr, addr("192.168.9.9"), 64, 10))
	nt.s.Run()
	want := []struct {
		from     string
		typ, cod byte
	}{{"10.0.0.254", icmpTimeExceeded, 0}, {"10.0.1.254", icmpTimeExceeded, 0}, {"10.0.2.254", icmpTimeExceeded, 0}, {"10.0.0.254", icmpUnreachable, 0}}
	if len(nt.a.got) != len(want) {
		t.Fatalf("a got %d packets, want %d ICMP errors", len(nt.a.got), len(want))
	}
	seen := map[string]bool{}
	for _, p := range nt.a.got {
		h := ipHeaderLen(p)
		seen[fmt.Sprintf("%v %d %d", ipSrc(p), p[h], p[h+1])] = true
		if checksum(p[h:]) != 0 || ipDst(p[h+8:]) != ipDst(udp(nt.a.addr, nt.b.addr, 1, 0)) && ipDst(p[h+8:]) != addr("192.168.9.9") {
			t.Errorf("ICMP from %v: bad checksum or quote", ipSrc(p))
		}
	}
	for _, w := range want {
		if !seen[fmt.Sprintf("%v %d %d", w.from, w.typ, w.cod)] {
			t.Errorf("no ICMP %d/%d from %s; got %v", w.typ, w.cod, w.from, seen)
		}
	}
}

// A four-router LSP for b's subnet: r1 pushes, r2 swaps, r3 pops (PHP),
// r4 routes IP. The labels, S bits and TTLs on each link are RFC 3032's;
// the uniform model counts every router, the pipe model only the edges.
func TestLSP(t *testing.T) {
	for _, tc := range []struct {
		name     string
		pipe     bool
		explicit bool
		ttls     [3]uint8 // label TTL on links 1 and 2, and the label on link 3 (explicit null) or 0
		ipTTL    uint8    // at b
	}{
		{"uniform PHP", false, false, [3]uint8{63, 62, 0}, 60},
		{"pipe PHP", true, false, [3]uint8{255, 254, 0}, 62},
		{"uniform explicit null", false, true, [3]uint8{63, 62, 61}, 60},
	} {
		t.Run(tc.name, func(t *testing.T) {
			nt := chain(4, func(*sched.Scheduler, int) Config { return Config{MPLS: true, PipeTTL: tc.pipe} })
			nt.lsp(tc.explicit)
			nt.a.sendIP(nt.r[0].ifaces[0].MAC, udp(nt.a.addr, nt.b.addr, 64, 100))
			nt.s.Run()
			if len(nt.b.got) != 1 || nt.b.got[0][8] != tc.ipTTL {
				t.Fatalf("b got %d packets (TTL %v), want 1 with TTL %d", len(nt.b.got), nt.b.got, tc.ipTTL)
			}
			for link, want := range map[int]Entry{1: {Label: 101, Bottom: true, TTL: tc.ttls[0]}, 2: {Label: 102, Bottom: true, TTL: tc.ttls[1]}} {
				if got := nt.labels(link); len(got) != 1 || len(got[0]) != 1 || got[0][0] != want {
					t.Errorf("link %d carries %+v, want %+v", link, got, want)
				}
			}
			l3 := nt.labels(3)
			if tc.explicit && (len(l3) != 1 || l3[0][0] != (Entry{Label: ExplicitNull, Bottom: true, TTL: tc.ttls[2]})) {
				t.Errorf("link into the egress carries %+v, want explicit null", l3)
			}
			if !tc.explicit && len(l3) != 0 {
				t.Errorf("link into the egress carries labels %+v under PHP", l3)
			}
			if nt.labels(4) != nil || nt.labels(0) != nil {
				t.Error("labels outside the LSP")
			}
		})
	}
}

// A two-entry stack: transit routers look at the top entry only; popping
// the top sends the rest on as MPLS with its own S bit.
func TestLabelStack(t *testing.T) {
	nt := chain(3, func(*sched.Scheduler, int) Config { return Config{MPLS: true} })
	nt.r[0].Bind(200, ILM{Out: 201, Via: addr("10.0.1.254"), Iface: nt.r[0].ifaces[1]})
	nt.r[1].Bind(201, ILM{Pop: true, Via: addr("10.0.2.254"), Iface: nt.r[1].ifaces[1]})
	nt.r[2].Bind(777, ILM{Pop: true, Via: nt.b.addr, Iface: nt.r[2].ifaces[1]})
	ip := udp(nt.a.addr, nt.b.addr, 64, 40)
	f := make([]byte, 14+8+len(ip))
	copy(f, nt.r[0].ifaces[0].MAC[:])
	binary.BigEndian.PutUint16(f[12:], etherMPLS)
	binary.BigEndian.PutUint32(f[14:], Entry{Label: 200, TTL: 30}.Word())
	binary.BigEndian.PutUint32(f[18:], Entry{Label: 777, Bottom: true, TTL: 40}.Word())
	copy(f[22:], ip)
	nt.a.tx.Send(&emulator.Frame{Data: f})
	nt.s.Run()
	if got := nt.labels(1); len(got) != 1 || len(got[0]) != 2 || got[0][0] != (Entry{Label: 201, TTL: 29}) || got[0][1] != (Entry{Label: 777, Bottom: true, TTL: 40}) {
		t.Errorf("after the swap: %+v", got)
	}
	if got := nt.labels(2); len(got) != 1 || len(got[0]) != 1 || got[0][0] != (Entry{Label: 777, Bottom: true, TTL: 28}) {
		t.Errorf("after popping the top (uniform: the TTL goes down): %+v", got)
	}
	if len(nt.b.got) != 1 || nt.b.got[0][8] != 27 {
		t.Errorf("b got %d packets", len(nt.b.got))
	}
}

// Costs: a router whose IP lookup takes 10 µs forwards at most 100,000
// packets/s; routers sharing one CPU add their costs, routers with their own
// are bounded by the slowest; a full CPU queue drops and counts.
func TestCostModel(t *testing.T) {
	cost := Cost{IP: 10 * time.Microsecond}
	burst := func(cfg func(s *sched.Scheduler, i int) Config) *net {
		nt := chain(3, cfg)
		for range 300 {
			nt.a.sendIP(nt.r[0].ifaces[0].MAC, udp(nt.a.addr, nt.b.addr, 64, 18))
		}
		nt.s.Run()
		return nt
	}
	own := burst(func(*sched.Scheduler, int) Config { return Config{Cost: cost} })
	var cpu *CPU
	shared := burst(func(s *sched.Scheduler, _ int) Config {
		if cpu == nil {
			cpu = NewCPU(s, 0)
		}
		return Config{Cost: cost, CPU: cpu}
	})
	// The burst reaches r1 one 64-byte frame every 6.72 µs, faster than 10 µs:
	// r1's CPU is the bottleneck; with one CPU for all, each packet costs 30 µs.
	if end := own.s.Now(); end < 3*time.Millisecond || end > 3*time.Millisecond+100*time.Microsecond {
		t.Errorf("own CPUs: 300 packets done at %v, want about 3 ms (100,000 packets/s)", end)
	}
	if end := shared.s.Now(); end < 9*time.Millisecond || end > 9*time.Millisecond+100*time.Microsecond {
		t.Errorf("one shared CPU: 300 packets done at %v, want about 9 ms (three 10 µs hops each)", end)
	}
	if len(own.b.got) != 300 || len(shared.b.got) != 300 {
		t.Errorf("delivered %d and %d of 300", len(own.b.got), len(shared.b.got))
	}
	// Overloaded, a shared CPU drops at the first router only: what it has
	// worked on is never thrown away downstream.
	over := chain(3, func(s *sched.Scheduler, _ int) Config {
		if cpu == nil || cpu.s != s {
			cpu = NewCPU(s, 50)
		}
		return Config{Cost: cost, CPU: cpu}
	})
	for range 500 {
		over.a.sendIP(over.r[0].ifaces[0].MAC, udp(over.a.addr, over.b.addr, 64, 18))
	}
	over.s.Run()
	drops := func(i int) uint64 { return over.r[i].ifaces[0].Stats().Router.CPUDrops }
	if drops(0) == 0 || drops(1)+drops(2) != 0 || len(over.b.got)+int(drops(0)) != 500 {
		t.Errorf("overloaded shared CPU: drops %d/%d/%d, %d delivered of 500", drops(0), drops(1), drops(2), len(over.b.got))
	}
	small := chain(3, func(s *sched.Scheduler, _ int) Config { return Config{Cost: cost, CPU: NewCPU(s, 10)} })
	for range 300 {
		small.a.sendIP(small.r[0].ifaces[0].MAC, udp(small.a.addr, small.b.addr, 64, 18))
	}
	small.s.Run()
	// The drops count on the interface the packets came in on, and only what
	// the CPU took counts as forwarded.
	if st := small.r[0].ifaces[0].Stats().Router; st.CPUDrops == 0 || len(small.b.got)+int(st.CPUDrops) != 300 || st.Forwarded != uint64(len(small.b.got)) {
		t.Errorf("CPU queue of 10: %d delivered, %+v", len(small.b.got), st)
	}
	if st := small.r[0].ifaces[1].Stats().Router; st.CPUDrops != 0 {
		t.Errorf("CPU queue drops counted on the outgoing interface too: %+v", st)
	}
}

// Bad input: a routing loop, a label with no binding, MPLS to a router
// without it, short and malformed frames. Each is counted; none crashes.
func TestBadInput(t *testing.T) {
	nt := chain(2, func(*sched.Scheduler, int) Config { return Config{MPLS: true} })
	// A loop: r2 sends b's address back to r1, which sends it to r2.
	nt.r[1].AddRoute(Route{Prefix: netip.MustParsePrefix("10.0.2.2/32"), Via: addr("10.0.1.1"), Iface: nt.r[1].ifaces[0]})
	nt.a.sendIP(nt.r[0].ifaces[0].MAC, udp(nt.a.addr, nt.b.addr, 64, 10))
	// A label binding loop: r1 swaps 200 to 201 toward r2, r2 swaps it back.
	nt.r[0].Bind(200, ILM{Out: 201, Via: addr("10.0.1.254"), Iface: nt.r[0].ifaces[1]})
	nt.r[1].Bind(201, ILM{Out: 200, Via: addr("10.0.1.1"), Iface: nt.r[1].ifaces[0]})
	looped := make([]byte, 14+4+28)
	copy(looped, nt.r[0].ifaces[0].MAC[:])
	binary.BigEndian.PutUint16(looped[12:], etherMPLS)
	binary.BigEndian.PutUint32(looped[14:], Entry{Label: 200, Bottom: true, TTL: 20}.Word())
	copy(looped[18:], udp(nt.a.addr, nt.b.addr, 20, 0))
	nt.a.tx.Send(&emulator.Frame{Data: looped})
	f := make([]byte, 14+8)
	copy(f, nt.r[0].ifaces[0].MAC[:])
	binary.BigEndian.PutUint16(f[12:], etherMPLS)
	binary.BigEndian.PutUint32(f[14:], Entry{Label: 999, Bottom: true, TTL: 9}.Word())
	nt.a.tx.Send(&emulator.Frame{Data: f})
	nt.a.tx.Send(&emulator.Frame{Data: f[:15]})
	bad := clone(udp(nt.a.addr, nt.b.addr, 64, 10))
	bad[0] = 0x4F // header length beyond the packet
	nt.a.sendIP(nt.r[0].ifaces[0].MAC, bad)
	nt.s.Run()
	var expired, swapped uint64
	for _, r := range nt.r {
		for _, i := range r.ifaces {
			st := i.Stats().Router
			expired, swapped = expired+st.TTLExpired, swapped+st.Swapped
		}
	}
	st1 := nt.r[0].ifaces[0].Stats().Router
	if expired != 2 || swapped != 19 || st1.NoLabel != 1 || st1.Malformed != 2 {
		t.Errorf("%d TTL expiries (want 2: the IP loop and the label loop), %d swaps (want 19), r1 %+v", expired, swapped, st1)
	}
	if len(nt.a.got) != 2 || nt.a.got[0][20] != icmpTimeExceeded || nt.a.got[1][20] != icmpTimeExceeded {
		t.Errorf("a got %d packets, want the two loops' time exceeded", len(nt.a.got))
	}
}

func clone(b []byte) []byte { return append([]byte(nil), b...) }

// BenchmarkHop compares one hop through an emulated router (IP forwarding,
// and a label swap) with one through an Ethernet switch, at zero cost, in
// frames per CPU second.
func BenchmarkHop(b *testing.B) {
	for _, kind := range []string{"switch", "ip", "swap"} {
		b.Run(kind, func(b *testing.B) {
			s := sched.New()
			sink := &host{s: s, mac: [6]byte{2, 0, 0, 0, 0, 0xB}, addr: addr("10.0.1.2")}
			src := &host{s: s, mac: [6]byte{2, 0, 0, 0, 0, 0xA}, addr: addr("10.0.0.1")}
			cc := emulator.ChannelConfig{Rate: 100 * units.Gbps}
			var frame []byte
			if kind == "switch" {
				sw := ether.NewSwitch(s, "sw")
				emulator.Connect(s, src, sw.AddPort("p1"), cc, cc)
				emulator.Connect(s, sw.AddPort("p2"), sink, cc, cc)
				frame = make([]byte, 14+64)
				copy(frame, sink.mac[:])
				copy(frame[6:], src.mac[:])
				binary.BigEndian.PutUint16(frame[12:], etherIPv4)
				sink.tx.Send(&emulator.Frame{Data: frame}) // teach the switch where sink is
			} else {
				r := New(s, "r", Config{MPLS: true})
				in := r.AddIface("eth0", [6]byte{2, 1}, netip.MustParsePrefix("10.0.0.254/24"), 1500)
				out := r.AddIface("eth1", [6]byte{2, 2}, netip.MustParsePrefix("10.0.1.1/24"), 1500)
				emulator.Connect(s, src, in, cc, cc)
				emulator.Connect(s, out, sink, cc, cc)
				out.arp[sink.addr] = sink.mac
				r.Bind(300, ILM{Out: 301, Via: sink.addr, Iface: out})
				ip := udp(src.addr, sink.addr, 64, 36)
				frame = make([]byte, 14, 14+4+len(ip))
				copy(frame, in.MAC[:])
				binary.BigEndian.PutUint16(frame[12:], etherIPv4)
				if kind == "swap" {
					binary.BigEndian.PutUint16(frame[12:], etherMPLS)
					frame = binary.BigEndian.AppendUint32(frame, Entry{Label: 300, Bottom: true, TTL: 64}.Word())
				}
				frame = append(frame, ip...)
			}
			s.Run()
			b.ReportAllocs()
			for b.Loop() {
				src.tx.Send(&emulator.Frame{Data: frame})
				s.Run()
				sink.got = sink.got[:0]
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "frames/s")
		})
	}
}
