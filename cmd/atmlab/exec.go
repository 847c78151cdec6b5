package main

import (
	"github.com/spf13/cobra"
)

func newExec(opts *options) *cobra.Command {
	return &cobra.Command{
		Use:   "exec NAME NODE -- CMD...",
		Short: "Run a command inside a host of a running lab",
		Long:  "Run a command in a host's network namespace, as ip netns exec NAME-NODE does.\n\nExample:\n  atmlab exec sw100 h1 -- iperf3 -c 10.0.0.2",
		Args:  args(cobra.MinimumNArgs(3)),
		RunE: func(cmd *cobra.Command, a []string) error {
			if err := asLabUser(a[0]); err != nil {
				return err
			}
			return execIn(a[0], a[1], a[2:])
		},
	}
}
