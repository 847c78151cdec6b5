package atm

import (
	"bytes"
	"encoding/binary"
	"math"
	"net/netip"
	"testing"
	"time"

	"github.com/atmlab/atmlab/cells"
	"github.com/atmlab/atmlab/emulator"
	"github.com/atmlab/atmlab/emulator/sched"
)

// cellLog records when each cell arrives.
type cellLog struct {
	s     *sched.Scheduler
	times []time.Duration
	cells []cells.Cell
}

func (l *cellLog) ReceiveCell(c *cells.Cell) {
	l.times = append(l.times, l.s.Now())
	l.cells = append(l.cells, *c)
}

// Cells leave at the end of their slot on each PHY's cell clock, exactly:
// slot k ends at floor((k+1) x cell bits / rate) ns.
func TestCellDepartures(t *testing.T) {
	for _, tc := range []struct {
		phy  string
		want []time.Duration // three cells queued at 0, then one at 1 µs past the third
	}{
		{"oc3", []time.Duration{2831, 5662, 8493, 14155}},      // 424 bits / 149.76 Mbit/s = 2831.197 ns
		{"oc12", []time.Duration{707, 1415, 2123, 4246}},       // 707.799 ns
		{"ds3", []time.Duration{10416, 20833, 31250, 52083}},   // 12 cells per 125 µs
		{"e3", []time.Duration{12500, 25000, 37500, 62500}},    // 530 octets per 125 µs
		{"atm25", []time.Duration{16875, 33750, 50625, 84375}}, // 54 octet times at 25.6 Mbit/s
	} {
		s := sched.New()
		phy := PHYs[tc.phy]
		log := &cellLog{s: s}
		l := NewCellLink(s, LinkConfig{PHY: phy}, log)
		var c cells.Cell
		for range 3 {
			l.Send(&c, 0)
		}
		s.Run()
		// A cell arriving at an idle link 1 µs after the last departure waits
		// for the next slot boundary.
		s.RunUntil(log.times[2] + time.Microsecond)
		l.Send(&c, 0)
		s.Run()
		for i, w := range tc.want {
			if log.times[i] != w {
				t.Errorf("%s: cell %d arrived at %v, want %v", tc.phy, i, log.times[i], w)
			}
		}
		if st := l.Stats(); st.TxCells != 4 || st.Delivered != 4 {
			t.Errorf("%s: stats %+v", tc.phy, st)
		}
	}
}

// Slot arithmetic stays exact far into a run (hours of OC-12 slots).
func TestSlotAt(t *testing.T) {
	for _, name := range PHYNames() {
		p := PHYs[name]
		for _, k := range []int64{0, 1, 2, 1_000_003, 5_000_000_000, 17_000_000_001} {
			start := p.SlotStart(k)
			if got := p.SlotAt(start); got != k {
				t.Errorf("%s: SlotAt(start of %d = %v) = %d", name, k, start, got)
			}
			if got := p.SlotAt(start + 1); got != k+1 {
				t.Errorf("%s: SlotAt(%v + 1ns) = %d, want %d", name, start, got, k+1)
			}
		}
	}
	if r := PHYs["oc3"].CellRate(); math.Abs(r-353207.547) > 0.001 {
		t.Errorf("OC-3c cell rate %f", r)
	}
}

// frames collects what an adapter hands its host.
type frames struct {
	s     *sched.Scheduler
	got   [][]byte
	times []time.Duration
}

func (f *frames) Receive(fr *emulator.Frame) {
	f.got = append(f.got, fr.Data)
	f.times = append(f.times, f.s.Now())
}

var (
	macA = []byte{0x02, 0, 0, 0, 0, 0xA}
	macB = []byte{0x02, 0, 0, 0, 0, 0xB}
	ipA  = netip.MustParseAddr("10.0.0.1")
	ipB  = netip.MustParseAddr("10.0.0.2")
)

// ipFrame is an Ethernet frame from src to dst carrying an IPv4 packet of
// n octets (a UDP datagram of n-28) whose payload bytes count up from seq.
func ipFrame(dst, src []byte, from, to netip.Addr, n int, seq byte) []byte {
	f := make([]byte, 14+n)
	copy(f, dst)
	copy(f[6:], src)
	binary.BigEndian.PutUint16(f[12:], 0x0800)
	ip := f[14:]
	ip[0] = 0x45
	binary.BigEndian.PutUint16(ip[2:], uint16(n))
	ip[8], ip[9] = 64, 17
	copy(ip[12:], from.AsSlice())
	copy(ip[16:], to.AsSlice())
	for i := 20; i < n; i++ {
		ip[i] = seq + byte(i)
	}
	return f
}

