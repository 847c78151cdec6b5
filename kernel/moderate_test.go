package kernel

import (
	"slices"
	"testing"
	"time"

	"github.com/atmlab/atmlab/emulator"
	"github.com/atmlab/atmlab/emulator/sched"
)

// TestModerator pins interrupt moderation in model time: a frame after a
// quiet spell goes at once; frames less than ModerateGap apart wait until
// GROHold after the first that waited, or until NAPIBudget wait; a TCP
// frame makes the port busy without waiting itself.
func TestModerator(t *testing.T) {
	us := time.Microsecond
	for _, tc := range []struct {
		name   string
		arrive []time.Duration // a frame reaches the port at each
		tcp    map[int]bool    // which of them pass (TCP), as the loop's sinks do
		want   []time.Duration // when each is handed to the host, in order
	}{
		{"quiet spells: each at once", []time.Duration{0, 60 * us, 200 * us}, nil,
			[]time.Duration{0, 60 * us, 200 * us}},
		{"a burst: the first at once, the rest at the hold's end",
			[]time.Duration{0, 12 * us, 24 * us, 36 * us, 300 * us}, nil,
			[]time.Duration{0, 112 * us, 112 * us, 112 * us, 300 * us}},
		{"49 µs is busy, 50 is not", []time.Duration{0, 49 * us, 99 * us, 400 * us, 450 * us}, nil,
			[]time.Duration{0, 149 * us, 149 * us, 400 * us, 450 * us}},
		{"after TCP, busy", []time.Duration{0, 10 * us}, map[int]bool{0: true},
			[]time.Duration{0, 110 * us}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := sched.New()
			var got []time.Duration
			m := newModerator(s, func(f *emulator.Frame) { got = append(got, s.Now()) })
			for i, at := range tc.arrive {
				s.At(at, func() {
					f := &emulator.Frame{Data: make([]byte, 34)}
					if tc.tcp[i] {
						f.Data[12], f.Data[23] = 0x08, 6
					}
					if !m.sink(f) {
						got = append(got, s.Now()) // the caller's own TCP path
					}
				})
			}
			s.Run()
			if !slices.Equal(got, tc.want) {
				t.Errorf("handed over at %v, want %v", got, tc.want)
			}
		})
	}

	// A flood: every NAPIBudget-th held frame ends the batch at once.
	s := sched.New()
	var got []time.Duration
	m := newModerator(s, func(f *emulator.Frame) { got = append(got, s.Now()) })
	for i := range 1 + 2*NAPIBudget {
		s.At(time.Duration(i)*100*time.Nanosecond, func() { m.deliver(&emulator.Frame{}) })
	}
	s.Run()
	first := time.Duration(NAPIBudget) * 100 * time.Nanosecond // the 65th frame's arrival
	want := []time.Duration{0}
	for i := range 2 * NAPIBudget {
		want = append(want, first+time.Duration(i/NAPIBudget)*first)
	}
	if !slices.Equal(got, want) {
		t.Errorf("a flood handed over at %v, want %v", got, want)
	}
}

func TestIsTCP(t *testing.T) {
	v4 := func(proto byte) []byte { f := make([]byte, 34); f[12], f[13], f[23] = 0x08, 0, proto; return f }
	v6 := func(next byte) []byte { f := make([]byte, 54); f[12], f[13], f[20] = 0x86, 0xdd, next; return f }
	arp := make([]byte, 42)
	arp[12], arp[13] = 0x08, 0x06
	for _, tc := range []struct {
		name  string
		frame []byte
		want  bool
	}{
		{"IPv4 TCP", v4(6), true}, {"IPv4 UDP", v4(17), false}, {"IPv4 ICMP", v4(1), false},
		{"IPv6 TCP", v6(6), true}, {"IPv6 UDP", v6(17), false},
		{"ARP", arp, false}, {"runt", []byte{1, 2, 3}, false},
	} {
		if got := isTCP(tc.frame); got != tc.want {
			t.Errorf("%s: isTCP %v, want %v", tc.name, got, tc.want)
		}
	}
}
