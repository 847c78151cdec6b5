package emulator

import (
	"testing"
	"time"

	"github.com/atmlab/atmlab/emulator/sched"
	"github.com/atmlab/atmlab/emulator/units"
)

// run sends frames of n bytes at the given times, applies the changes at
// theirs, and returns what arrived.
func runChanges(t *testing.T, cfg ChannelConfig, n int, sends []time.Duration, changes map[time.Duration]func(*ChannelConfig)) (*Channel, []arrival) {
	t.Helper()
	s := sched.New()
	c := &collector{s: s}
	ch := NewChannel(s, cfg, c)
	for i, at := range sends {
		s.At(at, func() { ch.Send(frame(uint64(i), n)) })
	}
	for at, f := range changes {
		s.At(at, func() {
			cfg := ch.Config()
			f(&cfg)
			ch.SetConfig(cfg)
		})
	}
	s.Run()
	return ch, c.got
}

func wantArrivals(t *testing.T, got []arrival, want []time.Duration) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("delivered %d frames, want %d: %v", len(got), len(want), got)
	}
	for i, w := range want {
		if got[i].id != uint64(i) || got[i].at != w {
			t.Errorf("arrival %d: frame %d at %v, want frame %d at %v", i, got[i].id, got[i].at, i, w)
		}
	}
}

// A rate change lets the frame in service finish at the old rate; the next
// starts after its gap, at the new rate.
func TestSetRateMidFrame(t *testing.T) {
	ch, got := runChanges(t, ChannelConfig{Rate: 100 * units.Mbps}, 1514, []time.Duration{0, 0, 0},
		map[time.Duration]func(*ChannelConfig){50 * us: func(c *ChannelConfig) { c.Rate = 10 * units.Mbps }})
	// Frame 0: last bit at 1526 B x 80 ns, free at 1538 B x 80 ns = 123.04 µs.
	// Frames 1, 2 at 10M: 1526 B x 800 ns to the last bit, 1538 B a slot.
	wantArrivals(t, got, []time.Duration{122080, 123040 + 1220800, 123040 + 1230400 + 1220800})
	if st := ch.Stats(); st.TxFrames != 3 || st.Delivered != 3 || st.BusyTime != 123040+2*1230400 {
		t.Fatalf("stats %+v", st)
	}
}

// A rate change on an idle link times the next frame from its arrival, and
// one during the gap after a frame waits for the gap.
func TestSetRateIdleAndInGap(t *testing.T) {
	_, got := runChanges(t, ChannelConfig{Rate: 100 * units.Mbps}, 1514, []time.Duration{0, 122500, time.Millisecond + 2*time.Millisecond},
		map[time.Duration]func(*ChannelConfig){122300: func(c *ChannelConfig) { c.Rate = units.Gbps }})
	// Frame 1 arrives in frame 0's gap (which ends at 123.04 µs) and is
	// timed at 1G from there: 1526 B x 8 ns = 12.208 µs.
	wantArrivals(t, got, []time.Duration{122080, 123040 + 12208, 3*time.Millisecond + 12208})
}

