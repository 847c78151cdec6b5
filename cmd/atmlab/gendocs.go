package main

import (
	"github.com/spf13/cobra"

	"github.com/atmlab/atmlab/internal/clihelp"
)

// newGenDocs is the hidden verb `make docs-cli` runs: the command
// reference (docs/cli/*.md) and the man pages (docs/man/*.1), generated
// from the command tree so that they never drift from --help.
func newGenDocs() *cobra.Command {
	var md, man string
	c := &cobra.Command{
		Use:    "gen-docs --md DIR --man DIR",
		Short:  "Write the command reference and the man pages from the command tree",
		Hidden: true,
		Args:   args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return clihelp.Generate(cmd.Root(), md, man)
		},
	}
	c.Flags().StringVar(&md, "md", "docs/cli", "directory for the Markdown command reference")
	c.Flags().StringVar(&man, "man", "docs/man", "directory for the man pages")
	return c
}
