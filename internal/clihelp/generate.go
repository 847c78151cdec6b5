package clihelp

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
)

// Generate writes root's Markdown reference into md and its man pages into
// man, replacing what was there, with nothing that changes from one run
// to the next (no date, no build's version).
func Generate(root *cobra.Command, md, man string) error {
	root.DisableAutoGenTag = true
	root.InitDefaultHelpCmd()       // as Execute adds them, so that the pages
	root.InitDefaultCompletionCmd() // are the same from a test and from make
	for _, dir := range []string{md, man} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		for _, pat := range []string{"atmlab*.md", "atmlab*.1"} {
			old, _ := filepath.Glob(filepath.Join(dir, pat))
			for _, f := range old {
				os.Remove(f)
			}
		}
	}
	if err := doc.GenMarkdownTree(root, md); err != nil {
		return fmt.Errorf("command reference: %w", err)
	}
	header := &doc.GenManHeader{Title: "ATMLAB", Section: "1", Source: "atmlab", Manual: "atmlab manual"}
	if err := doc.GenManTree(root, header, man); err != nil {
		return fmt.Errorf("man pages: %w", err)
	}
	return nil
}
