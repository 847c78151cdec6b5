package main

import (
	"github.com/spf13/cobra"

	"github.com/atmlab/atmlab/backend"
	"github.com/atmlab/atmlab/backend/measure"
	"github.com/atmlab/atmlab/backend/registry"
	"github.com/atmlab/atmlab/harness/clock"
	"github.com/atmlab/atmlab/harness/labrun"
	"github.com/atmlab/atmlab/harness/report"
	"github.com/atmlab/atmlab/internal/clihelp"
	"github.com/atmlab/atmlab/web"
)

func newLab(opts *options) *cobra.Command {
	lab := &cobra.Command{Use: "lab", Short: "Run a lab's experiments end to end"}
	lab.AddCommand(newLabRun(opts))
	return lab
}

// labRunFlags are lab run's flags.
type labRunFlags struct {
	out, clock, shard, split string
	quick, appendRun, force  bool
	jobs                     int
	view                     web.Live
}

func newLabRun(opts *options) *cobra.Command {
	var fl labRunFlags
	c := &cobra.Command{
		Use:   "run FILE [--out DIR [--append|--force]] [--quick] [--shard K/N] [--web ADDR]",
		Short: "Build a lab, run its experiments, write the results and the report, tear down",
		Long:  clihelp.Text("lab-run"),
		Args:  args(cobra.ExactArgs(1)),
		RunE:  func(cmd *cobra.Command, a []string) error { return runLab(cmd, a[0], &fl) },
	}
	c.Flags().StringVar(&fl.out, "out", "", "results folder (default results/<lab>-<time>)")
	c.Flags().StringVar(&fl.clock, "clock", clock.Real.String(), "real (namespaces, root), virtual (netstack hosts in model time, no root) or both, side by side")
	c.Flags().StringVar(&fl.shard, "shard", "", "K/N: run the K-th of N stable parts of the campaign's points, K from 1 (as Slurm's $SLURM_ARRAY_TASK_ID)")
	c.Flags().BoolVar(&fl.appendRun, "append", false, "add to the --out folder's results: measure only the points it lacks (the same lab file, atmlab, clock, --quick and shard)")
	c.Flags().BoolVar(&fl.force, "force", false, "replace what an earlier run wrote in the --out folder")
	c.Flags().IntVar(&fl.jobs, "jobs", 0, "virtual-time points measured at once, each on its own lab, results in order as one at a time (0: one per CPU); real-time points run one at a time")
	c.Flags().StringVar(&fl.split, "split", "", "virtual time, a lab with parts: whole runs it on one scheduler, procs each part in a process of its own, joined by a Unix socket (default: each part on a core of its own where a point allows)")
	c.Flags().BoolVar(&fl.quick, "quick", false, "one repetition of at most three sizes and one socket buffer for at most 2 s each")
	addWebFlags(c, &fl.view)
	return c
}

// runLab checks lab run's flags and hands the run to the library.
func runLab(cmd *cobra.Command, file string, fl *labRunFlags) error {
	clocks, err := clock.ParseChoice(fl.clock)
	if err != nil {
		return err
	}
	l := measure.Lab{Start: labrun.Start{File: file, Clocks: clocks, Quick: fl.quick, Append: fl.appendRun, Force: fl.force, Out: fl.out,
		Progress: labrun.ProgressWriter(cmd.ErrOrStderr()), Log: cmd.ErrOrStderr()}, Stdout: cmd.OutOrStdout(), Report: report.Write}
	l.Split = fl.split
	if l.Jobs, err = registry.Jobs(fl.jobs); err != nil {
		return err
	}
	if err := fl.view.Check(); err != nil {
		return err
	}
	if fl.appendRun && fl.force {
		return usageError{labrun.ErrAppendAndForce}
	}
	if fl.shard != "" {
		if l.Shard, err = labrun.ParseShard(fl.shard); err != nil {
			return usageError{err}
		}
	}
	l.Live = func() (measure.View, func(backend.Env) func(), error) {
		s, _, err := fl.view.Start(cmd.Context(), cmd.ErrOrStderr(), nil)
		if s == nil {
			return nil, nil, err
		}
		return s, web.LiveHook(s), err
	}
	if err := l.Load(); err != nil {
		return err
	}
	return l.Run(cmd.Context())
}
