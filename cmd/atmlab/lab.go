package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/atmlab/atmlab/backend/linux"
	"github.com/atmlab/atmlab/backend/registry"
	"github.com/atmlab/atmlab/harness/clock"
	"github.com/atmlab/atmlab/harness/flent"
	"github.com/atmlab/atmlab/harness/labrun"
	"github.com/atmlab/atmlab/harness/report"
	"github.com/atmlab/atmlab/internal/clihelp"
	"github.com/atmlab/atmlab/topologies"
	"github.com/atmlab/atmlab/web"
)

func newLab(opts *options) *cobra.Command {
	lab := &cobra.Command{Use: "lab", Short: "Run a lab's experiments end to end"}
	lab.AddCommand(newLabRun(opts))
	return lab
}

// labRunFlags are lab run's flags.
type labRunFlags struct {
	out, clock, shard       string
	quick, appendRun, force bool
	jobs                    int
	view                    web.Live
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
	c.Flags().StringVar(&fl.clock, "clock", "real", "real (namespaces, root), virtual (netstack hosts in model time, no root) or both, side by side")
	c.Flags().StringVar(&fl.shard, "shard", "", "K/N: run the K-th of N stable parts of the campaign's points, K from 1 (as Slurm's $SLURM_ARRAY_TASK_ID)")
	c.Flags().BoolVar(&fl.appendRun, "append", false, "add to the --out folder's results: measure only the points it lacks (the same lab file, atmlab, clock, --quick and shard)")
	c.Flags().BoolVar(&fl.force, "force", false, "replace what an earlier run wrote in the --out folder")
	c.Flags().IntVar(&fl.jobs, "jobs", 0, "virtual-time points measured at once, each on its own lab, results in order as one at a time (0: one per CPU); real-time points run one at a time")
	c.Flags().BoolVar(&fl.quick, "quick", false, "one repetition of at most three sizes and one socket buffer for at most 2 s each")
	addWebFlags(c, &fl.view)
	return c
}

// runLab checks lab run's flags, loads and plans the lab, takes the
// machine's measuring lock for real time (or hands the run to a rootless
// holder), and measures.
func runLab(cmd *cobra.Command, file string, fl *labRunFlags) error {
	clocks, err := clock.ParseChoice(fl.clock)
	if err != nil {
		return err
	}
	s := labrun.Start{File: file, Clocks: clocks, Quick: fl.quick, Append: fl.appendRun, Force: fl.force, Out: fl.out,
		Progress: labrun.ProgressWriter(cmd.ErrOrStderr()), Log: cmd.ErrOrStderr()}
	if s.Jobs, err = registry.Jobs(fl.jobs); err != nil {
		return err
	}
	if clocks.Has(clock.Real) {
		if err := linux.NeedsKernel("lab run --clock " + fl.clock); err != nil {
			return err
		}
	}
	if err := fl.view.Check(); err != nil {
		return err
	}
	if fl.appendRun && fl.force {
		return usageError{labrun.ErrAppendAndForce}
	}
	if fl.shard != "" {
		if s.Shard, err = labrun.ParseShard(fl.shard); err != nil {
			return usageError{err}
		}
	}
	if s.Lab, err = topologies.Load(file); err != nil {
		return err
	}
	if !linux.InHolder() { // a holder's child runs this command again
		printWarnings(cmd.ErrOrStderr(), s.Lab)
	}
	if len(s.Lab.Experiments) == 0 {
		return fmt.Errorf("%s has no experiments: add an experiments: section (see docs/experiments.md)", file)
	}
	// The lab as written, then each what-if variant (or the sweep's
	// grid points), each made and built now, so that a bad one fails
	// before anything is measured or written.
	if s.Variants, err = labrun.Plan(s.Lab, fl.quick); err != nil {
		return err
	}
	release, err := lockOrHold(cmd, clocks, s.Variants)
	if err != nil {
		return err
	}
	defer release()
	return measureLab(cmd, s, fl.view)
}

// lockOrHold takes the machine-wide measuring lock for a run in real
// time, waiting for another run and saying so; a rootless run in real
// time is handed to a holder, and this process exits with its code.
func lockOrHold(cmd *cobra.Command, clocks clock.Choice, variants []labrun.Variant) (release func(), err error) {
	release = func() {}
	if clocks.Has(clock.Real) && !linux.InHolder() { // virtual time takes no lock
		release, err = linux.MeasureLock(func(pid int) {
			fmt.Fprintf(cmd.ErrOrStderr(), "another lab run (pid %d) is measuring on this machine: waiting for it (%s)\n", pid, linux.MeasureLockPath())
		})
		if err != nil {
			return nil, fmt.Errorf("measuring lock: %w", err)
		}
	}
	if linux.NeedsHolder() && clocks.Has(clock.Real) { // virtual time needs no namespaces
		vlabs := make([]*topologies.Lab, len(variants))
		for i, v := range variants {
			vlabs[i] = v.Lab
		}
		code, err := linux.HolderRun(vlabs...)
		if err != nil {
			release()
			return nil, err
		}
		release() // the holder measured; os.Exit runs no deferred call
		os.Exit(code)
	}
	return release, nil
}

// measureLab measures the planned run into its results folder, with the
// live view if asked, and renders its report and flent files, after an
// interrupt too.
func measureLab(cmd *cobra.Command, s labrun.Start, view web.Live) error {
	o, camp, err := s.Begin(cmd.Context())
	if err != nil {
		return err
	}
	defer o.Close() // the records closed and checked after the run; this, on an early return
	out := camp.Out
	live, _, err := view.Start(cmd.Context(), cmd.ErrOrStderr(), nil)
	if err != nil {
		return err
	}
	if live != nil {
		camp.Watch = live.Watch
		live.ExplorerResults(out) // the explorer plots the points as they land
	}
	camp.Measure = registry.Measure(out, camp.Self, web.LiveHook(live))
	restore := registry.Procs(s.Clocks, camp.Jobs, camp.Points())
	total, runErr := camp.Run(cmd.Context())
	restore()
	if err := o.CloseRecords(); err != nil && runErr == nil {
		runErr = err
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "lab %s removed; %d results\n", s.Lab.Name, total)
	// The report renders what was measured, after an interrupt too.
	if err := report.Write(context.WithoutCancel(cmd.Context()), out); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	fmt.Fprintf(cmd.OutOrStdout(), "report: %s\n", filepath.Join(out, "report.html"))
	if err := flent.WriteSaying(context.WithoutCancel(cmd.Context()), o.Dir, cmd.OutOrStdout()); err != nil && runErr == nil {
		runErr = err
	}
	if errors.Is(runErr, context.Canceled) {
		return fmt.Errorf("interrupted after %d points; what was measured is in %s", total, out)
	}
	return runErr
}
