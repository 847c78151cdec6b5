package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/atmlab/atmlab/backend/linux"
	"github.com/atmlab/atmlab/internal/clihelp"
	"github.com/atmlab/atmlab/topologies"
)

func newDown(opts *options) *cobra.Command {
	return &cobra.Command{
		Use:   "down FILE|NAME",
		Short: "Remove whatever a lab left behind (after kill -9 too)",
		Long:  clihelp.Text("down"),
		Args:  args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, a []string) error {
			name := a[0]
			if strings.HasSuffix(name, ".yaml") || strings.HasSuffix(name, ".yml") {
				if _, err := os.Stat(name); err == nil {
					lab, err := topologies.Load(name)
					if err != nil {
						return err
					}
					name = lab.Name
				}
			}
			if err := linux.AsLabUser(name); err != nil {
				return err
			}
			removed, err := linux.Down(name)
			if err != nil && len(removed) == 0 {
				return err
			}
			if opts.output == "json" {
				printJSON(cmd.OutOrStdout(), map[string]any{"lab": name, "removed": removed})
			} else if len(removed) > 0 {
				fmt.Fprintf(cmd.OutOrStdout(), "lab %s: removed %s\n", name, strings.Join(removed, " "))
			} else if err == nil { // a failure says so itself
				fmt.Fprintf(cmd.OutOrStdout(), "lab %s: nothing to remove\n", name)
			}
			return err
		},
	}
}
