package ether

import (
	"fmt"
	"io"
	"time"

	"github.com/atmlab/atmlab/emulator"
	"github.com/atmlab/atmlab/emulator/sched"
	"github.com/atmlab/atmlab/emulator/units"
)

// SimConfig is a saturated-station CSMA/CD experiment in virtual time.
type SimConfig struct {
	Stations int
	Frame    int // destination address to FCS, 64..1518 bytes
	Rate     units.BitRate
	Duration time.Duration
	Seed     uint64
	Window   int // one-way delay between stations in bit times (0: a small hub)
	// Observe, if set, sees every transmission (for invariant checks).
	Observe func(Record)
}

// SimResult is what `atmlab sim csma` reports.
type SimResult struct {
	Stations             int      `json:"stations"`
	Frame                int      `json:"frame_bytes"`
	Rate                 string   `json:"rate"`
	Duration             string   `json:"duration"`
	Seed                 uint64   `json:"seed"`
	Utilization          float64  `json:"utilization"` // DA..FCS bits delivered / elapsed bit times
	CollisionsPerSuccess float64  `json:"collisions_per_success"`
	DroppedFraction      float64  `json:"dropped_fraction"` // frames dropped after 16 attempts / frames finished
	LongestRun           int      `json:"longest_run"`      // most consecutive successes by one station
	MeanRun              float64  `json:"mean_run"`
	Fairness             float64  `json:"fairness"` // Jain's index over stations' successes
	Successes            uint64   `json:"successes"`
	Collisions           uint64   `json:"collisions"`
	Drops                uint64   `json:"drops"`
	PerStation           []uint64 `json:"per_station"`
}

// Simulate runs saturated stations on one hub: each always has a frame of
// cfg.Frame bytes waiting.
func Simulate(cfg SimConfig) (SimResult, error) {
	if cfg.Stations < 1 || cfg.Frame < 64 || cfg.Frame > 1518 || cfg.Rate <= 0 || cfg.Duration <= 0 {
		return SimResult{}, fmt.Errorf("sim csma: need stations ≥ 1, frame 64..1518 bytes, a rate and a duration")
	}
	s := sched.New()
	h := NewHub(s, "hub", HubConfig{Rate: cfg.Rate, Repeater: cfg.Window, Seed: cfg.Seed})
	res := SimResult{Stations: cfg.Stations, Frame: cfg.Frame, Rate: cfg.Rate.String(), Duration: cfg.Duration.String(), Seed: cfg.Seed,
		PerStation: make([]uint64, cfg.Stations)}
	frame := &emulator.Frame{Data: make([]byte, cfg.Frame-emulator.EtherFCS)}
	var runs, runSum uint64
	last, run := -1, 0
	endRun := func() {
		if run > 0 {
			runs++
			runSum += uint64(run)
			res.LongestRun = max(res.LongestRun, run)
		}
	}
	h.Observe = func(r Record) {
		if cfg.Observe != nil {
			cfg.Observe(r)
		}
		if r.Collided {
			return
		}
		res.PerStation[r.Station]++
		if r.Station != last {
			endRun()
			last, run = r.Station, 0
		}
		run++
	}
	for i := range cfg.Stations {
		st := h.AddStation(fmt.Sprintf("s%d", i+1), 0, 1, 0, nil)
		st.SetOnSpace(func() { st.Send(frame) })
		st.Send(frame)
	}
	s.RunUntil(cfg.Duration)
	endRun()

	hs := h.Stats()
	res.Successes, res.Collisions = hs.Successes, hs.Collisions
	for _, st := range h.Stations() {
		res.Drops += st.drops
	}
	res.Utilization = float64(hs.FrameBits) / float64(cfg.Duration/h.bit)
	if hs.Successes > 0 {
		res.CollisionsPerSuccess = float64(hs.Collisions) / float64(hs.Successes)
	}
	if n := hs.Successes + res.Drops; n > 0 {
		res.DroppedFraction = float64(res.Drops) / float64(n)
	}
	if runs > 0 {
		res.MeanRun = float64(runSum) / float64(runs)
	}
	var sum, sq float64
	for _, n := range res.PerStation {
		sum += float64(n)
		sq += float64(n) * float64(n)
	}
	if sq > 0 {
		res.Fairness = sum * sum / (float64(cfg.Stations) * sq)
	}
	return res, nil
}

// WriteText prints the result as atmlab sim csma does, c its run.
func (r SimResult) WriteText(w io.Writer, c SimConfig) {
	fmt.Fprintf(w, "%d saturated stations, %d-byte frames, %v, %v simulated, seed %d, window %d bit times\n", c.Stations, c.Frame, c.Rate, c.Duration, c.Seed, c.Window)
	fmt.Fprintf(w, "utilisation             %.4f  (frame bits delivered / elapsed)\n", r.Utilization)
	fmt.Fprintf(w, "collisions per success  %.4f\n", r.CollisionsPerSuccess)
	fmt.Fprintf(w, "dropped after 16        %.3f%%\n", 100*r.DroppedFraction)
	fmt.Fprintf(w, "runs of one station     mean %.1f, longest %d (the capture effect)\n", r.MeanRun, r.LongestRun)
	fmt.Fprintf(w, "fairness (Jain)         %.3f\n", r.Fairness)
	fmt.Fprintf(w, "frames                  %d sent, %d collisions, %d dropped\n", r.Successes, r.Collisions, r.Drops)
}
