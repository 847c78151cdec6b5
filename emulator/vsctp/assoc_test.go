package vsctp

import (
	"testing"
	"time"

	"github.com/atmlab/atmlab/emulator/sched"
)

// schedClock is the association's Clock on a scheduler.
type schedClock struct{ s *sched.Scheduler }

func (c schedClock) Now() time.Duration { return c.s.Now() }
func (c schedClock) After(d time.Duration, f func()) Timer {
	return c.s.After(d, f)
}

// pair is two ends joined by a path of one-way delay oneWay and no rate
// limit (packets arrive in order at send time + oneWay); drop, when set,
// loses a packet the client sends (n counts them from 1).
type pair struct {
	s      *sched.Scheduler
	cl, sv *Assoc
	sent   int
	drop   func(n int, p Packet) bool
	log    []string
}

func newPair(mtu int, oneWay time.Duration, drop func(int, Packet) bool) *pair {
	pr := &pair{s: sched.New(), drop: drop}
	link := func(to **Assoc, fromClient bool) func([]byte) {
		return func(b []byte) {
			if fromClient {
				pr.sent++
				if p, _ := Parse(b); pr.drop != nil && pr.drop(pr.sent, p) {
					return
				}
			}
			b = append([]byte(nil), b...)
			pr.s.After(oneWay, func() { (*to).Deliver(b) })
		}
	}
	pr.cl = New(Config{Clock: schedClock{pr.s}, MTU: mtu, LocalPort: 2, PeerPort: 1, Seed: 7, Output: link(&pr.sv, true)})
	pr.sv = New(Config{Clock: schedClock{pr.s}, MTU: mtu, LocalPort: 1, PeerPort: 2, Seed: 9, Output: link(&pr.cl, false)})
	pr.sv.Listen()
	return pr
}

// The handshake is INIT, INIT ACK, COOKIE ECHO, COOKIE ACK: the server is
// established after a round trip and a half, the client after two; both
// start with §7.2.1's cwnd, ssthresh the peer's window, RTO 3 s.
func TestHandshakeAndInitialWindow(t *testing.T) {
	pr := newPair(9000, 5*time.Millisecond, nil)
	var clAt, svAt time.Duration
	pr.cl.OnEstablished = func() { clAt = pr.s.Now() }
	pr.sv.OnEstablished = func() { svAt = pr.s.Now() }
	pr.cl.Connect()
	pr.s.Run()
	if clAt != 20*time.Millisecond || svAt != 15*time.Millisecond {
		t.Errorf("established at %v (client) and %v (server), want 20ms and 15ms", clAt, svAt)
	}
	if pr.cl.Cwnd() != 18000 || pr.cl.Ssthresh() != DefaultBuf || pr.cl.RTO() != RTOInitial {
		t.Errorf("cwnd %d, ssthresh %d, RTO %v, want 18000, %d, 3s", pr.cl.Cwnd(), pr.cl.Ssthresh(), pr.cl.RTO(), DefaultBuf)
	}
	for _, tt := range []struct{ mtu, want int }{{9000, 18000}, {1500, 4380}, {1000, 4000}, {576, 2304}} {
		if got := InitialCwnd(tt.mtu); got != tt.want {
			t.Errorf("InitialCwnd(%d) = %d, want %d", tt.mtu, got, tt.want)
		}
	}
}

// handshake runs a pair's handshake and returns the model time after it.
func handshake(t *testing.T, pr *pair) time.Duration {
	t.Helper()
	pr.cl.Connect()
	pr.s.Run()
	if !pr.cl.Established() || !pr.sv.Established() {
		t.Fatal("not established")
	}
	return pr.s.Now()
}

