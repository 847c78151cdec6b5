package ether

import (
	"testing"
	"time"

	"github.com/atmlab/atmlab/emulator"
	"github.com/atmlab/atmlab/emulator/sched"
	"github.com/atmlab/atmlab/emulator/units"
)

type arrivals struct {
	s  *sched.Scheduler
	at []time.Duration
}

func (a *arrivals) Receive(*emulator.Frame) { a.at = append(a.at, a.s.Now()) }

// Exact times on a hub with a 100-bit-time window at 100M (1 µs).
func TestHubTiming(t *testing.T) {
	for _, tc := range []struct {
		name  string
		bSend time.Duration // when B gets its frame
		wantA []time.Duration
		wantB []time.Duration
	}{
		// A's 1514-byte frame: last bit 122.08 µs after it starts, at B 1 µs
		// later. B, given a frame after A's end but before A's carrier has
		// left B (122.58 µs), waits for the drop (123.08) and the gap
		// (0.96 µs), then sends: at A 1 µs after its last bit.
		{"defers to a carrier still on its way", 122580, []time.Duration{123080 + 960 + 122080 + 1000}, []time.Duration{123080}},
		// B gets its frame half a window after A started: it cannot sense A
		// yet, so both collide. A sees B at 1.5 µs, jams to 1.5+0.32; B sees A
		// at 1 µs but finishes its preamble (0.64 µs after 0.5) and jams.
		{"collides inside the window", 500, nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := sched.New()
			h := NewHub(s, "hub", HubConfig{Rate: 100 * units.Mbps, Repeater: 100, Seed: 1})
			ra, rb := &arrivals{s: s}, &arrivals{s: s}
			a := h.AddStation("a", 0, 4, 0, ra)
			b := h.AddStation("b", 0, 4, 0, rb)
			var recs []Record
			h.Observe = func(r Record) { recs = append(recs, r) }
			a.Send(&emulator.Frame{Data: make([]byte, 1514)})
			s.At(tc.bSend, func() { b.Send(&emulator.Frame{Data: make([]byte, 1514)}) })
			s.RunUntil(10 * time.Millisecond)
			if tc.wantB != nil {
				if len(ra.at) != 1 || len(rb.at) != 1 || rb.at[0] != tc.wantB[0] || ra.at[0] != tc.wantA[0] {
					t.Fatalf("A received at %v (want %v), B at %v (want %v)", ra.at, tc.wantA, rb.at, tc.wantB)
				}
				return
			}
			if len(recs) < 2 || !recs[0].Collided || !recs[1].Collided {
				t.Fatalf("records %+v: want a collision first", recs)
			}
			ends := map[int]time.Duration{recs[0].Station: recs[0].End, recs[1].Station: recs[1].End}
			if ends[0] != 1500+320 || ends[1] != 500+640+320 {
				t.Fatalf("jam ends %v, want A at 1.82 µs and B at 1.46 µs", ends)
			}
			if len(ra.at) != 1 || len(rb.at) != 1 {
				t.Fatalf("after backoff both frames should arrive: A got %d, B got %d", len(ra.at), len(rb.at))
			}
		})
	}
}
