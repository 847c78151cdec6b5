package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/atmlab/atmlab/harness/lesson"
	"github.com/atmlab/atmlab/internal/clihelp"
)

func newCheck(opts *options) *cobra.Command {
	var o lesson.Options
	var class string
	c := &cobra.Command{
		Use:   "check WORKSHEET [--results DIR] [--lesson FILE] | --class DIR [--lesson FILE]",
		Short: "Check a student's worksheet against the theory and their results; a class's into one summary",
		Long:  clihelp.Text("check"),
		Args: args(func(cmd *cobra.Command, a []string) error {
			if class != "" {
				return cobra.NoArgs(cmd, a)
			}
			return cobra.ExactArgs(1)(cmd, a)
		}),
		RunE: func(cmd *cobra.Command, a []string) error {
			if class != "" {
				if o.Results != "" {
					return usageError{fmt.Errorf("--results goes with one worksheet: with --class each student's worksheet names theirs")}
				}
				c, csvPath, htmlPath, err := lesson.Summarize(class, o)
				if err != nil {
					return usageError{err}
				}
				fmt.Fprintf(cmd.OutOrStdout(), "%d students checked against lesson %s: %s, %s\n", len(c.Students), c.Lesson.Name, csvPath, htmlPath)
				return nil
			}
			r, err := lesson.CheckFile(a[0], o)
			if err != nil {
				return usageError{err}
			}
			if opts.output == "json" {
				return printJSON(cmd.OutOrStdout(), r)
			}
			return r.WriteText(cmd.OutOrStdout())
		},
	}
	c.Flags().StringVar(&o.Results, "results", "", "the student's results folder (instead of the worksheet's results:)")
	c.Flags().StringVar(&o.Lesson, "lesson", "", "the lesson.yaml (instead of finding it by the worksheet's lesson: name)")
	c.Flags().StringVar(&class, "class", "", "a class folder: one folder a student, each with worksheet.yaml and its results")
	return c
}