// A longer delay applies to frames leaving after the change, as a longer
// cable; a shorter one never lets a later frame overtake an earlier one.
func TestSetDelayKeepsOrder(t *testing.T) {
	const ms = time.Millisecond
	// 0 -> 20 ms: frame 0 left before the change, frame 1 after.
	_, got := runChanges(t, ChannelConfig{Rate: 100 * units.Mbps}, 1514, []time.Duration{0, ms},
		map[time.Duration]func(*ChannelConfig){ms / 2: func(c *ChannelConfig) { c.Impair.Delay = 20 * ms }})
	wantArrivals(t, got, []time.Duration{122080, 21*ms + 122080})

	// 20 ms -> 0: frame 1 would arrive at 1.122 ms, before frame 0 (still in
	// flight until 20.122 ms); it arrives right behind it. Frame 2 leaves
	// after frame 0 arrived and sees no delay.
	ch, got := runChanges(t, ChannelConfig{Rate: 100 * units.Mbps, Impair: Impair{Delay: 20 * ms}}, 1514, []time.Duration{0, ms, 30 * ms},
		map[time.Duration]func(*ChannelConfig){ms / 2: func(c *ChannelConfig) { c.Impair.Delay = 0 }})
	wantArrivals(t, got, []time.Duration{20*ms + 122080, 20*ms + 122080, 30*ms + 122080})
	if st := ch.Stats(); st.Delivered != 3 || st.ImpairDrops != 0 {
		t.Fatalf("stats %+v", st)
	}

	// The cable's propagation changes the same way.
	_, got = runChanges(t, ChannelConfig{Rate: 100 * units.Mbps, Propagation: 5 * ms}, 1514, []time.Duration{0, ms},
		map[time.Duration]func(*ChannelConfig){ms / 2: func(c *ChannelConfig) { c.Propagation = 0 }})
	wantArrivals(t, got, []time.Duration{5*ms + 122080, 5*ms + 122080})
}

// Loss switched on and off on a link built without impairments; the
// counters run on across the changes.
func TestSetLoss(t *testing.T) {
	sends := make([]time.Duration, 30)
	for i := range sends {
		sends[i] = time.Duration(i) * time.Millisecond
	}
	ch, got := runChanges(t, ChannelConfig{Rate: 100 * units.Mbps}, 1000, sends, map[time.Duration]func(*ChannelConfig){
		9*time.Millisecond + 500*us:  func(c *ChannelConfig) { c.Impair.Loss = 1 },
		19*time.Millisecond + 500*us: func(c *ChannelConfig) { c.Impair = Impair{} },
	})
	if st := ch.Stats(); st.TxFrames != 30 || st.ImpairDrops != 10 || st.Delivered != 20 || len(got) != 20 {
		t.Fatalf("stats %+v, %d arrivals; want 10 of 30 lost", st, len(got))
	}
	for i, a := range got {
		want := uint64(i)
		if i >= 10 {
			want += 10
		}
		if a.id != want {
			t.Fatalf("arrival %d is frame %d, want %d", i, a.id, want)
		}
	}
}

// A raised frame limit wakes the reader upstream at once; a lowered byte
// limit drops nothing already queued and refuses what arrives above it.
func TestSetQueueLimits(t *testing.T) {
	s := sched.New()
	c := &collector{s: s}
	ch := NewChannel(s, ChannelConfig{Rate: 100 * units.Mbps, QueueFrames: 2}, c)
	var spaces []time.Duration
	ch.OnSpace = func() { spaces = append(spaces, s.Now()) }
	ch.Send(frame(0, 1514))
	ch.Send(frame(1, 1514))
	cfg := ch.Config()
	cfg.QueueFrames = 4
	ch.SetConfig(cfg)
	if len(spaces) != 1 || spaces[0] != 0 || !ch.Send(frame(2, 1514)) || !ch.Send(frame(3, 1514)) || ch.Send(frame(4, 1514)) {
		t.Fatalf("after raising the ring to 4: OnSpace at %v, queued %d", spaces, ch.Queued())
	}
	s.Run()
	if st := ch.Stats(); st.Delivered != 4 || st.QueueDrops != 1 {
		t.Fatalf("stats %+v", st)
	}

	s = sched.New()
	c = &collector{s: s}
	ch = NewChannel(s, ChannelConfig{Rate: 100 * units.Mbps, QueueBytes: 3000}, c)
	ch.Send(frame(0, 1500))
	ch.Send(frame(1, 1500))
	cfg = ch.Config()
	cfg.QueueBytes = 1000
	ch.SetConfig(cfg)
	if ch.Send(frame(2, 100)) {
		t.Fatal("a queue above its lowered limit took a frame")
	}
	s.Run()
	if len(c.got) != 2 || ch.Send(frame(3, 1000)) != true || ch.Send(frame(4, 1)) {
		t.Fatalf("delivered %d of the 2 queued; the emptied 1000-byte queue must take 1000 bytes, no more", len(c.got))
	}
}
