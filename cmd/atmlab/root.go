package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"
)

// usageError is a mistake in how a command was called: exit code 2.
type usageError struct{ error }

// options are the flags every verb shares.
type options struct {
	output string // table or json
}

func newRoot() *cobra.Command {
	opts := &options{}
	root := &cobra.Command{
		Use:           "atmlab",
		Short:         "ATM/Ethernet link emulator and measurement harness",
		Long:          "atmlab builds labs of Linux hosts (network namespaces) joined by emulated switches,\nhubs, ATM links and routers, and measures real traffic through them.\n\nExample:\n  atmlab up topologies/sw100.yaml\n\nDocumentation: README.md and DESIGN.md in the source tree.",
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, args []string) error {
			if opts.output != "table" && opts.output != "json" && opts.output != "csv" {
				return usageError{fmt.Errorf("-o %q: use table, json or csv", opts.output)}
			}
			return nil
		},
	}
	root.PersistentFlags().StringVarP(&opts.output, "output", "o", "table", "output format: table, json, or csv (perf client, calc; others print the table)")
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	for _, verb := range []func(*options) *cobra.Command{
		newValidate, newUp, newDown, newExec, newStats, newSet, newCapture, newSim, newPerf, newCalc, newLab, newReport, newCampaign, newWeb,
	} {
		root.AddCommand(verb(opts))
	}
	root.AddCommand(newCheck(opts))
	return root
}

// args wraps a cobra argument check so that its failure is a usage error.
func args(check cobra.PositionalArgs) cobra.PositionalArgs {
	return func(cmd *cobra.Command, a []string) error {
		if err := check(cmd, a); err != nil {
			return usageError{fmt.Errorf("%s: %w (see atmlab %s --help)", cmd.Name(), err, cmd.Name())}
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
