package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/atmlab/atmlab/topologies/settings"
)

func newSet(opts *options) *cobra.Command {
	var direction string
	var reset bool
	c := &cobra.Command{
		Use:   "set NAME ENDPOINT key=value ... [--direction FROM] [--reset]",
		Short: "Change a running lab's link: rate, delay, jitter, loss, limit, a switch's buffer; an ATM link's cell delay and loss",
		Long: "Change the link that has ENDPOINT while traffic runs, at the emulator's current time:\n" +
			"nothing queued or in flight is lost or reordered and the counters keep counting. A new\n" +
			"delay applies to frames that enter the link after it, as a cable of a new length.\n" +
			"Settings, each within the lab file's range:\n" + settingsHelp() +
			"Both directions unless --direction names the sending end. --reset returns to the lab\n" +
			"file's settings first.\n" +
			"On an ATM link: delay, jitter and loss (each cell's loss ratio) apply to the cells queued\n" +
			"after the change; its rate is its PHY's.\n" +
			"Each change is written to up's output and listed by atmlab stats.\n\n" +
			"Example:\n  atmlab set sw100 h1:eth0 delay=20ms\n  atmlab set sw100 h1:eth0 rate=10M --direction sw1:p1\n  atmlab set sw100 h1:eth0 --reset",
		Args: args(cobra.MinimumNArgs(2)),
		RunE: func(cmd *cobra.Command, a []string) error {
			ch, err := settings.ParseChange(a[2:]) // a bad word is said before the lab is looked for
			if err != nil {
				return err
			}
			if err := asLabUser(a[0]); err != nil {
				return err
			}
			ch.Reset = reset
			if len(a) == 2 && !reset {
				return fmt.Errorf("nothing to change: give key=value settings, such as delay=20ms, or --reset")
			}
			rec, err := setLink(cmd.Context(), a[0], a[1], direction, ch)
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

// settingsHelp lists set's keys with their ranges, from the one table the
// lab file, the live view and the control socket check too.
func settingsHelp() string {
	var b strings.Builder
	for _, k := range settings.SettingKeys {
		s := settings.Settings[k]
		fmt.Fprintf(&b, "  %-14s %s: %s\n", k+"="+s.Example, s.What, s.Range())
	}
	return b.String()
}
