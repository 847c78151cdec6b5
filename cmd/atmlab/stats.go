package main

import (
	"github.com/spf13/cobra"
)

func newStats(opts *options) *cobra.Command {
	return &cobra.Command{
		Use:   "stats NAME",
		Short: "Print the per-port counters of a running lab",
		Long:  "Print each port's frames, bytes, drops and queue high-water mark, each host kernel's own\nUDP and TCP counters (receive-buffer drops, retransmissions), and the emulator's own CPU and\nrelease lateness.\n\nExample:\n  atmlab stats sw100 -o json",
		Args:  args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, a []string) error {
			if err := asLabUser(a[0]); err != nil {
				return err
			}
			st, err := queryStats(cmd.Context(), a[0])
			if err != nil {
				return err
			}
			if opts.output == "json" {
				return printJSON(cmd.OutOrStdout(), st)
			}
			st.WriteText(cmd.OutOrStdout())
			return nil
		},
	}
}
