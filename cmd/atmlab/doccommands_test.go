package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/atmlab/atmlab/internal/doccheck"
)

// TestManualCommandsNameRealVerbsAndFlags checks that every atmlab command
// line in README.md, CHANGELOG.md and docs/ (in shell and indented code
// blocks) names verbs and flags the command tree has and passes its
// argument checks, placeholders such as [-o json] and FILE... included.
// Running them is the integration tests' part.
func TestManualCommandsNameRealVerbsAndFlags(t *testing.T) {
	r, err := doccheck.Root()
	if err != nil {
		t.Fatal(err)
	}
	names, err := doccheck.Pages(r)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, name := range names {
		data, err := os.ReadFile(filepath.Join(r, name))
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range doccheck.Parse(data).Commands() {
			n++
			if err := checkCommand(doccheck.Words(c.Text)); err != nil {
				t.Errorf("%s:%d: %s: %v", name, c.Line, c.Text, err)
			}
		}
	}
	if n == 0 {
		t.Fatal("found no atmlab command in the manual")
	}
	t.Logf("%d command lines checked", n)
}

// checkCommand checks one command's words, from "atmlab" on, against the
// tree: its verbs, its flags (by name; a placeholder may stand for a
// value) and its positional arguments' count. A command after exec's --
// that is atmlab again is checked too.
func checkCommand(words []string) error {
	var inner []string
	for i, w := range words {
		if w == "--" {
			inner, words = words[i+1:], words[:i]
			break
		}
	}
	var clean []string
	// A usage line's alternatives ([--rate R | --phy P]) end its words at
	// the bar, inside a bracket: what follows is not counted either.
	joined := strings.Join(words, " ")
	elided := strings.Count(joined, "[") > strings.Count(joined, "]")
	for _, w := range words[1:] {
		if w == "[--" { // [-- CMD...]: an optional command, not a flag
			elided = true
			break
		}
		optional := strings.HasPrefix(w, "[") && !strings.HasPrefix(w, "[-")
		w = strings.Trim(w, "[]")
		if optional || w == "" || w == "..." || strings.HasSuffix(w, "...") {
			elided = true // [flags], [FILE], NAME...: not a count of arguments
			continue
		}
		clean = append(clean, w)
	}
	root := newRoot()
	root.InitDefaultCompletionCmd() // cobra adds it when it executes
	cmd, rest, err := root.Find(clean)
	if err != nil {
		return err
	}
	var positional []string
	for i := 0; i < len(rest); i++ {
		w := rest[i]
		if !strings.HasPrefix(w, "-") || w == "-" {
			positional = append(positional, w)
			continue
		}
		f, err := lookupFlag(cmd, w)
		if err != nil {
			return err
		}
		if f.NoOptDefVal == "" && !strings.Contains(w, "=") && !(len(w) > 2 && w[1] != '-') {
			i++ // its value is the next word
		}
	}
	if cmd.HasSubCommands() && len(positional) > 0 { // a group runs only to say "did you mean"
		return fmt.Errorf("%q is not a verb of atmlab %s", positional[0], cmd.Name())
	}
	// The argument checks may read flags: set them, where the words are
	// values (a placeholder such as -c N is not, and leaves the count
	// unchecked).
	if err := cmd.ParseFlags(rest); err == nil && len(inner) == 0 && !elided {
		if err := cmd.ValidateArgs(cmd.Flags().Args()); err != nil {
			return err
		}
	}
	if len(inner) > 0 && inner[0] == "atmlab" {
		return checkCommand(inner)
	}
	return nil
}

// lookupFlag finds a word's flag (--name, --name=value, -x, -xVALUE) among
// the command's own and inherited flags.
func lookupFlag(cmd *cobra.Command, w string) (*pflag.Flag, error) {
	flags := cmd.Flags()
	flags.AddFlagSet(cmd.InheritedFlags())
	if name, ok := strings.CutPrefix(w, "--"); ok {
		name, _, _ = strings.Cut(name, "=")
		if f := flags.Lookup(name); f != nil {
			return f, nil
		}
		return nil, fmt.Errorf("atmlab %s has no flag --%s", cmd.Name(), name)
	}
	if f := flags.ShorthandLookup(w[1:2]); f != nil {
		return f, nil
	}
	return nil, fmt.Errorf("atmlab %s has no flag -%s", cmd.Name(), w[1:2])
}

func TestCheckCommandRefusesUnknownVerbsAndFlags(t *testing.T) {
	for line, ok := range map[string]bool{
		"atmlab validate f.yaml":                                 true,
		"atmlab lab run f.yaml --quick --out DIR":                true,
		"atmlab stats sw100 [-o json]":                           true,
		"atmlab exec sw100 h1 -- atmlab perf client -H 10.0.0.2": true,
		"atmlab capture lab h1:eth0 -w x.pcap -c 10":             true,
		"atmlab validatee f.yaml":                                false,
		"atmlab lab runn f.yaml":                                 false,
		"atmlab lab run f.yaml --quik":                           false,
		"atmlab validate":                                        false,
		"atmlab exec sw100 h1 -- atmlab perf client --hots x":    false,
	} {
		err := checkCommand(doccheck.Words(line))
		if (err == nil) != ok {
			t.Errorf("%q: err %v, want ok %v", line, err, ok)
		}
	}
}

// TestCheckCommandAcceptsTheTreesOwnUsage checks the checker against what
// the command reference generated from the tree shows: every verb's usage
// line ("atmlab up FILE [flags]") and the atmlab lines of its examples.
func TestCheckCommandAcceptsTheTreesOwnUsage(t *testing.T) {
	var visit func(c *cobra.Command)
	n := 0
	visit = func(c *cobra.Command) {
		lines := []string{c.UseLine()}
		for _, l := range strings.Split(c.Example+"\n"+c.Long, "\n") {
			// Examples, and the indented lines of the long help: commands.
			if !strings.HasPrefix(l, " ") && !strings.Contains(c.Example, l) {
				continue
			}
			if l = strings.TrimSpace(l); strings.HasPrefix(l, "atmlab ") {
				lines = append(lines, l)
			}
		}
		for _, l := range lines {
			n++
			if err := checkCommand(doccheck.Words(l)); err != nil {
				t.Errorf("%s: %q: %v", c.CommandPath(), l, err)
			}
		}
		for _, sub := range c.Commands() {
			visit(sub)
		}
	}
	visit(newRoot())
	t.Logf("%d lines checked", n)
}
