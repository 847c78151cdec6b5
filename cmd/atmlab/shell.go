package main

import (
	"github.com/spf13/cobra"

	"github.com/atmlab/atmlab/backend/linux"
	"github.com/atmlab/atmlab/internal/clihelp"
	"github.com/atmlab/atmlab/internal/labshell"
)

func newShell(opts *options) *cobra.Command {
	return &cobra.Command{
		Use:   "shell NAME",
		Short: "A prompt on a running lab where node names stand for addresses: h1 ping h2, pingall, iperf h1 h2",
		Long:  clihelp.Text("shell"),
		Args:  args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, a []string) error {
			if err := linux.NeedsKernel("shell"); err != nil {
				return err
			}
			if err := linux.AsLabUser(a[0]); err != nil {
				return err
			}
			return labshell.Attach(cmd.Context(), a[0], cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
}
