package main

import (
	"fmt"

	"github.com/atmlab/atmlab/harness/clock"
)

// refuseVirtualUp is up's answer to --clock virtual.
func refuseVirtualUp(flag string) error {
	c, err := clock.ParseChoice(flag)
	if err != nil {
		return fmt.Errorf("unknown clock %q: atmlab up runs in real time only (--clock real)", flag)
	}
	if c.Has(clock.Virtual) {
		return fmt.Errorf("atmlab up --clock %s: a virtual-time lab has no real hosts to attach to (no namespaces, no TAPs, nothing to exec into); run its experiments with `atmlab lab run FILE --clock virtual`", flag)
	}
	return nil
}
