package main

import (
	"cmp"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/atmlab/atmlab/harness/labrun"
	"github.com/atmlab/atmlab/harness/report"
	"github.com/atmlab/atmlab/harness/results"
	"github.com/atmlab/atmlab/topologies"
)

func newLab(opts *options) *cobra.Command {
	lab := &cobra.Command{Use: "lab", Short: "Run a lab's experiments end to end"}
	lab.AddCommand(newLabRun(opts))
	return lab
}

func newLabRun(opts *options) *cobra.Command {
	var out, clock, shardFlag string
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
			clocks, err := clocksOf(clock)
			if err != nil {
				return err
			}
			vjobs, err := virtualJobs(jobs)
			if err != nil {
				return err
			}
			if slices.Contains(clocks, "real") {
				if err := needsKernel("lab run --clock " + clock); err != nil {
					return err
				}
			}
			if err := view.check(); err != nil {
				return err
			}
			if appendRun && force {
				return usageError{errors.New("lab run: --append keeps the folder's results, --force replaces them: give one")}
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
			names := make([]string, len(variants))
			for i, v := range variants {
				vlabs[i], names[i] = v.Lab, v.Name
			}
			releaseLock := func() {}
			if slices.Contains(clocks, "real") && !inHolder() { // virtual time takes no lock
				release, err := measureLock(func(pid int) {
					fmt.Fprintf(cmd.ErrOrStderr(), "another lab run (pid %d) is measuring on this machine: waiting for it (%s)\n", pid, measureLockPath())
				})
				if err != nil {
					return fmt.Errorf("measuring lock: %w", err)
				}
				defer release()
				releaseLock = release
			}
			if needsHolder() && slices.Contains(clocks, "real") { // virtual time needs no namespaces
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
			id := labrun.NewIdentity(lab, src, cmp.Or(clock, "real"), quick, shard)
			dir, done, err := openRunFolder(cmd.Context(), out, appendRun, force, id)
			if err != nil {
				return err
			}
			defer dir.Close()
			if err := dir.WriteFile(labrun.LabFile, src, 0o644); err != nil {
				return err
			}
			spec, err := topologies.SpecJSON(names, vlabs) // what each variant was built from
			if err == nil {
				err = dir.WriteFile(topologies.SpecFile, spec, 0o644)
			}
			if err != nil {
				return err
			}
			if err := labrun.CopyReferences(dir, a[0], lab); err != nil {
				return err
			}
			if quick {
				if err := dir.WriteFile(labrun.QuickMarker, nil, 0o644); err != nil { // the report says so
					return err
				}
			}
			if err := labrun.WriteFigures(dir, labrun.ResolveReferences(lab)); err != nil {
				return err
			}
			self, err := os.Executable()
			if err != nil {
				return err
			}
			jsonl, _, err := dir.Append(labrun.RecordsFile) // empty unless --append
			if err != nil {
				return err
			}
			defer jsonl.Close() // closed and checked after the run; this, on an early return
			csvFile, csvEmpty, err := dir.Append(labrun.CSVFile)
			if err != nil {
				return err
			}
			defer csvFile.Close() // as jsonl
			csvw := csv.NewWriter(csvFile)
			if csvEmpty {
				if err := csvw.Write(labrun.CSVHeader); err != nil {
					return err
				}
			}
			camp := &labrun.Campaign{Variants: variants, Clocks: clocks, Shard: shard, Done: done, Self: self, JSONL: jsonl, CSV: csvw,
				Progress: progressWriter(cmd.ErrOrStderr()), Log: cmd.ErrOrStderr(), Out: out, Jobs: vjobs}
			id.Points = camp.Points()
			if err := labrun.WriteIdentity(dir, id); err != nil {
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
			camp.Measure = func(ctx context.Context, clk string, r *labrun.Runner) (int, error) {
				if clk == "virtual" {
					return runVirtual(ctx, r.Lab, r, out)
				}
				return runVariant(ctx, r.Lab, r, live)
			}
			restore := procsIfVirtual(clocks, camp.Jobs)
			total, runErr := camp.Run(cmd.Context())
			restore()
			if err := cmp.Or(jsonl.Close(), csvFile.Close()); err != nil && runErr == nil {
				runErr = fmt.Errorf("results: %w", err)
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "lab %s removed; %d results\n", lab.Name, total)
			// The report renders what was measured, after an interrupt too.
			if err := report.Write(context.WithoutCancel(cmd.Context()), out); err != nil {
				return fmt.Errorf("report: %w", err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "report: %s\n", filepath.Join(out, "report.html"))
			if err := flentInto(context.WithoutCancel(cmd.Context()), cmd, dir); err != nil && runErr == nil {
				runErr = err
			}
			if errors.Is(runErr, context.Canceled) {
				return fmt.Errorf("interrupted after %d points; what was measured is in %s", total, out)
			}
			return runErr
		},
	}
	c.Flags().StringVar(&out, "out", "", "results folder (default results/<lab>-<time>)")
	c.Flags().StringVar(&clock, "clock", "real", "real (namespaces, root), virtual (netstack hosts in model time, no root) or both, side by side")
	c.Flags().StringVar(&shardFlag, "shard", "", "K/N: run the K-th of N stable parts of the campaign's points, K from 1 (as Slurm's $SLURM_ARRAY_TASK_ID)")
	c.Flags().BoolVar(&appendRun, "append", false, "add to the --out folder's results: measure only the points it lacks (the same lab file, atmlab, clock, --quick and shard)")
	c.Flags().BoolVar(&force, "force", false, "replace what an earlier run wrote in the --out folder")
	c.Flags().IntVar(&jobs, "jobs", 0, "virtual-time points measured at once, each on its own lab, results in order as one at a time (0: one per CPU); real-time points run one at a time")
	c.Flags().BoolVar(&quick, "quick", false, "one repetition of at most three sizes and one socket buffer for at most 2 s each")
	view.add(c)
	return c
}

// runFiles are what lab run writes in its folder beyond what it always
// rewrites: --force removes them, so that nothing of an earlier run (its
// records, a --quick marker, another variant's virtual setup) passes for
// this one's.
var runFiles = []string{labrun.RecordsFile, labrun.CSVFile, labrun.QuickMarker, labrun.IdentityFile, "report.md", "report.html"}

// openRunFolder opens lab run's --out folder: a new or empty one; with
// appendRun one of the same campaign (id), whose points measured it
// returns (labrun.DoneKey) so that they are not measured again; with
// force any folder of the caller's, cleared of an earlier run's files.
func openRunFolder(ctx context.Context, out string, appendRun, force bool, id labrun.Identity) (*results.Folder, map[string]bool, error) {
	mode := results.Fresh
	switch {
	case appendRun:
		mode = results.Append
	case force:
		mode = results.Force
	}
	dir, err := results.Create(out, mode)
	if errors.Is(err, results.ErrNotEmpty) {
		return nil, nil, fmt.Errorf("--out %v: --append adds this run's points to its results (only those it lacks), --force replaces them, or give a new folder", err)
	}
	if err != nil {
		return nil, nil, err
	}
	switch {
	case force:
		names, err := dir.List()
		for _, n := range names {
			if err == nil && (slices.Contains(runFiles, n) || strings.HasPrefix(n, "virtual-") && strings.HasSuffix(n, ".json")) {
				err = dir.Remove(n)
			}
		}
		if err != nil {
			dir.Close()
			return nil, nil, err
		}
	case appendRun:
		done, err := appendable(ctx, dir, id)
		if err != nil {
			dir.Close()
			return nil, nil, err
		}
		return dir, done, nil
	}
	return dir, nil, nil
}

// appendable checks that a folder's results are of the campaign id names
// (or that it has none) and returns the points they hold.
func appendable(ctx context.Context, dir *results.Folder, id labrun.Identity) (map[string]bool, error) {
	old, err := labrun.IdentityOf(dir)
	if errors.Is(err, fs.ErrNotExist) {
		if dir.Exists(labrun.RecordsFile) {
			return nil, fmt.Errorf("--append: %s has results but no %s: not a folder lab run wrote; give a new --out", dir.Path(), labrun.IdentityFile)
		}
		return nil, nil // nothing measured yet
	}
	if err != nil {
		return nil, err
	}
	switch {
	case old.SHA256 != id.SHA256:
		err = fmt.Errorf("its results are of another lab file (%s, sha256 %.12s; this is %.12s)", old.File, old.SHA256, id.SHA256)
	case old.Version != id.Version:
		err = fmt.Errorf("its results were measured by atmlab %s, this is %s", old.Version, id.Version)
	case old.Clock != id.Clock || old.Quick != id.Quick:
		err = fmt.Errorf("its results ran --clock %s (quick %v), this run --clock %s (quick %v)", old.Clock, old.Quick, id.Clock, id.Quick)
	case old.Shard != id.Shard:
		err = fmt.Errorf("its results are shard %q, this run %q", old.Shard, id.Shard)
	}
	if err != nil {
		return nil, fmt.Errorf("--append to %s: %w: one folder holds one campaign; give a new --out, or --force to replace them", dir.Path(), err)
	}
	recs, err := labrun.Records(ctx, dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	done := map[string]bool{}
	for _, r := range recs { // a failed point too: a folder holds a point once
		done[labrun.DoneKey(r.Point, r.Clock)] = true
	}
	return done, nil
}

// writeResultsFile replaces a file directly in a results folder (the
// caller's own, as results.Open checks), never through a link.
func writeResultsFile(path string, data []byte, perm fs.FileMode) error {
	dir, err := results.Open(filepath.Dir(path))
	if err != nil {
		return err
	}
	defer dir.Close()
	return dir.WriteFile(filepath.Base(path), data, perm)
}
