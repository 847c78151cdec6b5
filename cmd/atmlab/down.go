package main

import (
	"github.com/spf13/cobra"

	"github.com/atmlab/atmlab/backend/linux"
	"github.com/atmlab/atmlab/internal/clihelp"
)

func newDown(opts *options) *cobra.Command {
	return &cobra.Command{
		Use:   "down FILE|NAME",
		Short: "Remove whatever a lab left behind (after kill -9 too)",
		Long:  clihelp.Text("down"),
		Args:  args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, a []string) error {
			return linux.Remove(a[0], cmd.OutOrStdout(), opts.output)
		},
	}
}
