package main

import (
	"context"
	"fmt"
	"os"
	"runtime/pprof"
	"time"

	"github.com/spf13/cobra"

	"github.com/atmlab/atmlab/kernel"
	"github.com/atmlab/atmlab/topologies"
)

func newUp(opts *options) *cobra.Command {
	spin, linger, idleSpin := kernel.DefaultSpin, kernel.DefaultLinger, kernel.DefaultIdleSpin
	var profile, clock string
	var view webFlags
	c := &cobra.Command{
		Use:   "up FILE",
		Short: "Build a lab and run its emulator in the foreground",
		Long: "Build a lab: a network namespace per host (<lab>-<node>), a TAP per host interface,\n" +
			"and the emulated network between them. Prints a line containing \"ready\" when traffic\n" +
			"can flow, runs until SIGINT or SIGTERM, then removes everything it made.\n\n" +
			"Example:\n  atmlab up topologies/sw100.yaml &\n  atmlab exec sw100 h1 -- ping -c 3 10.0.0.2",
		Args: args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, a []string) error {
			if err := refuseVirtualUp(clock); err != nil {
				return err
			}
			if err := view.check(); err != nil {
				return err
			}
			lab, err := topologies.Load(a[0])
			if err != nil {
				return err
			}
			if !kernel.InHolder() { // a holder's child runs this command again
				printWarnings(cmd.ErrOrStderr(), lab)
			}
			if kernel.NeedsHolder() {
				return runHolder(lab)
			}
			if profile != "" {
				f, err := os.Create(profile)
				if err != nil {
					return err
				}
				defer f.Close()
				if err := pprof.StartCPUProfile(f); err != nil {
					return err
				}
				defer pprof.StopCPUProfile()
			}
			k, err := kernel.Up(lab)
			if err != nil {
				return err
			}
			defer k.Close()
			k.Loop.Spin, k.Loop.Linger, k.Loop.IdleSpin = spin, linger, idleSpin
			k.Events = cmd.ErrOrStderr()
			for _, n := range k.Notes {
				fmt.Fprintf(cmd.ErrOrStderr(), "note: %s\n", n)
			}
			webCtx, stopWeb := context.WithCancel(cmd.Context())
			defer stopWeb()
			if _, err := view.start(webCtx, cmd.OutOrStdout(), inProcess{k}); err != nil {
				return err
			}
			hosts := len(k.Namespaces())
			fmt.Fprintf(cmd.OutOrStdout(), "lab %s ready: %d hosts, %d links; atmlab exec %s NODE -- CMD to use it, Ctrl-C to stop\n",
				lab.Name, hosts, len(lab.Links), lab.Name)
			runErr := k.Run(cmd.Context())
			st := k.Loop.Stats()
			fmt.Fprintf(cmd.ErrOrStderr(), "lab %s stopping after %v: emulator CPU %.0f%%, release lateness p50 %v p99 %v max %v\n",
				lab.Name, st.Uptime.Round(time.Millisecond), 100*st.CPU, st.Lateness.P50, st.Lateness.P99, st.Lateness.Max)
			if err := k.Close(); err != nil {
				return fmt.Errorf("tear down %s: %w", lab.Name, err)
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "lab %s removed\n", lab.Name)
			return runErr
		},
	}
	c.Flags().DurationVar(&spin, "spin", spin, "waits shorter than this are busy-polled, not slept (timer wake-ups are ~50µs late here)")
	c.Flags().DurationVar(&linger, "linger", linger, "after a release with nothing scheduled, poll this long for the host's answer before sleeping")
	c.Flags().DurationVar(&idleSpin, "idle-spin", idleSpin, "after the last frame, poll this long at idle priority (hosts preempt it) before sleeping, so the next frame finds the loop awake")
	c.Flags().StringVar(&clock, "clock", "real", "real only: a virtual-time lab has no real hosts to attach to (see lab run --clock)")
	view.add(c)
	c.Flags().StringVar(&profile, "cpuprofile", "", "write the emulator's CPU profile to this file (go tool pprof reads it)")
	return c
}
