package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/atmlab/atmlab/backend/registry"
	"github.com/atmlab/atmlab/harness/clock"
	"github.com/atmlab/atmlab/harness/labrun"
	"github.com/atmlab/atmlab/harness/report"
	"github.com/atmlab/atmlab/topologies"
)

func newLab(opts *options) *cobra.Command {
	lab := &cobra.Command{Use: "lab", Short: "Run a lab's experiments end to end"}
	lab.AddCommand(newLabRun(opts))
	return lab
}

func newLabRun(opts *options) *cobra.Command {
	var out, clockFlag, shardFlag string
	var quick, appendRun, force bool
	var jobs int
	var view webFlags
	c := &cobra.Command{
		Use:   "run FILE [--out DIR [--append|--force]] [--quick] [--shard K/N] [--web ADDR]",
		Short: "Build a lab, run its experiments, write the results and the report, tear down",
		Long: "Build the lab, run every point of its experiments: matrix (with a progress bar and ETA),\n" +
			"write each result as it comes to DIR/results.jsonl and DIR/results.csv, tear the lab down and\n" +
			"render DIR/report.md and DIR/report.html. An interrupted run keeps what it measured.\n" +
			"A --out folder that holds anything is refused: --append keeps its results and measures only the points\n" +
			"it lacks (the same lab file, atmlab, clock, --quick and shard; an interrupted run resumed), --force\n" +
			"replaces what an earlier run wrote there.\n" +
			"--quick runs one repetition of at most three sizes and one socket buffer for at most 2 s each,\n" +
			"or what an experiment's quick: section names.\n" +
			"--clock virtual runs every host as a userspace TCP/IP stack (gVisor's netstack) in model time:\n" +
			"no root, the same figures on every machine; --clock both measures each point both ways.\n" +
			"Virtual points run --jobs at a time (default one per CPU), each on its own lab, their results\n" +
			"written in order, the same bytes as one at a time; real-time points run one at a time.\n" +
			"--shard K/N runs a stable 1/N of the campaign's points, K from 1 to N (as Slurm's array task ids,\n" +
			"$SLURM_ARRAY_TASK_ID): a point's shard is a hash of its variant, experiment, test, size, socket buffer\n" +
			"and repetition, never its position; `atmlab report DIR... --out DIR` merges the shards' folders.\n" +
			"DIR/campaign.json records the campaign's identity (lab file hash, atmlab version, clock, shard).\n" +
			"A real-time run holds a machine-wide lock while it measures: a second one waits for it and says so.\n\n" +
			"Example:\n  sudo atmlab lab run topologies/sw100.yaml --quick\n  atmlab lab run topologies/sw100.yaml --quick --clock virtual\n" +
			"  atmlab lab run topologies/whatif.yaml --clock virtual --shard 2/4 --out results/whatif/shard-2",
		Args: args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, a []string) error {
			clocks, err := clock.ParseChoice(clockFlag)
			if err != nil {
				return err
			}
			vjobs, err := registry.Jobs(jobs)
			if err != nil {
				return err
			}
			if clocks.Has(clock.Real) {
				if err := needsKernel("lab run --clock " + clockFlag); err != nil {
					return err
				}
			}
			if err := view.check(); err != nil {
				return err
			}
			if appendRun && force {
				return usageError{labrun.ErrAppendAndForce}
			}
			var shard labrun.Shard
			if shardFlag != "" {
				if shard, err = labrun.ParseShard(shardFlag); err != nil {
					return usageError{err}
				}
			}
			lab, err := topologies.Load(a[0])
			if err != nil {
				return err
			}
			if !inHolder() { // a holder's child runs this command again
				printWarnings(cmd.ErrOrStderr(), lab)
			}
			if len(lab.Experiments) == 0 {
				return fmt.Errorf("%s has no experiments: add an experiments: section (see docs/experiments.md)", a[0])
			}
			// The lab as written, then each what-if variant (or the sweep's
			// grid points), each made and built now, so that a bad one fails
			// before anything is measured or written.
			variants, err := labrun.Plan(lab, quick)
			if err != nil {
				return err
			}
			vlabs := make([]*topologies.Lab, len(variants))
			for i, v := range variants {
				vlabs[i] = v.Lab
			}
			releaseLock := func() {}
			if clocks.Has(clock.Real) && !inHolder() { // virtual time takes no lock
				release, err := measureLock(func(pid int) {
					fmt.Fprintf(cmd.ErrOrStderr(), "another lab run (pid %d) is measuring on this machine: waiting for it (%s)\n", pid, measureLockPath())
				})
				if err != nil {
					return fmt.Errorf("measuring lock: %w", err)
				}
				defer release()
				releaseLock = release
			}
			if needsHolder() && clocks.Has(clock.Real) { // virtual time needs no namespaces
				code, err := holderRun(vlabs...)
				if err != nil {
					return err
				}
				releaseLock() // the holder measured; os.Exit runs no deferred call
				os.Exit(code)
			}
			if out == "" {
				out = filepath.Join("results", lab.Name+"-"+time.Now().Format("20060102-150405"))
			}
			src, err := os.ReadFile(a[0])
			if err != nil {
				return err
			}
			id := labrun.NewIdentity(lab, src, clocks.String(), quick, shard)
			o, err := labrun.OpenOutput(cmd.Context(), out, appendRun, force, id)
			if err != nil {
				return err
			}
			defer o.Close() // the records closed and checked after the run; this, on an early return
			if err := o.WriteInputs(a[0], src, lab, variants, quick); err != nil {
				return err
			}
			self, err := os.Executable()
			if err != nil {
				return err
			}
			if err := o.Records(); err != nil {
				return err
			}
			camp := &labrun.Campaign{Variants: variants, Clocks: clocks, Shard: shard, Done: o.Done, Self: self, JSONL: o.JSONL, CSV: o.CSV,
				Progress: progressWriter(cmd.ErrOrStderr()), Log: cmd.ErrOrStderr(), Out: out, Jobs: vjobs}
			id.Points = camp.Points()
			if err := labrun.WriteIdentity(o.Dir, id); err != nil {
				return err
			}
			live, err := view.start(cmd.Context(), cmd.ErrOrStderr(), nil)
			if err != nil {
				return err
			}
			if live != nil {
				camp.Watch = live.Watch
				live.ExplorerResults(out) // the explorer plots the points as they land
			}
			camp.Measure = registry.Measure(out, self, liveHook(live))
			restore := registry.Procs(clocks, camp.Jobs)
			total, runErr := camp.Run(cmd.Context())
			restore()
			if err := o.CloseRecords(); err != nil && runErr == nil {
				runErr = err
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "lab %s removed; %d results\n", lab.Name, total)
			// The report renders what was measured, after an interrupt too.
			if err := report.Write(context.WithoutCancel(cmd.Context()), out); err != nil {
				return fmt.Errorf("report: %w", err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "report: %s\n", filepath.Join(out, "report.html"))
			if err := flentInto(context.WithoutCancel(cmd.Context()), cmd, o.Dir); err != nil && runErr == nil {
				runErr = err
			}
			if errors.Is(runErr, context.Canceled) {
				return fmt.Errorf("interrupted after %d points; what was measured is in %s", total, out)
			}
			return runErr
		},
	}
	c.Flags().StringVar(&out, "out", "", "results folder (default results/<lab>-<time>)")
	c.Flags().StringVar(&clockFlag, "clock", "real", "real (namespaces, root), virtual (netstack hosts in model time, no root) or both, side by side")
	c.Flags().StringVar(&shardFlag, "shard", "", "K/N: run the K-th of N stable parts of the campaign's points, K from 1 (as Slurm's $SLURM_ARRAY_TASK_ID)")
	c.Flags().BoolVar(&appendRun, "append", false, "add to the --out folder's results: measure only the points it lacks (the same lab file, atmlab, clock, --quick and shard)")
	c.Flags().BoolVar(&force, "force", false, "replace what an earlier run wrote in the --out folder")
	c.Flags().IntVar(&jobs, "jobs", 0, "virtual-time points measured at once, each on its own lab, results in order as one at a time (0: one per CPU); real-time points run one at a time")
	c.Flags().BoolVar(&quick, "quick", false, "one repetition of at most three sizes and one socket buffer for at most 2 s each")
	view.add(c)
	return c
}
