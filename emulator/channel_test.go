package emulator

import (
	"math"
	"testing"
	"time"

	"github.com/atmlab/atmlab/emulator/internal/allocs"
	"github.com/atmlab/atmlab/emulator/sched"
	"github.com/atmlab/atmlab/emulator/units"
)

// arrival is a frame seen by a collector at a model time.
type arrival struct {
	id uint64
	at time.Duration
}

type collector struct {
	s   *sched.Scheduler
	got []arrival
}

func (c *collector) Receive(f *Frame) { c.got = append(c.got, arrival{f.ID, c.s.Now()}) }

func frame(id uint64, n int) *Frame { return &Frame{ID: id, Data: make([]byte, n)} }

const us = time.Microsecond

func TestEthernetWireBytes(t *testing.T) {
	for _, tc := range []struct{ n, total, gap int }{
		{1514, 1538, 12}, // 1500-byte IP packet
		{60, 84, 12},     // minimum frame
		{42, 84, 12},     // an ARP frame is padded to the minimum
		{9014, 9038, 12}, // jumbo
	} {
		total, gap := Ethernet{}.WireBytes(tc.n)
		if total != tc.total || gap != tc.gap {
			t.Errorf("WireBytes(%d) = %d, %d, want %d, %d", tc.n, total, gap, tc.total, tc.gap)
		}
	}
}

func TestChannelDepartures(t *testing.T) {
	for _, tc := range []struct {
		name  string
		cfg   ChannelConfig
		sends []struct {
			at time.Duration
			n  int
		}
		want []time.Duration
	}{
		{
			name: "back to back at 100M",
			cfg:  ChannelConfig{Rate: 100 * units.Mbps},
			sends: []struct {
				at time.Duration
				n  int
			}{{0, 1514}, {0, 1514}, {0, 1514}},
			// last bit after preamble+frame = 1526 bytes = 122.08 µs; each frame
			// then holds the wire 123.04 µs including the gap.
			want: []time.Duration{122080, 245120, 368160},
		},
		{
			name: "minimum frames at 10M with a cable",
			cfg:  ChannelConfig{Rate: 10 * units.Mbps, Propagation: 500},
			sends: []struct {
				at time.Duration
				n  int
			}{{0, 60}, {0, 42}},
			want: []time.Duration{57600 + 500, 57600 + 67200 + 500},
		},
		{
			name: "idle link starts at once",
			cfg:  ChannelConfig{Rate: units.Gbps},
			sends: []struct {
				at time.Duration
				n  int
			}{{0, 1514}, {time.Millisecond, 1514}, {time.Millisecond + 5*us, 1514}},
			want: []time.Duration{12208, time.Millisecond + 12208, time.Millisecond + 12304 + 12208},
		},
		{
			name: "arrival during the gap waits for it",
			cfg:  ChannelConfig{Rate: 100 * units.Mbps},
			sends: []struct {
				at time.Duration
				n  int
			}{{0, 1514}, {122500, 60}},
			want: []time.Duration{122080, 123040 + 5760},
		},
		{
			name: "delay is a pipe",
			cfg:  ChannelConfig{Rate: 100 * units.Mbps, Impair: Impair{Delay: 10 * time.Millisecond}},
			sends: []struct {
				at time.Duration
				n  int
			}{{0, 1514}, {0, 1514}},
			want: []time.Duration{10*time.Millisecond + 122080, 10*time.Millisecond + 245120},
		},
		{
			name: "netem rate behind the line",
			cfg:  ChannelConfig{Rate: 100 * units.Mbps, Impair: Impair{Rate: 10 * units.Mbps}},
			sends: []struct {
				at time.Duration
				n  int
			}{{0, 1000}, {0, 1000}},
			// line: the first last bit at (8+1004)*8 bits = 80.96 µs; the rate
			// stage counts 1000 bytes = 800 µs at 10M and holds the second.
			want: []time.Duration{80960 + 800000, 80960 + 1600000},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := sched.New()
			c := &collector{s: s}
			ch := NewChannel(s, tc.cfg, c)
			for i, snd := range tc.sends {
				s.At(snd.at, func() { ch.Send(frame(uint64(i), snd.n)) })
			}
			s.Run()
			if len(c.got) != len(tc.want) {
				t.Fatalf("delivered %d frames, want %d", len(c.got), len(tc.want))
			}
			for i, w := range tc.want {
				if c.got[i].id != uint64(i) || c.got[i].at != w {
					t.Errorf("frame %d delivered as id %d at %v, want at %v", i, c.got[i].id, c.got[i].at, w)
				}
			}
		})
	}
}

// The long-run rate is exact: rounding never accumulates, even at a rate
// whose bit time is not a whole number of nanoseconds.
func TestChannelRateExact(t *testing.T) {
	s := sched.New()
	c := &collector{s: s}
	rate := units.BitRate(155_520_000)
	ch := NewChannel(s, ChannelConfig{Rate: rate}, c)
	const n = 100000
	for i := range n {
		ch.Send(frame(uint64(i), 1514))
	}
	s.Run()
	want := rate.TxTime(n*1538*8 - 12*8)
	if got := c.got[n-1].at; got != want {
		t.Fatalf("last delivery at %v, want %v", got, want)
	}
	if st := ch.Stats(); st.TxFrames != n || st.Delivered != n || st.TxBytes != n*1514 {
		t.Fatalf("stats %+v", st)
	}
}

