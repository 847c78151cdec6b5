package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/atmlab/atmlab/backend/linux"
	"github.com/atmlab/atmlab/harness/labrun"
	"github.com/atmlab/atmlab/internal/clihelp"
	"github.com/atmlab/atmlab/internal/complete"
	"github.com/atmlab/atmlab/topologies"
)

// usageError is a mistake in how a command was called: exit code 2.
type usageError struct{ error }

// usage is err as a usage error when the library that returned it says
// it is the caller's mistake (a BadInput method, as theory.InputError);
// nil and other errors as they are.
func usage(err error) error {
	var bad interface{ BadInput() }
	if errors.As(err, &bad) {
		return usageError{err}
	}
	return err
}

// options are the flags every verb shares.
type options struct {
	output string // table or json
}

func newRoot() *cobra.Command {
	opts := &options{}
	root := &cobra.Command{
		Use:           "atmlab",
		Short:         "ATM/Ethernet link emulator and measurement harness",
		Long:          clihelp.Text("atmlab"),
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, args []string) error {
			return checkOutput(cmd, opts.output)
		},
		Version: labrun.ReadBuild(version, commit).String(),
	}
	root.SetVersionTemplate("atmlab {{.Version}}\n")
	root.PersistentFlags().StringVarP(&opts.output, "output", "o", "table", "output format: table, json or csv, where the command has it (see its help); a format it lacks is refused")
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	for _, verb := range []func(*options) *cobra.Command{
		newValidate, newUp, newDown, newExec, newStats, newSet, newCapture, newSim, newPerf, newCalc, newLab, newReport, newCampaign, newWeb, newVersion, newLs, newInspect, newShell,
	} {
		root.AddCommand(verb(opts))
	}
	root.AddCommand(newCheck(opts))
	root.AddCommand(newGenDocs())
	complete.Attach(root, complete.Labs{
		Running:  func() ([]linux.RunningLab, error) { return runningLabs() },
		Topology: func(ctx context.Context, lab string) (*topologies.View, error) { return labTopology(ctx, lab) },
	})
	clihelp.RefuseUnknownVerbs(root, func(err error) error { return usageError{err} })
	return root
}

// args wraps a cobra argument check so that its failure is a usage error.
func args(check cobra.PositionalArgs) cobra.PositionalArgs {
	return func(cmd *cobra.Command, a []string) error {
		if err := check(cmd, a); err != nil {
			path := strings.TrimPrefix(cmd.CommandPath(), "atmlab ")
			return usageError{fmt.Errorf("%s: %w (see atmlab %s --help)", path, err, path)}
		}
		return nil
	}
}

func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// errInterrupted is what a computing command returns on SIGINT or SIGTERM.
var errInterrupted = errors.New("interrupted")

// interruptible runs f, a computation with nothing to clean up, and returns
// at once when ctx ends (SIGINT or SIGTERM): the process exits, and f with it.
// f's results are safe to read only when it returned something other than
// errInterrupted.
func interruptible(ctx context.Context, f func() error) error {
	if ctx.Err() != nil {
		return errInterrupted
	}
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return errInterrupted
	}
}
