package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/atmlab/atmlab/backend/linux"
	"github.com/atmlab/atmlab/internal/clihelp"
	"github.com/atmlab/atmlab/topologies/settings"
)

func newSet(opts *options) *cobra.Command {
	var direction string
	var reset bool
	c := &cobra.Command{
		Use:   "set NAME ENDPOINT key=value ... [--direction FROM] [--reset]",
		Short: "Change a running lab's link: rate, delay, jitter, loss, limit, a switch's buffer; an ATM link's cell delay and loss",
		Long:  clihelp.Text("set"),
		Args:  args(cobra.MinimumNArgs(2)),
		RunE: func(cmd *cobra.Command, a []string) error {
			ch, err := settings.ParseChange(a[2:]) // a bad word is said before the lab is looked for
			if err != nil {
				return err
			}
			if err := linux.AsLabUser(a[0]); err != nil {
				return err
			}
			ch.Reset = reset
			if len(a) == 2 && !reset {
				return fmt.Errorf("nothing to change: give key=value settings, such as delay=20ms, or --reset")
			}
			rec, err := linux.Set(cmd.Context(), a[0], a[1], direction, ch)
			if err != nil {
				return err
			}
			if opts.output == "json" {
				return printJSON(cmd.OutOrStdout(), rec)
			}
			for _, d := range rec.Directions {
				fmt.Fprintln(cmd.OutOrStdout(), d)
			}
			return nil
		},
	}
	c.Flags().StringVar(&direction, "direction", "", "change only the direction this endpoint sends (default both)")
	c.Flags().BoolVar(&reset, "reset", false, "return the link to the lab file's settings (then apply any settings given)")
	return c
}