// One message alone is acknowledged by the delayed SACK: 200 ms after it
// arrives. Its round trip is the first RTT sample: SRTT R, RTTVAR R/2,
// RTO = R + 4 R/2 = 3R, at least RTO.min (1 s).
func TestDelayedSackAndFirstRTO(t *testing.T) {
	pr := newPair(1500, 5*time.Millisecond, nil)
	t0 := handshake(t, pr)
	var got []byte
	pr.sv.OnMessage = func(m []byte) { got = append(got, m...) }
	pr.cl.Send([]byte("one"))
	var ackedAt time.Duration
	for pr.s.Step() {
		if ackedAt == 0 && len(pr.cl.out) == 0 {
			ackedAt = pr.s.Now()
		}
	}
	if want := t0 + 5*time.Millisecond + SackDelay + 5*time.Millisecond; ackedAt != want || string(got) != "one" {
		t.Errorf("acked at %v, got %q, want %v and \"one\"", ackedAt, got, want)
	}
	if pr.cl.srtt != 210*time.Millisecond || pr.cl.rttvar != 105*time.Millisecond || pr.cl.RTO() != 1*time.Second {
		t.Errorf("SRTT %v, RTTVAR %v, RTO %v, want 210ms, 105ms, 1s", pr.cl.srtt, pr.cl.rttvar, pr.cl.RTO())
	}
	pr.cl.sample(2 * time.Second) // |210ms − 2s| = 1.79 s: RTTVAR 3/4·105ms + 1.79s/4, SRTT 7/8·210ms + 2s/8
	if pr.cl.srtt != 433750*time.Microsecond || pr.cl.rttvar != 526250*time.Microsecond || pr.cl.RTO() != 2538750*time.Microsecond {
		t.Errorf("after 2 s: SRTT %v, RTTVAR %v, RTO %v", pr.cl.srtt, pr.cl.rttvar, pr.cl.RTO())
	}
}

// Slow start: the first flight fills the initial cwnd (18000 at MTU
// 9000: three 8952-octet chunks, since a chunk may go while less than
// cwnd is outstanding); the SACK of the second (every second packet)
// acknowledges 17904 octets and cwnd grows by min(17904, MTU) to 27000.
func TestSlowStartGrowsByOneMTUPerSack(t *testing.T) {
	pr := newPair(9000, 5*time.Millisecond, nil)
	handshake(t, pr)
	msg := make([]byte, 8952)
	for range 20 {
		pr.cl.Send(msg)
	}
	if n := len(pr.cl.out); n != 3 || pr.cl.flight != 3*8952 {
		t.Fatalf("first flight %d chunks, %d octets, want 3, %d", n, pr.cl.flight, 3*8952)
	}
	for pr.cl.Stats.DataSent == 3 && pr.s.Step() {
	}
	if pr.cl.Cwnd() != 27000 {
		t.Errorf("cwnd after the first SACK %d, want 27000", pr.cl.Cwnd())
	}
}

// Congestion avoidance (cwnd > ssthresh): partial_bytes_acked collects
// the octets acknowledged, and once it reaches cwnd with cwnd outstanding
// before the SACK, cwnd grows by one MTU and pba keeps the rest.
func TestCongestionAvoidanceCountsPartialBytesAcked(t *testing.T) {
	pr := newPair(1500, 5*time.Millisecond, nil)
	handshake(t, pr)
	a := pr.cl
	a.ssthresh, a.cwnd = 4000, 5000
	msg := make([]byte, 1000)
	for range 10 {
		a.Send(msg) // 5 go: 0..4000 outstanding < 5000
	}
	tsn := a.out[0].d.TSN
	if len(a.out) != 5 {
		t.Fatalf("%d outstanding, want 5", len(a.out))
	}
	a.onSack(Sack{CumTSN: tsn + 2, Rwnd: DefaultBuf}) // 3000 acked: pba 3000, cwnd stays
	a.Pump()                                          // 3 more go: 5000 outstanding
	if a.cwnd != 5000 || a.pba != 3000 {
		t.Errorf("after 3000 acked: cwnd %d, pba %d, want 5000, 3000", a.cwnd, a.pba)
	}
	a.onSack(Sack{CumTSN: tsn + 4, Rwnd: DefaultBuf}) // 2000 more: pba 5000 ≥ cwnd, flight was 5000
	if a.cwnd != 6500 || a.pba != 0 {
		t.Errorf("after 5000 acked: cwnd %d, pba %d, want 6500, 0", a.cwnd, a.pba)
	}
}

