package main

// Shell completion of what a running lab has: its name, its hosts, its
// link ends and set's keys; and lab files where a verb takes one. Cobra's
// `completion` verb writes the scripts (bash, zsh, fish, powershell) that
// call `atmlab __complete`, which runs these functions.

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/atmlab/atmlab/topologies"
)

// setKeys are the settings atmlab set takes.
var setKeys = []string{"rate=", "delay=", "jitter=", "loss=", "limit=", "buffer="}

// completionWait bounds a completion's questions to running labs: a shell
// must never hang on a tab.
const completionWait = 2 * time.Second

// addCompletions attaches the completion functions to root's verbs.
func addCompletions(root *cobra.Command) {
	files := func(cmd *cobra.Command, a []string, _ string) ([]string, cobra.ShellCompDirective) {
		if len(a) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return []string{"yaml", "yml"}, cobra.ShellCompDirectiveFilterFileExt
	}
	byArg := func(steps ...func(a []string, prefix string) []string) cobra.CompletionFunc {
		return func(cmd *cobra.Command, a []string, prefix string) ([]string, cobra.ShellCompDirective) {
			if len(a) >= len(steps) {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			return steps[len(a)](a, prefix), cobra.ShellCompDirectiveNoFileComp
		}
	}
	set := func(path string, f cobra.CompletionFunc) {
		if c, _, err := root.Find(strings.Fields(path)); err == nil && c != root {
			c.ValidArgsFunction = f
		}
	}
	set("up", files)
	set("validate", files)
	set("lab run", files)
	set("campaign", files)
	set("down", files)
	set("stats", byArg(labNames))
	set("shell", byArg(labNames))
	set("web", byArg(labNames))
	set("capture", byArg(labNames, linkEnds))
	set("exec", completeExec)
	set("set", completeSet)
	if c, _, err := root.Find([]string{"set"}); err == nil && c.Flags().Lookup("direction") != nil {
		c.RegisterFlagCompletionFunc("direction", func(cmd *cobra.Command, a []string, prefix string) ([]string, cobra.ShellCompDirective) {
			if len(a) < 2 {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			return peerEnds(a[0], a[1], prefix), cobra.ShellCompDirectiveNoFileComp
		})
	}
	set("inspect", completeInspect)
}

// labNames are the running labs whose names begin with prefix.
func labNames(_ []string, prefix string) []string {
	labs, _ := runningLabs()
	var out []string
	for _, l := range labs {
		if strings.HasPrefix(l.Name, prefix) {
			out = append(out, l.Name)
		}
	}
	slices.Sort(out)
	return out
}

// viewOf asks the running lab named lab for its topology, or nil.
func viewOf(lab string) *topologies.View {
	if topologies.CheckLabName(lab) != nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), completionWait)
	defer cancel()
	v, err := labTopology(ctx, lab)
	if err != nil {
		return nil
	}
	return v
}

// hostNames are the hosts of the lab named a[0] (exec enters only hosts).
func hostNames(a []string, prefix string) []string {
	v := viewOf(a[0])
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
func linkEnds(a []string, prefix string) []string {
	v := viewOf(a[0])
	if v == nil {
		return nil
	}
	var out []string
	for _, l := range v.Links {
		for _, e := range []string{l.A, l.B} {
			if strings.HasPrefix(e, prefix) && !slices.Contains(out, e) {
				out = append(out, e)
			}
		}
	}
	slices.Sort(out)
	return out
}

// peerEnds are the two ends of the link that has endpoint, for --direction.
func peerEnds(lab, endpoint, prefix string) []string {
	v := viewOf(lab)
	if v == nil {
		return nil
	}
	var out []string
	for _, l := range v.Links {
		if l.A == endpoint || l.B == endpoint {
			for _, e := range []string{l.A, l.B} {
				if strings.HasPrefix(e, prefix) {
					out = append(out, e)
				}
			}
		}
	}
	return out
}

// completeExec completes exec's lab, then its host; then the command's own words.
func completeExec(cmd *cobra.Command, a []string, prefix string) ([]string, cobra.ShellCompDirective) {
	switch len(a) {
	case 0:
		return labNames(a, prefix), cobra.ShellCompDirectiveNoFileComp
	case 1:
		return hostNames(a, prefix), cobra.ShellCompDirectiveNoFileComp
	}
	return nil, cobra.ShellCompDirectiveDefault // the command's own words
}

// completeSet completes set's lab, link end, then the settings not given yet.
func completeSet(cmd *cobra.Command, a []string, prefix string) ([]string, cobra.ShellCompDirective) {
	switch len(a) {
	case 0:
		return labNames(a, prefix), cobra.ShellCompDirectiveNoFileComp
	case 1:
		return linkEnds(a, prefix), cobra.ShellCompDirectiveNoFileComp
	}
	var left []string
	for _, k := range setKeys {
		if strings.HasPrefix(k, prefix) && !slices.ContainsFunc(a[2:], func(s string) bool { return strings.HasPrefix(s, k) }) {
			left = append(left, k)
		}
	}
	return left, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
}

// completeInspect completes a running lab's name, or else a lab file.
func completeInspect(cmd *cobra.Command, a []string, prefix string) ([]string, cobra.ShellCompDirective) {
	if len(a) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	if names := labNames(a, prefix); len(names) > 0 && !strings.ContainsAny(prefix, "./") {
		return names, cobra.ShellCompDirectiveNoFileComp
	}
	return []string{"yaml", "yml"}, cobra.ShellCompDirectiveFilterFileExt
}
