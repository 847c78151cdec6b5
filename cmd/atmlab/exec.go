package main

import (
	"github.com/spf13/cobra"
)

func newExec(opts *options) *cobra.Command {
	return &cobra.Command{
		Use:   "exec NAME NODE [-- CMD...]",
		Short: "Run a command inside a host of a running lab",
		Long:  "Run a command in a host's network namespace, as ip netns exec NAME-NODE does; without a\ncommand, an interactive shell ($SHELL, or /bin/sh) whose prompt names the lab and the node.\nInside a host the lab's node names resolve (ping h2).\n\nExample:\n  atmlab exec sw100 h1 -- iperf3 -c 10.0.0.2\n  atmlab exec sw100 h1",
		Args:  args(cobra.MinimumNArgs(2)),
		RunE: func(cmd *cobra.Command, a []string) error {
			if err := asLabUser(a[0]); err != nil {
				return err
			}
			argv := a[2:]
			if len(argv) == 0 {
				argv = shellIn(a[0], a[1])
			}
			return execIn(a[0], a[1], argv)
		},
	}
}
