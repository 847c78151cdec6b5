package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/atmlab/atmlab/emulator/ether"
	"github.com/atmlab/atmlab/emulator/units"
	"github.com/atmlab/atmlab/internal/clihelp"
)

func newSim(opts *options) *cobra.Command {
	sim := &cobra.Command{
		Use:   "sim",
		Short: "Run atmlab's models in virtual time, without root or TAPs",
	}
	sim.AddCommand(newSimCSMA(opts))
	return sim
}

func newSimCSMA(opts *options) *cobra.Command {
	var (
		stations, frame, window int
		rate                    string
		duration                time.Duration
		seed                    uint64
	)
	c := &cobra.Command{
		Use:   "csma",
		Short: "Saturated stations on a CSMA/CD hub: utilisation, collisions, drops, capture",
		Long:  clihelp.Text("sim-csma"),
		Args:  args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			r, err := units.ParseRate(rate)
			if err != nil {
				return usageError{fmt.Errorf("--rate: %w", err)}
			}
			if frame < 64 || frame > 1518 {
				return usageError{fmt.Errorf("--frame %d: use 64..1518 bytes (destination address to FCS)", frame)}
			}
			if stations < 1 {
				return usageError{fmt.Errorf("--stations %d: use at least 1", stations)}
			}
			cfg := ether.SimConfig{Stations: stations, Frame: frame, Rate: r, Duration: duration, Seed: seed, Window: window}
			var res ether.SimResult
			err = interruptible(cmd.Context(), func() (err error) {
				res, err = ether.Simulate(cfg)
				return err
			})
			if err != nil {
				return err
			}
			if opts.output == "json" {
				return printJSON(cmd.OutOrStdout(), res)
			}
			res.WriteText(cmd.OutOrStdout(), cfg)
			return nil
		},
	}
	f := c.Flags()
	f.IntVar(&stations, "stations", 2, "saturated stations")
	f.IntVar(&frame, "frame", 1518, "frame size in bytes, destination address to FCS")
	f.StringVar(&rate, "rate", "100M", "line rate")
	f.DurationVar(&duration, "duration", 10*time.Second, "simulated time")
	f.Uint64Var(&seed, "seed", 1, "random seed")
	f.IntVar(&window, "window", 0, "one-way delay between stations in bit times (0: a small hub)")
	return c
}
