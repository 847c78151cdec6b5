package clihelp

import (
	"errors"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// errUsage marks the errors RefuseUnknownVerbs hands to its usage.
type errUsage struct{ error }

// A group of verbs given a word that is none of them refuses it as a
// usage error, suggesting its one verb or listing its several; with no
// word it prints its help; a runnable command is left as it is.
func TestRefuseUnknownVerbsNamesTheGroupsVerbs(t *testing.T) {
	newRoot := func() *cobra.Command {
		root := &cobra.Command{Use: "atmlab", SilenceUsage: true, SilenceErrors: true}
		lab := &cobra.Command{Use: "lab"}
		lab.AddCommand(&cobra.Command{Use: "run", Run: func(*cobra.Command, []string) {}})
		perf := &cobra.Command{Use: "perf"}
		perf.AddCommand(&cobra.Command{Use: "server", Run: func(*cobra.Command, []string) {}}, &cobra.Command{Use: "client", Run: func(*cobra.Command, []string) {}})
		root.AddCommand(lab, perf, &cobra.Command{Use: "up", Run: func(*cobra.Command, []string) {}})
		RefuseUnknownVerbs(root, func(err error) error { return errUsage{err} })
		return root
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"lab", "x.yaml"}, `unknown command "x.yaml" for "atmlab lab"; did you mean atmlab lab run x.yaml?`},
		{[]string{"perf", "memcpy"}, `unknown command "memcpy" for "atmlab perf"; its commands are client, server`},
		{[]string{"lab"}, ""},
		{[]string{"up", "x"}, ""},
	} {
		root := newRoot()
		var out strings.Builder
		root.SetOut(&out)
		root.SetArgs(tc.args)
		err := root.Execute()
		var u errUsage
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%q: %v, want none", tc.args, err)
		case tc.want != "" && (err == nil || !errors.As(err, &u) || err.Error() != tc.want):
			t.Errorf("%q: %v, want the usage error %q", tc.args, err, tc.want)
		}
		if len(tc.args) == 1 && !strings.Contains(out.String(), "run") {
			t.Errorf("%q printed %q, want its help", tc.args, out.String())
		}
	}
}
