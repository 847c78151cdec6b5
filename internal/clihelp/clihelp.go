// Package clihelp holds the verbs' long help texts, one plain-text file a
// verb in text/, embedded: atmlab's --help, the command reference
// (docs/cli) and the man pages all come from these files, so a verb's
// help is edited as prose, not as a Go string.
package clihelp

import (
	"embed"
	"fmt"
	"strings"

	"github.com/atmlab/atmlab/internal/labshell"
	"github.com/atmlab/atmlab/topologies/settings"
)

//go:embed text/*.txt
var texts embed.FS

// Text is the long help of the verb whose command path (without
// "atmlab ", spaces as dashes) is verb, such as "lab-run"; "atmlab" is
// the root's. Two tables fill their places in the texts: {settings} (set's
// keys and ranges) and {shell commands} (the shell's commands). A verb
// without a file panics: every verb's help is run by cmd/atmlab's tests.
func Text(verb string) string {
	b, err := texts.ReadFile("text/" + verb + ".txt")
	if err != nil {
		panic(fmt.Sprintf("clihelp: no help text for %q", verb))
	}
	return strings.NewReplacer(
		"{settings}", settingsTable(),
		"{shell commands}", strings.TrimSuffix(labshell.Help, "\n"),
	).Replace(strings.TrimSuffix(string(b), "\n"))
}

// settingsTable lists set's keys with their ranges, from the one table the
// lab file, the live view and the control socket check too.
func settingsTable() string {
	var b strings.Builder
	for _, k := range settings.SettingKeys {
		s := settings.Settings[k]
		fmt.Fprintf(&b, "  %-14s %s: %s\n", k+"="+s.Example, s.What, s.Range())
	}
	return strings.TrimSuffix(b.String(), "\n")
}