// pair builds two hosts' adapters joined by a direct link on phy.
func pair(t *testing.T, phy string, aal AAL, encap cells.Encap, cfg LinkConfig) (*sched.Scheduler, *Adapter, *Adapter, *frames, *frames) {
	t.Helper()
	s := sched.New()
	cfg.PHY = PHYs[phy]
	ha, hb := &frames{s: s}, &frames{s: s}
	vc := []VC{{VPI: 0, VCI: 100}}
	a := NewAdapter(s, AdapterConfig{AAL: aal, Encap: encap, VCs: vc, MaxSDU: 9188}, ha)
	b := NewAdapter(s, AdapterConfig{AAL: aal, Encap: encap, VCs: vc, MaxSDU: 9188}, hb)
	a.Attach(NewCellLink(s, cfg, b))
	b.Attach(NewCellLink(s, cfg, a))
	return s, a, b, ha, hb
}

// A packet crosses as cells and reaches the far host whole, in a frame
// from its VC's MAC to the host's; the last cell lands at slot c-1's end.
func TestAdapterDelivers(t *testing.T) {
	for _, aal := range []AAL{AAL5, AAL34} {
		for _, encap := range []cells.Encap{cells.LLC, cells.VCMux} {
			s, a, _, _, hb := pair(t, "oc3", aal, encap, LinkConfig{})
			for i, n := range []int{28, 1472 + 28, 9180} {
				f := ipFrame(make([]byte, 6), macA, ipA, ipB, n, byte(i))
				a.Send(&emulator.Frame{Data: f})
				s.Run()
				got := hb.got[len(hb.got)-1]
				if !bytes.Equal(got[14:], f[14:]) || binary.BigEndian.Uint16(got[12:]) != 0x0800 {
					t.Fatalf("%v/%v %d octets: got %d octets", aal, encap, n, len(got)-14)
				}
				if mac := VCMAC(0, 100); !bytes.Equal(got[6:12], mac[:]) {
					t.Errorf("%v/%v: source MAC % x", aal, encap, got[6:12])
				}
			}
			c := aal.Cells(28 + encap.Overhead())
			if hb.times[0] != PHYs["oc3"].SlotEnd(int64(c-1)) {
				t.Errorf("%v/%v: first packet (%d cells) arrived at %v, want %v", aal, encap, c, hb.times[0], PHYs["oc3"].SlotEnd(int64(c-1)))
			}
			if st := a.ATM(); st.TxCells == 0 || a.Stats().TxFrames != 3 {
				t.Errorf("%v/%v: adapter stats %+v %+v", aal, encap, st, a.Stats())
			}
		}
	}
}

// saturate has a's host send n packets of ipLen octets as fast as the
// adapter's ring lets it, and returns the UDP goodput the far host saw in
// bit/s (between the first and last arrival).
func saturate(s *sched.Scheduler, a *Adapter, hb *frames, ipLen, n int) float64 {
	sent := 0
	fill := func() {
		for sent < n && !a.Full(0) {
			a.Send(&emulator.Frame{Data: ipFrame(macB, macA, ipA, ipB, ipLen, byte(sent))})
			sent++
		}
	}
	a.SetOnSpace(fill)
	fill()
	s.Run()
	got := len(hb.times)
	span := hb.times[got-1] - hb.times[0]
	return float64((got-1)*(ipLen-28)*8) / span.Seconds()
}

// A saturated OC-3c link delivers exactly the sawtooth's goodput: UDP 1444
// octets over LLC/SNAP AAL5 fills 31 cells (131.62 Mbit/s), 1445 needs 32
// (127.57); AAL3/4 takes 34 and 35 cells. atm.md §8.
func TestGoodputCeiling(t *testing.T) {
	for _, tc := range []struct {
		aal     AAL
		udp     int
		cells   int
		wantBps float64
	}{
		{AAL5, 1444, 31, 131.62e6}, {AAL5, 1445, 32, 127.60e6}, {AAL5, 1472, 32, 129.98e6},
		{AAL34, 1444, 34, 0}, {AAL34, 1472, 35, 118.84e6},
	} {
		s, a, _, _, hb := pair(t, "oc3", tc.aal, cells.LLC, LinkConfig{})
		got := saturate(s, a, hb, tc.udp+28, 500)
		theory := float64(tc.udp*8) * PHYs["oc3"].CellRate() / float64(tc.cells)
		if c := tc.aal.Cells(tc.udp + 28 + 8); c != tc.cells {
			t.Errorf("%v UDP %d: %d cells, want %d", tc.aal, tc.udp, c, tc.cells)
		}
		if math.Abs(got/theory-1) > 1e-4 || (tc.wantBps > 0 && math.Abs(got-tc.wantBps) > 0.005e6) {
			t.Errorf("%v UDP %d: %.4f Mbit/s, theory %.4f, reference %.2f", tc.aal, tc.udp, got/1e6, theory/1e6, tc.wantBps/1e6)
		}
		if len(hb.got) != 500 {
			t.Errorf("%v UDP %d: %d of 500 delivered", tc.aal, tc.udp, len(hb.got))
		}
	}
}

