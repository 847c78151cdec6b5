package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/atmlab/atmlab/inspect"
	"github.com/atmlab/atmlab/internal/clihelp"
	"github.com/atmlab/atmlab/topologies"
)

func newInspect(opts *options) *cobra.Command {
	return &cobra.Command{
		Use:   "inspect NAME|FILE",
		Short: "Show a lab's nodes, addresses, links, PVCs and MPLS labels: a running lab's, or a lab file's without running it",
		Long:  clihelp.Text("inspect"),
		Args:  args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, a []string) error {
			var v *topologies.View
			var err error
			if inspect.IsFile(a[0]) {
				v, err = inspect.File(a[0])
			} else if v, err = labTopology(cmd.Context(), a[0]); err == nil && v == nil {
				err = fmt.Errorf("lab %s sent no topology: its atmlab is older than this one", a[0])
			}
			if err != nil {
				return err
			}
			if opts.output == "json" {
				return printJSON(cmd.OutOrStdout(), v)
			}
			inspect.Write(cmd.OutOrStdout(), v)
			return nil
		},
	}
}
