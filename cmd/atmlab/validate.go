package main

import (
	"github.com/spf13/cobra"

	"github.com/atmlab/atmlab/internal/clihelp"
	"github.com/atmlab/atmlab/validate"
)

func newValidate(opts *options) *cobra.Command {
	return &cobra.Command{
		Use:   "validate FILE",
		Short: "Check a lab file and print every problem in it",
		Long:  clihelp.Text("validate"),
		Args:  args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, a []string) error {
			var r *validate.Result
			if err := interruptible(cmd.Context(), func() error { r = validate.File(a[0]); return nil }); err != nil {
				return err
			}
			return r.Write(cmd.OutOrStdout(), cmd.ErrOrStderr(), opts.output)
		},
	}
}
