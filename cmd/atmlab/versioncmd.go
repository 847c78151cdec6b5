package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/atmlab/atmlab/harness/labrun"
)

func newVersion(opts *options) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print atmlab's version, commit and Go version (as --version does)",
		Args:  args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			b := labrun.ReadBuild(version, commit)
			if opts.output == "json" {
				return printJSON(cmd.OutOrStdout(), b)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "atmlab %s\n", b)
			return nil
		},
	}
}
