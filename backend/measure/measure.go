// Package measure is atmlab lab run past its flags: the lab loaded and
// planned, the machine's measuring lock (or a rootless holder) for real
// time, every point measured by its clock's backend into the results
// folder, then the report and the flent files, after an interrupt too.
package measure

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/atmlab/atmlab/backend"
	"github.com/atmlab/atmlab/backend/linux"
	"github.com/atmlab/atmlab/backend/registry"
	"github.com/atmlab/atmlab/backend/virtual"
	"github.com/atmlab/atmlab/harness/clock"
	"github.com/atmlab/atmlab/harness/flent"
	"github.com/atmlab/atmlab/harness/labrun"
	"github.com/atmlab/atmlab/topologies/labfile"
	"github.com/atmlab/atmlab/validate"
)

// View is the live view a run shows itself in (web.Server).
type View interface {
	Watch(labrun.Progress)
	ExplorerResults(dir string)
}

// Lab is one lab run: Start's fields from the flags (File, Clocks, Quick,
// Append, Force, Out, Shard, Jobs, Progress, Log); Load fills the lab and
// its variants.
type Lab struct {
	labrun.Start
	Stdout io.Writer // where the report's path is said
	// Live starts the live view, if one was asked for, once the results
	// folder is open: the view (nil for none) and what shows a lab while
	// it is up (web.LiveHook).
	Live func() (View, func(backend.Env) func(), error)
	// Report renders a results folder's report (report.Write: the
	// plotting library stays in the report and the command that links it).
	Report func(ctx context.Context, dir string) error
	// Split is how a lab with parts: runs in virtual time (backend.Options).
	Split string
}

// Load loads the lab file and plans the run: the lab as written, then
// each what-if variant (or the sweep's grid points), each made and built
// now, so that a bad one fails before anything is measured or written.
// It refuses real time where there is no kernel runtime, and prints the
// lab file's warnings, unless a holder's child runs it.
func (l *Lab) Load() (err error) {
	if l.Clocks.Has(clock.Real) { // real time builds namespaces and TAPs
		if err := linux.NeedsKernel("lab run --clock " + l.Clocks.String()); err != nil {
			return err
		}
	}
	if l.Lab, err = labfile.Load(l.File); err != nil {
		return err
	}
	if !linux.InHolder() && !virtual.InWorker() && !virtual.InPart() { // a holder's child, a point worker or a part's process runs this command again
		validate.Warnings(l.Log, l.Lab)
	}
	if len(l.Lab.Experiments) == 0 {
		return fmt.Errorf("%s has no experiments: add an experiments: section (see docs/experiments.md)", l.File)
	}
	l.Variants, err = labrun.Plan(l.Lab, l.Quick)
	return err
}

// Run takes the measuring lock for real time (or hands the run to a
// rootless holder) and measures.
func (l *Lab) Run(ctx context.Context) error {
	if virtual.InWorker() {
		return virtual.Work(ctx, l.Variants, os.Stdin, l.Stdout)
	}
	if virtual.InPart() {
		return virtual.ServePart(ctx, l.Lab)
	}
	release, err := linux.LockOrHold(l.Clocks, l.Variants, l.Log)
	if err != nil {
		return err
	}
	defer release()
	return l.measure(ctx)
}

// measure measures the planned run into its results folder, with the
// live view if asked, and renders its report and flent files, after an
// interrupt too.
func (l *Lab) measure(ctx context.Context) error {
	o, camp, err := l.Begin(ctx)
	if err != nil {
		return err
	}
	defer o.Close() // the records closed and checked after the run; this, on an early return
	out := camp.Out
	var up func(backend.Env) func()
	if l.Live != nil {
		var view View
		if view, up, err = l.Live(); err != nil {
			return err
		}
		if view != nil {
			camp.Watch = view.Watch
			view.ExplorerResults(out) // the explorer plots the points as they land
		}
	}
	var workers *virtual.Workers
	if l.Clocks.Only(clock.Virtual) && camp.Jobs > 1 && camp.Points() > 1 && !testing.Testing() && l.Split == "" {
		workers = virtual.NewWorkers(camp.Self, l.File, l.Quick, min(camp.Jobs, camp.Points()), l.Log)
	}
	camp.Measure = registry.MeasureOn(out, camp.Self, l.Split, up, workers)
	restore, restoreGC := registry.Procs(l.Clocks, camp.Jobs, camp.Points()), registry.GC(l.Clocks)
	total, runErr := camp.Run(ctx)
	if workers != nil {
		if err := workers.Close(); err != nil && runErr == nil {
			runErr = err
		}
	}
	restore()
	restoreGC()
	if err := o.CloseRecords(); err != nil && runErr == nil {
		runErr = err
	}
	fmt.Fprintf(l.Log, "lab %s removed; %d results\n", l.Lab.Name, total)
	// The report renders what was measured, after an interrupt too.
	if err := l.Report(context.WithoutCancel(ctx), out); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	fmt.Fprintf(l.Stdout, "report: %s\n", filepath.Join(out, "report.html"))
	if err := flent.WriteSaying(context.WithoutCancel(ctx), o.Dir, l.Stdout); err != nil && runErr == nil {
		runErr = err
	}
	if errors.Is(runErr, context.Canceled) {
		return fmt.Errorf("interrupted after %d points; what was measured is in %s", total, out)
	}
	return runErr
}
