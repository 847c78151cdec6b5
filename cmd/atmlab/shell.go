package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/atmlab/atmlab/control"
	"github.com/atmlab/atmlab/internal/clihelp"
	"github.com/atmlab/atmlab/internal/labshell"
	"github.com/atmlab/atmlab/topologies/settings"
)

func newShell(opts *options) *cobra.Command {
	return &cobra.Command{
		Use:   "shell NAME",
		Short: "A prompt on a running lab where node names stand for addresses: h1 ping h2, pingall, iperf h1 h2",
		Long:  clihelp.Text("shell"),
		Args:  args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, a []string) error {
			if err := needsKernel("shell"); err != nil {
				return err
			}
			if err := asLabUser(a[0]); err != nil {
				return err
			}
			view, err := queryTopology(cmd.Context(), a[0])
			if err != nil {
				return err
			}
			self, err := os.Executable()
			if err != nil {
				return err
			}
			// Ctrl-C is the running command's: it must not end the shell,
			// which SIGTERM still does.
			interrupts := make(chan os.Signal, 1)
			signal.Notify(interrupts, os.Interrupt)
			defer signal.Stop(interrupts)
			ctx, stop := signal.NotifyContext(context.WithoutCancel(cmd.Context()), syscall.SIGTERM)
			defer stop()
			sh := &labshell.Shell{Lab: shellLab{name: a[0], self: self}, View: *view, Stdout: cmd.OutOrStdout(), Stderr: cmd.ErrOrStderr()}
			if term.IsTerminal(int(os.Stdin.Fd())) {
				sh.Stdin = os.Stdin
				fmt.Fprintf(sh.Stdout, "lab %s: %d nodes, %d links; type help for the commands, exit or Ctrl-D to leave\n", view.Lab, len(view.Nodes), len(view.Links))
				in := labshell.NewTerminal(os.Stdin, sh.Stdout, a[0]+"> ")
				defer in.Close()
				sh.Loop(ctx, in, interrupts)
				return terminated(ctx)
			}
			if n := sh.Loop(ctx, labshell.NewScript(cmd.InOrStdin()), interrupts); n > 0 {
				return fmt.Errorf("%d lines failed", n)
			}
			return terminated(ctx)
		},
	}
}

// terminated is errInterrupted once ctx ended (SIGTERM).
func terminated(ctx context.Context) error {
	if ctx.Err() != nil {
		return errInterrupted
	}
	return nil
}

// shellLab reaches a running lab for the shell through the verbs' own
// calls: a node's command is `atmlab exec`, so that it enters the host
// (and a rootless lab's holder) exactly as exec does.
type shellLab struct{ name, self string }

func (l shellLab) Command(ctx context.Context, node string, argv []string) *exec.Cmd {
	return exec.CommandContext(ctx, l.self, append([]string{"exec", l.name, node, "--"}, argv...)...)
}

func (l shellLab) Set(ctx context.Context, endpoint, direction string, c settings.Change) (*control.Changed, error) {
	return setLink(ctx, l.name, endpoint, direction, c)
}

func (l shellLab) Stats(ctx context.Context, w io.Writer) error {
	st, err := queryStats(ctx, l.name)
	if err != nil {
		return err
	}
	st.WriteText(w)
	return nil
}

func (l shellLab) Capture(ctx context.Context, endpoint string, cells bool, w io.Writer, count int) (int, error) {
	n, _, err := captureLink(ctx, l.name, endpoint, cells, w, count)
	return n, err
}
