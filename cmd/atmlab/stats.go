package main

import (
	"github.com/spf13/cobra"

	"github.com/atmlab/atmlab/backend/linux"
	"github.com/atmlab/atmlab/internal/clihelp"
)

func newStats(opts *options) *cobra.Command {
	return &cobra.Command{
		Use:   "stats NAME",
		Short: "Print the per-port counters of a running lab",
		Long:  clihelp.Text("stats"),
		Args:  args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, a []string) error {
			if err := linux.AsLabUser(a[0]); err != nil {
				return err
			}
			st, err := linux.Stats(cmd.Context(), a[0])
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