// A lost chunk with data behind it is fast-retransmitted at the third
// miss indication: ssthresh = max(cwnd/2, 4 MTU), cwnd = ssthresh, no
// T3; everything is delivered once and in order.
func TestFastRetransmitOnThreeMissIndications(t *testing.T) {
	lost := false
	pr := newPair(1500, 5*time.Millisecond, func(n int, p Packet) bool {
		for _, c := range p.Chunks {
			if d, err := ParseData(c); err == nil && d.SSN == 10 && !lost {
				lost = true
				return true
			}
		}
		return false
	})
	handshake(t, pr)
	var got []uint16
	pr.sv.OnMessage = func(m []byte) { got = append(got, uint16(m[0])|uint16(m[1])<<8) }
	var cwndAt int
	for i := range 40 {
		m := make([]byte, 1452)
		m[0], m[1] = byte(i), byte(i>>8)
		pr.cl.Send(m)
	}
	for pr.s.Step() {
		if pr.cl.Stats.FastRetransmits == 1 && cwndAt == 0 {
			cwndAt = pr.cl.Cwnd()
		}
	}
	if pr.cl.Stats.FastRetransmits != 1 || pr.cl.Stats.T3Expiries != 0 || pr.cl.Stats.Retransmits != 1 {
		t.Errorf("stats %+v, want one fast retransmit and no T3", pr.cl.Stats)
	}
	if cwndAt != 4*1500 || pr.cl.Ssthresh() != 6000 {
		t.Errorf("cwnd %d, ssthresh %d at the fast retransmit, want 6000, 6000", cwndAt, pr.cl.Ssthresh())
	}
	for i, v := range got {
		if int(v) != i || len(got) != 40 {
			t.Fatalf("delivered %v, want 0..39 once each, in order", got)
		}
	}
}

// A lone chunk lost is retransmitted when T3 expires, after the initial
// RTO (3 s, no RTT sample yet): cwnd drops to one MTU, ssthresh to
// max(cwnd/2, 4 MTU), RTO doubles to 6 s.
func TestT3RetransmitsAfterRTO(t *testing.T) {
	drop := true
	pr := newPair(1500, 5*time.Millisecond, func(n int, p Packet) bool {
		if len(p.Chunks) > 0 && p.Chunks[len(p.Chunks)-1].Type == TypeData && drop {
			drop = false
			return true
		}
		return false
	})
	t0 := handshake(t, pr)
	var at time.Duration
	pr.sv.OnMessage = func([]byte) { at = pr.s.Now() }
	pr.cl.Send([]byte("x"))
	pr.s.RunUntil(t0 + RTOInitial + 6*time.Millisecond)
	if want := t0 + RTOInitial + 5*time.Millisecond; at != want {
		t.Errorf("delivered at %v, want %v", at, want)
	}
	if pr.cl.Stats.T3Expiries != 1 || pr.cl.Cwnd() != 1500 || pr.cl.Ssthresh() != 6000 || pr.cl.RTO() != 6*time.Second {
		t.Errorf("stats %+v, cwnd %d, ssthresh %d, RTO %v, want 1 T3, 1500, 6000, 6s", pr.cl.Stats, pr.cl.Cwnd(), pr.cl.Ssthresh(), pr.cl.RTO())
	}
}

// Close sends SHUTDOWN once everything is acknowledged, then SHUTDOWN ACK
// and SHUTDOWN COMPLETE: both ends report a clean close. A message sent
// alone waits for its delayed SACK (200 ms); when Close finds chunks still
// queued, the last carries the I bit (RFC 7053) and is acknowledged at
// once. A 9000-octet message at MTU 1500 is 7 chunks: 4 go at once
// (cwnd 4380), both SACKs come back at +10 ms, the last 3 go and the I bit
// has them acknowledged at +20 ms, SHUTDOWN ACK is back at +30 ms.
func TestShutdownAfterTheLastAck(t *testing.T) {
	for _, tt := range []struct {
		size       int
		clAt, svAt time.Duration
	}{{4, 220 * time.Millisecond, 225 * time.Millisecond}, {9000, 30 * time.Millisecond, 35 * time.Millisecond}} {
		pr := newPair(1500, 5*time.Millisecond, nil)
		t0 := handshake(t, pr)
		var clAt, svAt time.Duration
		pr.cl.OnClosed = func(err error) {
			if err != nil {
				t.Error(err)
			}
			clAt = pr.s.Now()
		}
		pr.sv.OnClosed = func(err error) {
			if err != nil {
				t.Error(err)
			}
			svAt = pr.s.Now()
		}
		pr.cl.Send(make([]byte, tt.size))
		pr.cl.Close()
		pr.s.Run()
		if clAt != t0+tt.clAt || svAt != t0+tt.svAt {
			t.Errorf("%d octets: closed at +%v (client), +%v (server), want +%v, +%v", tt.size, clAt-t0, svAt-t0, tt.clAt, tt.svAt)
		}
	}
}
