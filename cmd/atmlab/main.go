// Command atmlab builds emulated ATM/Ethernet labs of Linux hosts and
// measures traffic through them. See docs/design.md and README.md.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/atmlab/atmlab/backend/linux"
)

// armed runs once SIGINT and SIGTERM cancel the command's context instead of
// ending the process; a test that signals a child atmlab waits for it.
var armed = func() {}

func main() {
	linux.KeepAwakeIfAsked() // up --keep-cpus-awake's child: never returns
	// A reader of our output that went away (`atmlab up lab.yaml | tee
	// log` under Ctrl-C ends tee too) must not end a command that is
	// removing what it made: a write to a closed pipe fails (EPIPE)
	// instead of killing the process. Caught, not ignored, so that the
	// commands we start in a host get SIGPIPE's usual default.
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	armed()
	err := newRoot().ExecuteContext(ctx)
	stop()
	if errors.Is(err, syscall.EPIPE) {
		os.Exit(128 + int(syscall.SIGPIPE)) // as a pipe's writer ends when its reader has gone
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "atmlab:", err)
		var u usageError
		if errors.As(err, &u) {
			os.Exit(2)
		}
		os.Exit(1)
	}
}