// The adapter answers ARP for its VC's peer with the VC's MAC, and for a
// point-to-point VC without a peer, for any address but the asker's own.
func TestATMARP(t *testing.T) {
	s := sched.New()
	host := &frames{s: s}
	a := NewAdapter(s, AdapterConfig{VCs: []VC{{VCI: 100, Peer: ipB}, {VCI: 101, Peer: netip.MustParseAddr("10.0.0.3")}}}, host)
	a.Attach(NewCellLink(s, LinkConfig{PHY: PHYs["oc3"]}, &cellLog{s: s}))
	ask := func(target netip.Addr) []byte {
		req := make([]byte, 42)
		copy(req, []byte{0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF})
		copy(req[6:], macA)
		binary.BigEndian.PutUint16(req[12:], 0x0806)
		p := req[14:]
		copy(p, []byte{0, 1, 8, 0, 6, 4, 0, 1})
		copy(p[8:], macA)
		copy(p[14:], ipA.AsSlice())
		copy(p[24:], target.AsSlice())
		n := len(host.got)
		a.Send(&emulator.Frame{Data: req})
		s.Run()
		if len(host.got) == n {
			return nil
		}
		return host.got[n]
	}
	r := ask(netip.MustParseAddr("10.0.0.3"))
	want := VCMAC(0, 101)
	if r == nil || !bytes.Equal(r[:6], macA) || !bytes.Equal(r[6:12], want[:]) || binary.BigEndian.Uint16(r[20:]) != 2 ||
		!bytes.Equal(r[22:28], want[:]) || !bytes.Equal(r[28:32], []byte{10, 0, 0, 3}) || !bytes.Equal(r[38:42], ipA.AsSlice()) {
		t.Fatalf("ARP reply for 10.0.0.3: % x", r)
	}
	if r := ask(netip.MustParseAddr("10.0.0.9")); r != nil {
		t.Errorf("answered for an address on no VC: % x", r)
	}
	if r := ask(ipA); r != nil {
		t.Errorf("answered a gratuitous ARP")
	}
	// A frame to 10.0.0.3's MAC leaves on VCI 101.
	log := &cellLog{s: s}
	a.out.dst = log
	a.Send(&emulator.Frame{Data: ipFrame(want[:], macA, ipA, netip.MustParseAddr("10.0.0.3"), 100, 0)})
	s.Run()
	if len(log.cells) != 3 || log.cells[0].Header(cells.UNI).VCI != 101 {
		t.Errorf("packet for 10.0.0.3: %d cells, VCI %d", len(log.cells), log.cells[0].Header(cells.UNI).VCI)
	}
	a.Send(&emulator.Frame{Data: ipFrame(macB, macA, ipA, ipB, 100, 0)})
	if a.ATM().NoVC != 1 {
		t.Errorf("a frame to no VC's MAC: %+v", a.ATM())
	}
	p2p := NewAdapter(s, AdapterConfig{VCs: []VC{{VCI: 100}}}, host)
	a = p2p
	a.Attach(NewCellLink(s, LinkConfig{PHY: PHYs["oc3"]}, &cellLog{s: s}))
	if r := ask(netip.MustParseAddr("192.168.7.7")); r == nil {
		t.Errorf("a point-to-point VC did not answer for an arbitrary address")
	}
}

// Cell loss: a PDU of c cells survives with probability (1-p)^c; those that
// lost a cell fail their CRC (AAL5) or sequence (AAL3/4) and are counted.
func TestCellLoss(t *testing.T) {
	const p, n = 1e-3, 20000
	for _, aal := range []AAL{AAL5, AAL34} {
		s, a, b, _, hb := pair(t, "oc3", aal, cells.LLC, LinkConfig{CLR: p, Seed: 7})
		saturate(s, a, hb, 1500, n)
		c := aal.Cells(1508)
		want := 1 - math.Pow(1-p, float64(c))
		lost := 1 - float64(len(hb.got))/n
		sigma := math.Sqrt(want * (1 - want) / n)
		if math.Abs(lost-want) > 4*sigma {
			t.Errorf("%v: PDU loss %.4f, want %.4f ± %.4f", aal, lost, want, 4*sigma)
		}
		st := b.ATM()
		failed := st.CRCErrors + st.SeqErrors + st.LengthErrors
		if cellsLost := a.ATM().LostCells; cellsLost == 0 || failed == 0 || failed > cellsLost+1 {
			t.Errorf("%v: %d cells lost, %d PDUs failed (%+v)", aal, cellsLost, failed, st)
		}
		for _, f := range hb.got {
			if len(f) != 14+1500 {
				t.Fatalf("%v: a damaged packet reached the host (%d octets)", aal, len(f)-14)
			}
		}
	}
}

