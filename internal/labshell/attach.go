package labshell

// The shell on a running lab, as atmlab shell runs it.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"syscall"

	"golang.org/x/term"

	"github.com/atmlab/atmlab/backend/linux"
	"github.com/atmlab/atmlab/control"
	"github.com/atmlab/atmlab/topologies/settings"
)

// ErrTerminated is what Attach returns once SIGTERM ended the shell.
var ErrTerminated = errors.New("interrupted")

// Attach runs the shell on the running lab named lab until the input
// ends: from the terminal (line editing and history) when in is one, else
// from in as a script, whose failed lines make an error. Ctrl-C stops the
// running command, not the shell; SIGTERM ends it.
func Attach(ctx context.Context, lab string, in io.Reader, out, errOut io.Writer) error {
	view, err := linux.Topology(ctx, lab)
	if err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	// Ctrl-C is the running command's: it must not end the shell, which
	// SIGTERM still does.
	interrupts := make(chan os.Signal, 1)
	signal.Notify(interrupts, os.Interrupt)
	defer signal.Stop(interrupts)
	ctx, stop := signal.NotifyContext(context.WithoutCancel(ctx), syscall.SIGTERM)
	defer stop()
	sh := &Shell{Lab: running{name: lab, self: self}, View: *view, Stdout: out, Stderr: errOut}
	if f, ok := in.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		sh.Stdin = f
		fmt.Fprintf(out, "lab %s: %d nodes, %d links; type help for the commands, exit or Ctrl-D to leave\n", view.Lab, len(view.Nodes), len(view.Links))
		t := NewTerminal(f, out, lab+"> ")
		defer t.Close()
		sh.Loop(ctx, t, interrupts)
	} else if n := sh.Loop(ctx, NewScript(in), interrupts); n > 0 {
		return fmt.Errorf("%d lines failed", n)
	}
	if ctx.Err() != nil {
		return ErrTerminated
	}
	return nil
}

// running reaches a running lab for the shell through the verbs' own
// calls: a node's command is `atmlab exec`, so that it enters the host
// (and a rootless lab's holder) exactly as exec does.
type running struct{ name, self string }

func (l running) Command(ctx context.Context, node string, argv []string) *exec.Cmd {
	return exec.CommandContext(ctx, l.self, append([]string{"exec", l.name, node, "--"}, argv...)...)
}

func (l running) Set(ctx context.Context, endpoint, direction string, c settings.Change) (*control.Changed, error) {
	return linux.Set(ctx, l.name, endpoint, direction, c)
}

func (l running) Stats(ctx context.Context, w io.Writer) error {
	st, err := linux.Stats(ctx, l.name)
	if err != nil {
		return err
	}
	st.WriteText(w)
	return nil
}

func (l running) Capture(ctx context.Context, endpoint string, cells bool, w io.Writer, count int) (int, error) {
	n, _, err := linux.Capture(ctx, l.name, endpoint, cells, w, count)
	return n, err
}
