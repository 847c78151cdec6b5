//go:build !linux || atmlab_stub

package linux

import (
	"context"
	"fmt"
	"runtime"

	"github.com/atmlab/atmlab/backend"
	"github.com/atmlab/atmlab/harness/clock"
	"github.com/atmlab/atmlab/topologies"
)

// Backend is the real-time backend's place where there is no kernel
// runtime: it says so.
type Backend struct{}

func (Backend) Clock() clock.Clock { return clock.Real }

func (Backend) Up(context.Context, *topologies.Lab, backend.Options) (backend.Env, error) {
	return nil, fmt.Errorf("atmlab lab run --clock real needs Linux (network namespaces and TAPs), not %s: run it on a Linux machine, or with --clock virtual", runtime.GOOS)
}
