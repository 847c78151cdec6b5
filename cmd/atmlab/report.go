package main

import (
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/atmlab/atmlab/harness/flent"
	"github.com/atmlab/atmlab/harness/labrun"
	"github.com/atmlab/atmlab/harness/report"
	"github.com/atmlab/atmlab/internal/clihelp"
)

func newReport(opts *options) *cobra.Command {
	var out string
	var flentFiles bool
	c := &cobra.Command{
		Use:   "report DIR... [--out DIR] [--flent]",
		Short: "Render report.md and report.html (with plots) from a results folder, or merge shards' folders into one",
		Long:  clihelp.Text("report"),
		Args:  args(cobra.MinimumNArgs(1)),
		RunE: func(cmd *cobra.Command, a []string) error {
			if out == "" {
				if len(a) > 1 {
					return usageError{fmt.Errorf("report: %d folders: merging needs --out DIR, the folder to write the merged results and report to", len(a))}
				}
				if err := interruptible(cmd.Context(), func() error { return report.Write(cmd.Context(), a[0]) }); err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "report: %s\n", filepath.Join(a[0], "report.html"))
				if flentFiles {
					return flent.WriteFolder(cmd.Context(), a[0], cmd.OutOrStdout())
				}
				return nil
			}
			var m *labrun.Merged
			err := interruptible(cmd.Context(), func() (err error) { m, err = report.Merge(cmd.Context(), out, a); return err })
			if err != nil {
				return err
			}
			report.WarnMissing(cmd.ErrOrStderr(), m, len(a))
			fmt.Fprintf(cmd.OutOrStdout(), "merged %d results from %d folders into %s\nreport: %s\n", m.Records, len(a), out, filepath.Join(out, "report.html"))
			return flent.WriteFolder(cmd.Context(), out, cmd.OutOrStdout()) // a merged results set, as lab run's, comes with its flent files
		},
	}
	c.Flags().StringVar(&out, "out", "", "merge the folders into this one (results, lab file, campaign.json, report)")
	c.Flags().BoolVar(&flentFiles, "flent", false, "also write the records as flent's data files (.flent.gz) in the folder's flent/ (a merge always does)")
	return c
}
