package main

import (
	"context"
	"errors"

	"github.com/spf13/cobra"

	"github.com/atmlab/atmlab/backend/cut"
	"github.com/atmlab/atmlab/backend/linux"
	"github.com/atmlab/atmlab/harness/clock"
	"github.com/atmlab/atmlab/internal/clihelp"
	"github.com/atmlab/atmlab/placement"
	"github.com/atmlab/atmlab/web"
)

func newUp(opts *options) *cobra.Command {
	fg := linux.Foreground{Loop: linux.DefaultLoop}
	var clockFlag, on string
	var view web.Live
	c := &cobra.Command{
		Use:   "up FILE",
		Short: "Build a lab and run its emulator in the foreground",
		Long:  clihelp.Text("up"),
		Args:  args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, a []string) error {
			if on != "" {
				return placement.Run(cmd.Context(), a[0], on, true, cmd.OutOrStdout())
			}
			if err := refuseVirtualUp(clockFlag); err != nil {
				return err
			}
			if err := errors.Join(view.Check(), fg.Part.Check()); err != nil {
				return err
			}
			fg.Out, fg.Log = cmd.OutOrStdout(), cmd.ErrOrStderr()
			fg.View = func(ctx context.Context, src linux.Source) (string, error) {
				_, url, err := view.Start(ctx, fg.Out, src)
				return url, err
			}
			return fg.Up(cmd.Context(), a[0])
		},
	}
	c.Flags().DurationVar(&fg.Loop.Spin, "spin", fg.Loop.Spin, "waits shorter than this are busy-polled, not slept (timer wake-ups are ~50µs late here)")
	c.Flags().DurationVar(&fg.Loop.Linger, "linger", fg.Loop.Linger, "after a release with nothing scheduled, poll this long for the host's answer before sleeping")
	c.Flags().DurationVar(&fg.Loop.IdleSpin, "idle-spin", fg.Loop.IdleSpin, "after the last frame, poll this long, yielding the core to any host that wants it, before sleeping, so the next frame finds the loop awake")
	c.Flags().BoolVar(&fg.Loop.KeepAwake, "keep-cpus-awake", false, "keep every CPU from going idle while the lab is up (one SCHED_IDLE thread per CPU, yielding in a loop; anything else runs first), so that a frame after a quiet spell wakes no halted CPU: pings seconds apart read close to a veth pair's, at the cost of every CPU, to the hypervisor, for as long as the lab is up (docs/how-it-works.md)")
	c.Flags().StringVar(&clockFlag, "clock", clock.Real.String(), "real only: a virtual-time lab has no real hosts to attach to (see lab run --clock)")
	addWebFlags(c, &view)
	c.Flags().StringVar(&on, "on", "", "local, slurm or kubernetes: bring every part of a split lab (parts:) up there, as one (docs/split.md)")
	c.Flags().StringVar(&fg.Part.Name, "part", "", "run only this part of a split lab (its parts:), its cut links joined to the other parts' instances over UDP")
	c.Flags().StringVar(&fg.Part.Listen, "cut-listen", "", "with --part: HOST:PORT of this part's cut socket (UDP)")
	c.Flags().StringArrayVar(&fg.Part.Peers, "cut-peer", nil, "with --part: PART=HOST:PORT of another part's cut socket, for each part it has a cut link to (or several joined by commas)")
	c.Flags().DurationVar(&fg.Part.Wait, "cut-wait", cut.DefaultWait, "with --part: how long to wait for every peer to answer")
	c.Flags().StringVar(&fg.Profile, "cpuprofile", "", "write the emulator's CPU profile to this file (go tool pprof reads it)")
	return c
}
