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
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	armed()
	err := newRoot().ExecuteContext(ctx)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "atmlab:", err)
		var u usageError
		if errors.As(err, &u) {
			os.Exit(2)
		}
		os.Exit(1)
	}
}
