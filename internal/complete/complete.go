// Package complete is the command line's shell completion of what a
// running lab has: its name, its hosts, its link ends and set's keys; and
// lab files where a verb takes one. Cobra's `completion` verb writes the
// scripts (bash, zsh, fish, powershell) that call `atmlab __complete`,
// which runs these functions.
package complete

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/atmlab/atmlab/backend/linux"
	"github.com/atmlab/atmlab/topologies"
	"github.com/atmlab/atmlab/topologies/labfile"
)

// SetKeys are the settings atmlab set takes.
var SetKeys = []string{"rate=", "delay=", "jitter=", "loss=", "limit=", "buffer="}

// wait bounds a completion's questions to running labs: a shell must
// never hang on a tab.
const wait = 2 * time.Second

// Labs is how completion sees the running labs (tests give their own).
type Labs struct {
	Running  func() ([]linux.RunningLab, error)
	Topology func(ctx context.Context, lab string) (*topologies.View, error)
}

// Attach attaches the completion functions to root's verbs.
func Attach(root *cobra.Command, l Labs) {
	set := func(path string, f cobra.CompletionFunc) {
		if c, _, err := root.Find(strings.Fields(path)); err == nil && c != root {
			c.ValidArgsFunction = f
		}
	}
	for _, verb := range []string{"up", "validate", "lab run", "campaign", "down"} {
		set(verb, files)
	}
	set("stats", byArg(l.names))
	set("shell", byArg(l.names))
	set("web", byArg(l.names))
	set("capture", byArg(l.names, l.linkEnds))
	set("exec", l.exec)
	set("set", l.set)
	if c, _, err := root.Find([]string{"set"}); err == nil && c.Flags().Lookup("direction") != nil {
		c.RegisterFlagCompletionFunc("direction", func(cmd *cobra.Command, a []string, prefix string) ([]string, cobra.ShellCompDirective) {
			if len(a) < 2 {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			return l.peerEnds(a[0], a[1], prefix), cobra.ShellCompDirectiveNoFileComp
		})
	}
	set("inspect", l.inspect)
}

// files offers lab files (*.yaml, *.yml) as a verb's first argument.
func files(cmd *cobra.Command, a []string, _ string) ([]string, cobra.ShellCompDirective) {
	if len(a) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	return []string{"yaml", "yml"}, cobra.ShellCompDirectiveFilterFileExt
}

// byArg completes the n-th argument by steps[n], and no argument after
// the last step.
func byArg(steps ...func(a []string, prefix string) []string) cobra.CompletionFunc {
	return func(cmd *cobra.Command, a []string, prefix string) ([]string, cobra.ShellCompDirective) {
		if len(a) >= len(steps) {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return steps[len(a)](a, prefix), cobra.ShellCompDirectiveNoFileComp
	}
}

// names are the running labs whose names begin with prefix.
func (l Labs) names(_ []string, prefix string) []string {
	labs, _ := l.Running()
	var out []string
	for _, lab := range labs {
		if strings.HasPrefix(lab.Name, prefix) {
			out = append(out, lab.Name)
		}
	}
	slices.Sort(out)
	return out
}

// view asks the running lab named lab for its topology, or nil.
func (l Labs) view(lab string) *topologies.View {
	if labfile.CheckLabName(lab) != nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	v, err := l.Topology(ctx, lab)
	if err != nil {
		return nil
	}
	return v
}

// hostNames are the hosts of the lab named a[0] (exec enters only hosts).
func (l Labs) hostNames(a []string, prefix string) []string {
	v := l.view(a[0])
	if v == nil {
		return nil
	}
	var out []string
	for _, n := range v.Nodes {
		if n.Kind == topologies.KindHost && strings.HasPrefix(n.Name, prefix) {
			out = append(out, n.Name)
		}
	}
	return out
}

// linkEnds are the link ends (node:port) of the lab named a[0].
func (l Labs) linkEnds(a []string, prefix string) []string {
	v := l.view(a[0])
	if v == nil {
		return nil
	}
	var out []string
	for _, k := range v.Links {
		for _, e := range []string{k.A, k.B} {
			if strings.HasPrefix(e, prefix) && !slices.Contains(out, e) {
				out = append(out, e)
			}
		}
	}
	slices.Sort(out)
	return out
}

// peerEnds are the two ends of the link that has endpoint, for --direction.
func (l Labs) peerEnds(lab, endpoint, prefix string) []string {
	v := l.view(lab)
	if v == nil {
		return nil
	}
	var out []string
	for _, k := range v.Links {
		if k.A == endpoint || k.B == endpoint {
			for _, e := range []string{k.A, k.B} {
				if strings.HasPrefix(e, prefix) {
					out = append(out, e)
				}
			}
		}
	}
	return out
}

// exec completes exec's lab, then its host; then the command's own words.
func (l Labs) exec(cmd *cobra.Command, a []string, prefix string) ([]string, cobra.ShellCompDirective) {
	if len(a) >= 2 {
		return nil, cobra.ShellCompDirectiveDefault // the command's own words
	}
	return byArg(l.names, l.hostNames)(cmd, a, prefix)
}

// set completes set's lab, link end, then the settings not given yet.
func (l Labs) set(cmd *cobra.Command, a []string, prefix string) ([]string, cobra.ShellCompDirective) {
	if len(a) < 2 {
		return byArg(l.names, l.linkEnds)(cmd, a, prefix)
	}
	var left []string
	for _, k := range SetKeys {
		if strings.HasPrefix(k, prefix) && !slices.ContainsFunc(a[2:], func(s string) bool { return strings.HasPrefix(s, k) }) {
			left = append(left, k)
		}
	}
	return left, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
}

// inspect completes a running lab's name, or else a lab file.
func (l Labs) inspect(cmd *cobra.Command, a []string, prefix string) ([]string, cobra.ShellCompDirective) {
	if len(a) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	if names := l.names(a, prefix); len(names) > 0 && !strings.ContainsAny(prefix, "./") {
		return names, cobra.ShellCompDirectiveNoFileComp
	}
	return files(cmd, a, prefix)
}
