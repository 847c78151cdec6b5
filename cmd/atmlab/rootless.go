package main

import (
	"os"

	"github.com/atmlab/atmlab/kernel"
	"github.com/atmlab/atmlab/topologies"
)

// runHolder runs this command again, as a normal user, in a rootless lab's
// holder (its own user, mount and network namespaces; see
// kernel/rootless.go) and exits with the holder's exit code.
// labs are what the holder will build. It returns only on failure.
func runHolder(labs ...*topologies.Lab) error {
	code, err := kernel.RunHolder(os.Args[1:], labs...)
	if err != nil {
		return err
	}
	os.Exit(code)
	return nil
}
