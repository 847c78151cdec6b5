package main

import (
	"github.com/spf13/cobra"

	"github.com/atmlab/atmlab/backend/linux"
	"github.com/atmlab/atmlab/internal/clihelp"
	"github.com/atmlab/atmlab/placement"
)

func newDown(opts *options) *cobra.Command {
	var on string
	c := &cobra.Command{
		Use:   "down FILE|NAME",
		Short: "Remove whatever a lab left behind (after kill -9 too)",
		Long:  clihelp.Text("down"),
		Args:  args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, a []string) error {
			if on != "" {
				return placement.Run(cmd.Context(), a[0], on, false, cmd.OutOrStdout())
			}
			return linux.Remove(a[0], cmd.OutOrStdout(), opts.output)
		},
	}
	c.Flags().StringVar(&on, "on", "", "local, slurm or kubernetes: remove what a split lab brought up there by up --on left")
	return c
}
