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
)

// armed runs once SIGINT and SIGTERM cancel the command's context instead of
// ending the process; a test that signals a child atmlab waits for it.
var armed = func() {}

func main() {
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
