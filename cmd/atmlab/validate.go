package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/atmlab/atmlab/harness/labrun"
	"github.com/atmlab/atmlab/harness/lesson"
	"github.com/atmlab/atmlab/internal/clihelp"
	"github.com/atmlab/atmlab/topologies"
)

func newValidate(opts *options) *cobra.Command {
	return &cobra.Command{
		Use:   "validate FILE",
		Short: "Check a lab file and print every problem in it",
		Long:  clihelp.Text("validate"),
		Args:  args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, a []string) error {
			if isLessonFile(a[0]) {
				return validateLesson(cmd, opts, a[0])
			}
			var lab *topologies.Lab
			err := interruptible(cmd.Context(), func() (err error) {
				if lab, err = topologies.Load(a[0]); err == nil {
					err = errors.Join(labrun.CheckTools(lab), lab.CheckVariants(lab.Measured())) // each variant as lab run will build it, one at a time
				}
				return err
			})
			if errors.Is(err, errInterrupted) {
				return err
			}
			if opts.output == "json" {
				var problems []string
				for _, e := range flatten(err) {
					problems = append(problems, e.Error())
				}
				var warnings []string
				if lab != nil {
					for _, w := range lab.Warnings {
						warnings = append(warnings, w.Error())
					}
				}
				printJSON(cmd.OutOrStdout(), map[string]any{"file": a[0], "valid": err == nil, "problems": problems, "warnings": warnings})
			}
			if err != nil {
				if opts.output == "table" {
					for _, e := range flatten(err) {
						fmt.Fprintln(cmd.ErrOrStderr(), e)
					}
				}
				return fmt.Errorf("%s: %d problem(s)", a[0], len(flatten(err)))
			}
			if opts.output == "table" {
				printWarnings(cmd.ErrOrStderr(), lab)
				fmt.Fprintf(cmd.OutOrStdout(), "%s: lab %s is valid: %d nodes, %d links", a[0], lab.Name, len(lab.Nodes), len(lab.Links))
				if len(lab.Warnings) > 0 {
					fmt.Fprintf(cmd.OutOrStdout(), " (%d warning(s))", len(lab.Warnings))
				}
				fmt.Fprintln(cmd.OutOrStdout())
			}
			return nil
		},
	}
}

// printWarnings prints the lab file's warnings (loops of switches) one a
// line, as FILE:LINE: warning: KEY: what; validate, up and lab run print
// them alike.
func printWarnings(w io.Writer, lab *topologies.Lab) {
	for _, x := range lab.Warnings {
		fmt.Fprintf(w, "%s:%d: warning: %s: %s\n", x.File, x.Line, x.Key, x.Msg)
	}
}

// flatten lists the errors joined in err.
func flatten(err error) []error {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var all []error
		for _, e := range j.Unwrap() {
			all = append(all, flatten(e)...)
		}
		return all
	}
	return []error{err}
}

// isLessonFile reports whether a file is a lesson (its top key lesson:),
// which validate checks as one.
func isLessonFile(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, lesson.MaxFileBytes))
	return err == nil && lesson.IsLesson(data)
}

// validateLesson checks a lesson file and prints its problems as a lab
// file's are printed.
func validateLesson(cmd *cobra.Command, opts *options, path string) error {
	l, err := lesson.Load(path)
	if opts.output == "json" {
		var problems []string
		for _, e := range flatten(err) {
			problems = append(problems, e.Error())
		}
		printJSON(cmd.OutOrStdout(), map[string]any{"file": path, "valid": err == nil, "problems": problems})
	}
	if err != nil {
		if opts.output == "table" {
			for _, e := range flatten(err) {
				fmt.Fprintln(cmd.ErrOrStderr(), e)
			}
		}
		return fmt.Errorf("%s: %d problem(s)", path, len(flatten(err)))
	}
	if opts.output == "table" {
		fmt.Fprintf(cmd.OutOrStdout(), "%s: lesson %s is valid: %d questions on lab %s\n", path, l.Name, len(l.Questions), l.Lab.Name)
	}
	return nil
}
