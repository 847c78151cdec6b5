package ether

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/atmlab/atmlab/emulator/units"
)

// The reference BEB simulation of docs/reference.md §6.2
// (τ = 0, saturated stations): utilisation and collisions per success.
func TestSimAgainstReferenceTable(t *testing.T) {
	for _, tc := range []struct {
		frame, q   int
		util, cps  float64
		utilTol    float64
		simulated  time.Duration
		mbLowBound float64 // Metcalfe & Boggs with preamble and gap charged (§6.1)
	}{
		{64, 2, 0.759, 0.006, 0.05, 4 * time.Second, 0.432},
		{64, 5, 0.751, 0.024, 0.05, 4 * time.Second, 0.363},
		{64, 10, 0.738, 0.056, 0.05, 4 * time.Second, 0.346},
		{64, 24, 0.698, 0.161, 0.05, 4 * time.Second, 0.336},
		{1518, 2, 0.984, 0.098, 0.02, 20 * time.Second, 0.948},
		{1518, 5, 0.976, 0.354, 0.02, 20 * time.Second, 0.931},
		{1518, 10, 0.967, 0.661, 0.02, 20 * time.Second, 0.926},
		{1518, 24, 0.955, 1.077, 0.02, 20 * time.Second, 0.923},
	} {
		r, err := Simulate(SimConfig{Stations: tc.q, Frame: tc.frame, Rate: 100 * units.Mbps, Duration: tc.simulated, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(r.Utilization-tc.util) > tc.util*tc.utilTol {
			t.Errorf("%d B, Q=%d: utilisation %.4f, table %.3f ± %.0f%%", tc.frame, tc.q, r.Utilization, tc.util, 100*tc.utilTol)
		}
		if math.Abs(r.CollisionsPerSuccess-tc.cps) > 0.3*tc.cps {
			t.Errorf("%d B, Q=%d: %.4f collisions per success, table %.3f ± 30%%", tc.frame, tc.q, r.CollisionsPerSuccess, tc.cps)
		}
		if mb := metcalfeBoggs(tc.frame, tc.q); math.Abs(mb-tc.mbLowBound) > 0.001 || r.Utilization < mb {
			t.Errorf("%d B, Q=%d: utilisation %.4f below the Metcalfe–Boggs bound %.3f (table %.3f)", tc.frame, tc.q, r.Utilization, mb, tc.mbLowBound)
		}
		if r.Fairness < 0.9 {
			t.Errorf("%d B, Q=%d: Jain fairness %.3f; long-run sharing should stay fair", tc.frame, tc.q, r.Fairness)
		}
	}
}

// metcalfeBoggs is E' = P / (P + 160 + W·512) with W = (1 − A)/A and
// A = (1 − 1/Q)^(Q−1): P frame bits, 160 bits of preamble and gap.
func metcalfeBoggs(frame, q int) float64 {
	a := math.Pow(1-1/float64(q), float64(q-1))
	w := (1 - a) / a
	p := float64(frame * 8)
	return p / (p + 160 + w*512)
}

// With two stations and short frames, one station keeps the medium for long
// runs: the capture effect (reference: mean run 2800, max 6135 frames).
func TestSimCaptureEffect(t *testing.T) {
	r, _ := Simulate(SimConfig{Stations: 2, Frame: 64, Rate: 100 * units.Mbps, Duration: 4 * time.Second, Seed: 3})
	// Fair alternation would give runs of about two frames.
	if r.MeanRun < 500 || r.LongestRun < 2000 {
		t.Errorf("Q=2, 64 B: mean run %.0f, longest %d; want the capture effect's runs of thousands", r.MeanRun, r.LongestRun)
	}
	r, _ = Simulate(SimConfig{Stations: 24, Frame: 1518, Rate: 100 * units.Mbps, Duration: 10 * time.Second, Seed: 3})
	if r.MeanRun > 20 {
		t.Errorf("Q=24, 1518 B: mean run %.1f, want short runs (table: 5.5)", r.MeanRun)
	}
}

func TestSimDeterministic(t *testing.T) {
	cfg := SimConfig{Stations: 5, Frame: 512, Rate: 10 * units.Mbps, Duration: 2 * time.Second, Seed: 42}
	a, _ := Simulate(cfg)
	b, _ := Simulate(cfg)
	if !slices.Equal(a.PerStation, b.PerStation) || a.Collisions != b.Collisions {
		t.Fatalf("same seed, different results: %v/%d vs %v/%d", a.PerStation, a.Collisions, b.PerStation, b.Collisions)
	}
	cfg.Seed = 43
	if c, _ := Simulate(cfg); slices.Equal(a.PerStation, c.PerStation) && a.Collisions == c.Collisions {
		t.Fatal("another seed gave the very same run")
	}
	if _, err := Simulate(SimConfig{Stations: 2, Frame: 2000, Rate: units.Gbps, Duration: time.Second}); err == nil {
		t.Fatal("a 2000-byte frame was accepted")
	}
}

// 802.3's rules hold over long randomised runs: successes never overlap,
// every start follows a quiet gap, backoffs lie in range, and the 16th
// collision drops the frame.
func TestSimInvariants(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	for run := range 12 {
		cfg := SimConfig{
			Stations: 2 + rng.IntN(23),
			Frame:    64 + rng.IntN(1455),
			Rate:     []units.BitRate{10 * units.Mbps, 100 * units.Mbps}[rng.IntN(2)],
			Duration: 200 * time.Millisecond,
			Seed:     rng.Uint64(),
			Window:   rng.IntN(200),
		}
		var recs []Record
		cfg.Observe = func(r Record) { recs = append(recs, r) }
		res, err := Simulate(cfg)
		if err != nil {
			t.Fatal(err)
		}
		// Liveness: saturated stations keep the medium busy. A station that
		// waits for a carrier drop nobody tells it of leaves it idle.
		frameTime := cfg.Rate.TxTime(int64(8 * (cfg.Frame + 20)))
		if ideal := float64(cfg.Duration) / float64(frameTime); float64(res.Successes) < 0.4*ideal {
			t.Fatalf("run %d (%d stations, %d B, window %d): %d frames in %v, ideal %.0f: the medium stalled", run, cfg.Stations, cfg.Frame, cfg.Window, res.Successes, cfg.Duration, ideal)
		}
		bit := cfg.Rate.TxTime(1)
		gap, slot, tau := GapBits*bit, SlotBits*bit, time.Duration(cfg.Window)*bit
		slices.SortFunc(recs, func(a, b Record) int { return int(a.Start - b.Start) })
		var lastSuccess *Record
		lastOwn := map[int]Record{}
		drops := 0
		for i := range recs {
			r := &recs[i]
			if !r.Collided {
				if lastSuccess != nil && r.Start < lastSuccess.End+gap {
					t.Fatalf("run %d (%+v): success at %v starts %v after the previous success ended", run, cfg, r.Start, r.Start-lastSuccess.End)
				}
				lastSuccess = r
			}
			// Carrier from every other station, as this station sees it,
			// must have been off for the whole gap before it started.
			for j := i - 1; j >= 0 && j >= i-4*cfg.Stations; j-- {
				o := recs[j]
				if o.Station != r.Station && o.Start+tau < r.Start && o.End+tau > r.Start-gap {
					t.Fatalf("run %d: station %d started at %v within the gap after station %d's carrier (%v-%v, τ %v)", run, r.Station, r.Start, o.Station, o.Start, o.End, tau)
				}
			}
			if prev, ok := lastOwn[r.Station]; ok {
				wait := gap
				if prev.Backoff > 0 {
					wait = time.Duration(prev.Backoff) * slot
				}
				if r.Start < prev.End+wait {
					t.Fatalf("run %d: station %d restarted %v after its last end, want at least %v", run, r.Station, r.Start-prev.End, wait)
				}
			}
			lastOwn[r.Station] = *r
			if r.Collided && !r.Late {
				if r.Dropped != (r.Attempt == AttemptLimit) {
					t.Fatalf("run %d: collision on attempt %d, dropped=%v", run, r.Attempt, r.Dropped)
				}
				if !r.Dropped && (r.Backoff < 0 || r.Backoff >= 1<<min(r.Attempt, BackoffLimit)) {
					t.Fatalf("run %d: backoff %d after collision %d", run, r.Backoff, r.Attempt)
				}
			}
			if r.Dropped {
				drops++
			}
		}
		if len(recs) == 0 {
			t.Fatalf("run %d: nothing was sent", run)
		}
	}
}

// BenchmarkSim24 measures simulated frames per second of CPU for 24
// saturated stations with 1518-byte frames.
func BenchmarkSim24(b *testing.B) {
	var frames uint64
	for b.Loop() {
		r, _ := Simulate(SimConfig{Stations: 24, Frame: 1518, Rate: 100 * units.Mbps, Duration: time.Second, Seed: 1})
		frames += r.Successes
	}
	b.ReportMetric(float64(frames)/b.Elapsed().Seconds(), "frames/s")
}
