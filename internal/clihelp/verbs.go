package clihelp

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
)

// RefuseUnknownVerbs makes each group of verbs (lab, perf) refuse a word
// that is none of its verbs, as the root does, instead of printing its
// help and succeeding: `atmlab lab FILE` is a mistake for `lab run FILE`.
// The error, naming the group's verbs, is usage's (the caller's mistake).
func RefuseUnknownVerbs(root *cobra.Command, usage func(error) error) {
	for _, c := range root.Commands() {
		if !c.HasSubCommands() || c.Runnable() {
			continue
		}
		c.Args = cobra.ArbitraryArgs
		c.RunE = func(cmd *cobra.Command, a []string) error {
			if len(a) == 0 {
				return cmd.Help()
			}
			var verbs []string
			for _, s := range cmd.Commands() {
				if s.IsAvailableCommand() {
					verbs = append(verbs, s.Name())
				}
			}
			hint := ""
			if len(verbs) == 1 {
				hint = fmt.Sprintf("; did you mean atmlab %s %s %s?", cmd.Name(), verbs[0], strings.Join(a, " "))
			} else if len(verbs) > 1 {
				hint = fmt.Sprintf("; its commands are %s", strings.Join(verbs, ", "))
			}
			return usage(fmt.Errorf("unknown command %q for %q%s", a[0], cmd.CommandPath(), hint))
		}
	}
}