func TestChannelQueueLimits(t *testing.T) {
	s := sched.New()
	c := &collector{s: s}
	ch := NewChannel(s, ChannelConfig{Rate: 100 * units.Mbps, QueueFrames: 2}, c)
	spaces := []time.Duration{}
	ch.OnSpace = func() { spaces = append(spaces, s.Now()) }
	accepted := 0
	for i := range 3 {
		if ch.Send(frame(uint64(i), 1514)) {
			accepted++
		}
	}
	if accepted != 2 || !ch.Full(0) {
		t.Fatalf("accepted %d of 3 with a 2-frame ring (full=%v)", accepted, ch.Full(0))
	}
	s.Run()
	if st := ch.Stats(); st.QueueDrops != 1 || st.Delivered != 2 {
		t.Fatalf("stats %+v, want 1 drop and 2 delivered", st)
	}
	// The ring slot frees when the first frame's last bit has left.
	if len(spaces) != 1 || spaces[0] != 122080 {
		t.Fatalf("OnSpace at %v, want once at 122.08µs", spaces)
	}

	// A byte limit counts the frame in service too.
	s = sched.New()
	ch = NewChannel(s, ChannelConfig{Rate: 100 * units.Mbps, QueueBytes: 3000}, &collector{s: s})
	if !ch.Send(frame(0, 1500)) || !ch.Send(frame(1, 1500)) || ch.Send(frame(2, 1)) {
		t.Fatal("a 3000-byte queue should take exactly two 1500-byte frames")
	}
	if st := ch.Stats(); st.QueueHigh != 3000 || st.Queue != 3000 {
		t.Fatalf("QueueHigh = %d, Queue = %d, want 3000 both", st.QueueHigh, st.Queue)
	}
	// The first frame's last bit leaves after 121.92 µs (1500 bytes and the
	// preamble, FCS and gap at 100M): then 1500 bytes are queued.
	s.RunUntil(123 * time.Microsecond)
	if st := ch.Stats(); st.Queue != 1500 || st.QueueHigh != 3000 {
		t.Fatalf("after the first frame Queue = %d, want 1500 (high %d)", st.Queue, st.QueueHigh)
	}
	s.Run()
	if st := ch.Stats(); st.Queue != 0 {
		t.Fatalf("drained Queue = %d, want 0", st.Queue)
	}
}

func TestImpairLossAndLimit(t *testing.T) {
	s := sched.New()
	c := &collector{s: s}
	const n = 200000
	ch := NewChannel(s, ChannelConfig{Rate: units.Gbps, Impair: Impair{Loss: 0.01}, Seed: 7}, c)
	for i := range n {
		ch.Send(frame(uint64(i), 100))
	}
	s.Run()
	lost := ch.Stats().ImpairDrops
	sigma := math.Sqrt(n * 0.01 * 0.99)
	if math.Abs(float64(lost)-n*0.01) > 4*sigma || uint64(len(c.got))+lost != n {
		t.Fatalf("lost %d of %d (want 1%% ± 4σ = %.0f), delivered %d", lost, n, 4*sigma, len(c.got))
	}

	// The limit counts frames in the delay line.
	s = sched.New()
	c = &collector{s: s}
	ch = NewChannel(s, ChannelConfig{Rate: units.Gbps, Impair: Impair{Delay: time.Millisecond, Limit: 10}}, c)
	for i := range 20 {
		ch.Send(frame(uint64(i), 1000))
	}
	s.Run()
	// 20 frames of 8.256 µs each leave within 165 µs, all inside the 1 ms delay.
	if st := ch.Stats(); st.LimitDrops != 10 || len(c.got) != 10 {
		t.Fatalf("limit 10: %d limit drops, %d delivered", st.LimitDrops, len(c.got))
	}
}

func TestImpairJitterKeepsOrder(t *testing.T) {
	s := sched.New()
	c := &collector{s: s}
	im := Impair{Delay: time.Millisecond, Jitter: 500 * us}
	ch := NewChannel(s, ChannelConfig{Rate: units.Gbps, Impair: im, Seed: 1}, c)
	for i := range 1000 {
		ch.Send(frame(uint64(i), 1514))
	}
	s.Run()
	var prev time.Duration
	for i, a := range c.got {
		sent := units.Gbps.TxTime(int64(i)*1538*8 + 1526*8)
		if a.id != uint64(i) || a.at < prev || a.at < sent+im.Delay-im.Jitter || a.at > max(sent+im.Delay+im.Jitter, prev) {
			t.Fatalf("frame %d (id %d) at %v after %v: out of order or outside delay ± jitter", i, a.id, a.at, prev)
		}
		prev = a.at
	}
}

