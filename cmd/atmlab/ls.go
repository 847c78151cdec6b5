package main

import (
	"time"

	"github.com/spf13/cobra"

	"github.com/atmlab/atmlab/backend/linux"
	"github.com/atmlab/atmlab/internal/clihelp"
)

// now is the clock ls measures uptimes by; tests fix it.
var now = time.Now

func newLs(opts *options) *cobra.Command {
	return &cobra.Command{
		Use:     "ls",
		Aliases: []string{"list"},
		Short:   "List the running labs: name, owner, nodes, uptime, live-view address",
		Long:    clihelp.Text("ls"),
		Args:    args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			labs, err := runningLabs()
			if err != nil {
				return err
			}
			rows := linux.List(cmd.Context(), labs, labTopology, now())
			if opts.output == "json" {
				return printJSON(cmd.OutOrStdout(), rows)
			}
			return linux.WriteList(cmd.OutOrStdout(), rows)
		},
	}
}

// labTopology asks a running lab for its topology, and runningLabs
// lists the running labs; tests replace them.
var labTopology, runningLabs = linux.Topology, linux.Running
