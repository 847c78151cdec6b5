package main

import (
	"github.com/spf13/cobra"

	"github.com/atmlab/atmlab/backend/linux"
	"github.com/atmlab/atmlab/internal/clihelp"
)

func newExec(opts *options) *cobra.Command {
	return &cobra.Command{
		Use:   "exec NAME NODE [-- CMD...]",
		Short: "Run a command inside a host of a running lab",
		Long:  clihelp.Text("exec"),
		Args:  args(cobra.MinimumNArgs(2)),
		RunE: func(cmd *cobra.Command, a []string) error {
			if err := linux.AsLabUser(a[0]); err != nil {
				return err
			}
			return linux.Exec(a[0], a[1], a[2:])
		},
	}
}
