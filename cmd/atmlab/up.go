package main

import (
	"github.com/spf13/cobra"

	"github.com/atmlab/atmlab/internal/clihelp"
	"github.com/atmlab/atmlab/topologies"
)

func newUp(opts *options) *cobra.Command {
	loop := defaultLoop
	var profile, clock string
	var view webFlags
	c := &cobra.Command{
		Use:   "up FILE",
		Short: "Build a lab and run its emulator in the foreground",
		Long:  clihelp.Text("up"),
		Args:  args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, a []string) error {
			if err := refuseVirtualUp(clock); err != nil {
				return err
			}
			if err := needsKernel("up"); err != nil {
				return err
			}
			if err := view.check(); err != nil {
				return err
			}
			lab, err := topologies.Load(a[0])
			if err != nil {
				return err
			}
			if !inHolder() { // a holder's child runs this command again
				printWarnings(cmd.ErrOrStderr(), lab)
			}
			if needsHolder() {
				return runHolder(lab)
			}
			return runUp(cmd, lab, loop, profile, view)
		},
	}
	c.Flags().DurationVar(&loop.spin, "spin", loop.spin, "waits shorter than this are busy-polled, not slept (timer wake-ups are ~50µs late here)")
	c.Flags().DurationVar(&loop.linger, "linger", loop.linger, "after a release with nothing scheduled, poll this long for the host's answer before sleeping")
	c.Flags().DurationVar(&loop.idleSpin, "idle-spin", loop.idleSpin, "after the last frame, poll this long, yielding the core to any host that wants it, before sleeping, so the next frame finds the loop awake")
	c.Flags().StringVar(&clock, "clock", "real", "real only: a virtual-time lab has no real hosts to attach to (see lab run --clock)")
	view.add(c)
	c.Flags().StringVar(&profile, "cpuprofile", "", "write the emulator's CPU profile to this file (go tool pprof reads it)")
	return c
}
