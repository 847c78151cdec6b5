package main

import (
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/atmlab/atmlab/harness"
)

func newReport(opts *options) *cobra.Command {
	return &cobra.Command{
		Use:   "report DIR",
		Short: "Render report.md and report.html (with plots) from a results folder",
		Long:  "Render a results folder's report: tables of every point (mean, min, max, ceiling) and plots of\nthroughput and transactions/s against message size, as Markdown and a self-contained HTML page.\n\nExample:\n  atmlab report results/sw100-20261130-101500",
		Args:  args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, a []string) error {
			if err := harness.WriteReport(a[0]); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "report: %s\n", filepath.Join(a[0], "report.html"))
			return nil
		},
	}
}