// A peak cell rate spaces a VC's cells 1/PCR apart.
func TestPCRShaping(t *testing.T) {
	s := sched.New()
	log := &cellLog{s: s}
	a := NewAdapter(s, AdapterConfig{VCs: []VC{{VCI: 100}}, PCR: 100_000}, &frames{s: s})
	a.Attach(NewCellLink(s, LinkConfig{PHY: PHYs["oc3"]}, log))
	a.Send(&emulator.Frame{Data: ipFrame(macB, macA, ipA, ipB, 1500, 0)})
	s.Run()
	if len(log.times) != 32 {
		t.Fatalf("%d cells", len(log.times))
	}
	for i := 1; i < len(log.times); i++ {
		if d := log.times[i] - log.times[i-1]; d < 10*time.Microsecond-3*time.Microsecond || d > 10*time.Microsecond+3*time.Microsecond {
			t.Fatalf("cells %d-%d %v apart, want 10 µs within a cell slot", i-1, i, d)
		}
	}
	if span := log.times[31] - log.times[0]; span < 307*time.Microsecond || span > 313*time.Microsecond {
		t.Errorf("32 cells at 100 000 cells/s took %v, want 310 µs within a slot", span)
	}
}

// The adapter's ring: Full after Ring PDUs; OnSpace when one has left.
func TestAdapterRing(t *testing.T) {
	s := sched.New()
	a := NewAdapter(s, AdapterConfig{VCs: []VC{{VCI: 100}}, Ring: 2}, &frames{s: s})
	a.Attach(NewCellLink(s, LinkConfig{PHY: PHYs["oc3"]}, &cellLog{s: s}))
	spaced := 0
	a.SetOnSpace(func() { spaced++ })
	for range 2 {
		a.Send(&emulator.Frame{Data: ipFrame(macB, macA, ipA, ipB, 100, 0)})
	}
	if !a.Full(0) {
		t.Fatal("not full after Ring PDUs")
	}
	s.Run()
	if a.Full(0) || spaced != 1 {
		t.Errorf("after sending: full=%v, OnSpace called %d times", a.Full(0), spaced)
	}
}

// Send keeps emulator.Transmitter's contract: every frame the adapter
// drops makes it return false and is counted; what it takes, it sends.
func TestAdapterSendRefuses(t *testing.T) {
	s := sched.New()
	a := NewAdapter(s, AdapterConfig{VCs: []VC{{VCI: 100, Peer: ipB}, {VCI: 101, Peer: netip.MustParseAddr("10.0.0.3")}}, Ring: 1}, &frames{s: s})
	a.Attach(NewCellLink(s, LinkConfig{PHY: PHYs["oc3"]}, &cellLog{s: s}))
	vc := VCMAC(0, 100)
	lldp := ipFrame(vc[:], macA, ipA, ipB, 100, 0)
	binary.BigEndian.PutUint16(lldp[12:], 0x88CC)
	for _, c := range []struct {
		what  string
		frame []byte
	}{
		{"a runt", make([]byte, 10)},
		{"not IP", lldp},
		{"to no VC", ipFrame(macB, macA, ipA, ipB, 100, 0)},
		{"too long for AAL5", ipFrame(vc[:], macA, ipA, ipB, 65535, 0)},
	} {
		if a.Send(&emulator.Frame{Data: c.frame}) {
			t.Errorf("%s: Send took it", c.what)
		}
	}
	if st := a.ATM(); st.NotIP != 2 || st.NoVC != 1 || st.TooLong != 1 {
		t.Errorf("counters %+v: want 2 not IP, 1 with no VC, 1 too long", st)
	}
	if !a.Send(&emulator.Frame{Data: ipFrame(vc[:], macA, ipA, ipB, 100, 0)}) || !a.Full(0) {
		t.Fatal("a good frame was refused, or the ring of 1 is not full after it")
	}
	if a.Send(&emulator.Frame{Data: ipFrame(vc[:], macA, ipA, ipB, 100, 1)}) || a.Stats().QueueDrops != 1 {
		t.Errorf("a frame past the full ring: taken, or %d queue drops", a.Stats().QueueDrops)
	}
	s.Run()
	if st := a.Stats(); st.TxFrames != 1 || st.TxBytes != 114 {
		t.Errorf("sent %d PDUs, %d octets; want 1, 114", st.TxFrames, st.TxBytes)
	}
}
