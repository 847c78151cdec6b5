package main

import (
	"fmt"
	"runtime"
	"time"
)

// loopOptions tune the real-time loop (up's --spin, --linger, --idle-spin).
type loopOptions struct{ spin, linger, idleSpin time.Duration }

// needsLinux is the error of a verb that builds namespaces and TAPs on a
// system without them.
func needsLinux(verb string) error {
	return fmt.Errorf("atmlab %s needs Linux (network namespaces and TAPs), not %s: run it on a Linux machine; here validate, calc, sim, report, perf and lab run --clock virtual work", verb, runtime.GOOS)
}