// TestImpairDefaultLimit: a delay of an hour at line rate holds netem's
// default 1000 frames, not an hour of traffic (607 MB in 40 s before), and
// counts the rest as limit drops.
func TestImpairDefaultLimit(t *testing.T) {
	s := sched.New()
	c := &collector{s: s}
	ch := NewChannel(s, ChannelConfig{Rate: 100 * units.Mbps, QueueFrames: 64, Impair: Impair{Delay: time.Hour}}, c)
	const n, slot = 10000, 123040 * time.Nanosecond // a 1514-byte frame's 1538 octets at 100M
	for i := range n {
		s.At(time.Duration(i)*slot, func() { ch.Send(frame(uint64(i), 1514)) })
	}
	s.RunUntil(n * slot)
	if st := ch.Stats(); st.TxFrames != n || st.LimitDrops != n-DefaultLimit || st.QueueDrops != 0 || st.Delivered != 0 || ch.pipe.Len() != DefaultLimit || s.Pending() != 1 {
		t.Fatalf("after %v: %+v, %d in the pipe, %d events pending; want %d sent, %d limit drops, %d in the pipe and one timer", s.Now(), st, ch.pipe.Len(), s.Pending(), n, n-DefaultLimit, DefaultLimit)
	}
	s.Run()
	if st := ch.Stats(); st.Delivered != DefaultLimit || len(c.got) != DefaultLimit {
		t.Fatalf("delivered %d, want %d", st.Delivered, DefaultLimit)
	}
	first, last := c.got[0], c.got[DefaultLimit-1]
	if first.id != 0 || first.at != time.Hour+122080*time.Nanosecond || last.id != DefaultLimit-1 || last.at != time.Hour+(DefaultLimit-1)*slot+122080*time.Nanosecond {
		t.Fatalf("first %+v, last %+v", first, last)
	}
}

// A channel whose pipe is full, dropping every frame at its limit, and
// one losing every frame, and a full queue, give the pooled frames they
// drop back to their pool: a host sending into an hour-long delay at line
// rate allocates nothing per frame once the pipe is full (before, each
// dropped frame's 2 KiB buffer went to the collector: 18 MB a second at
// 100M). Only a frame that reaches the far end is its receiver's.
func TestChannelDropsReleased(t *testing.T) {
	const slot = 123040 * time.Nanosecond // a 1514-byte frame's 1538 octets at 100M
	for _, tc := range []struct {
		name   string
		cfg    ChannelConfig
		offer  time.Duration // between two frames offered
		counts func(ChannelStats) uint64
	}{
		{"limit", ChannelConfig{Rate: 100 * units.Mbps, QueueFrames: 64, Impair: Impair{Delay: time.Hour}}, slot,
			func(st ChannelStats) uint64 { return st.LimitDrops }},
		{"loss", ChannelConfig{Rate: 100 * units.Mbps, Impair: Impair{Loss: 1}}, slot,
			func(st ChannelStats) uint64 { return st.ImpairDrops }},
		{"queue", ChannelConfig{Rate: 100 * units.Mbps, QueueFrames: 64}, slot / 2,
			func(st ChannelStats) uint64 { return st.QueueDrops }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := sched.New()
			var p Pool
			released := ReceiverFunc(func(f *Frame) { f.Release() }) // the host's TAP write
			ch := NewChannel(s, tc.cfg, released)
			at := time.Duration(0)
			send := func() {
				at += tc.offer
				s.RunUntil(at)
				ch.Send(p.Get(1514))
			}
			for range 2 * DefaultLimit {
				send() // the pipe full, the queue at its limit, the pool grown
			}
			before := tc.counts(ch.Stats())
			const n = 1000
			if got := allocs.Count(n, send); got != 0 {
				t.Errorf("%v allocations in %d frames: want 0", got, n)
			}
			if d := tc.counts(ch.Stats()) - before; d < allocs.Tries*n/2 {
				t.Errorf("%d frames dropped in %d sent: the path measured is not the drop", d, allocs.Tries*n)
			}
		})
	}
}

// TestImpairHugeJitter: jitter of 1281023h or more panicked (2*jitter
// overflowed Int64N's argument); any jitter keeps delivery times in order
// and never before the frame left.
func TestImpairHugeJitter(t *testing.T) {
	for _, j := range []time.Duration{1281023 * time.Hour, math.MaxInt64} {
		s := sched.New()
		c := &collector{s: s}
		ch := NewChannel(s, ChannelConfig{Rate: units.Gbps, Impair: Impair{Delay: time.Hour, Jitter: j}, Seed: 3}, c)
		for i := range 20 {
			ch.Send(frame(uint64(i), 100))
		}
		s.Run()
		if len(c.got) != 20 {
			t.Fatalf("jitter %v: delivered %d of 20", j, len(c.got))
		}
		for i, a := range c.got {
			if a.id != uint64(i) || a.at <= 0 || i > 0 && a.at < c.got[i-1].at {
				t.Fatalf("jitter %v: frame %d (id %d) at %v after %v", j, i, a.id, a.at, c.got[max(i-1, 0)].at)
			}
		}
	}
}
