// Package registry lists the runtime backends a lab run may measure by,
// one line each, and chooses one by its clock: the one place that knows
// them all (a new backend is a package of its own and a line here).
package registry

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"

	"github.com/atmlab/atmlab/backend"
	"github.com/atmlab/atmlab/backend/linux"
	"github.com/atmlab/atmlab/backend/virtual"
	"github.com/atmlab/atmlab/harness/clock"
	"github.com/atmlab/atmlab/harness/labrun"
)

// backends are the runtimes, the first of each clock chosen for it.
var backends = []backend.Backend{
	linux.Backend{},
	virtual.Backend{},
}

// For is the backend that measures by clock c.
func For(c clock.Clock) (backend.Backend, error) {
	for _, b := range backends {
		if b.Clock() == c {
			return b, nil
		}
	}
	return nil, fmt.Errorf("no backend measures in %s time", c)
}

// Measure is a Campaign's Measure for a run whose results go to out and
// whose real-time hosts run self: it brings r's variant up with the
// clock's backend, runs r and tears the lab down. up, if set, is called
// once the lab is up (the live view shows it) and returns what to do
// before it is torn down.
func Measure(out, self string, up func(backend.Env) (done func())) func(ctx context.Context, c clock.Clock, r *labrun.Runner) (int, error) {
	return MeasureOn(out, self, "", up, nil)
}

// MeasureOn is Measure with a virtual lab's points measured on workers
// (nil: in this process), a lab with parts: run as split says
// (backend.Options).
func MeasureOn(out, self, split string, up func(backend.Env) (done func()), workers *virtual.Workers) func(ctx context.Context, c clock.Clock, r *labrun.Runner) (int, error) {
	return func(ctx context.Context, c clock.Clock, r *labrun.Runner) (int, error) {
		b, err := For(c)
		if err != nil {
			return 0, err
		}
		env, err := b.Up(ctx, r.Lab, backend.Options{Variant: r.Variant, Self: self, Out: out, Split: split})
		if err != nil {
			return 0, err
		}
		defer env.Close()
		if ve, ok := env.(virtual.Env); ok && workers != nil {
			env = ve.With(workers, r.Variant)
		}
		if up != nil {
			defer up(env)()
		}
		recs, err := env.Run(ctx, r)
		return len(recs), err
	}
}

// Jobs is how many virtual points a run measures at once: jobs, or by
// default (0) one per CPU.
func Jobs(jobs int) (int, error) {
	if jobs < 0 {
		return 0, fmt.Errorf("--jobs %d: give 1 or more virtual points at once (0: one per CPU, %d here)", jobs, runtime.NumCPU())
	}
	if jobs == 0 {
		return runtime.NumCPU(), nil
	}
	return jobs, nil
}

// Procs sets GOMAXPROCS to the points measured at once (jobs, or the run's
// points if fewer: a run of one point takes one processor) for a run
// whose clocks are all virtual and returns what restores it. A virtual
// point is one goroutine at a time (netstack's processors run only while
// the driver waits at a barrier), so a processor per point is all it
// uses; more buy nothing but handoffs between threads: one 10-s 100M TCP
// point used 1.53 s of CPU at GOMAXPROCS 1 and 2.25 s at 2 (1.5 k context
// switches against 51 k), byte-identical records. A run that measures in
// real time too keeps its processors (the emulator's loop and the hosts'
// tools need them), and so does one whose GOMAXPROCS the environment sets
// (scripts/determinism.sh compares runs under 2 and 1).
func Procs(clocks clock.Choice, jobs, points int) (restore func()) {
	if !clocks.Only(clock.Virtual) || os.Getenv("GOMAXPROCS") != "" {
		return func() {}
	}
	prev := runtime.GOMAXPROCS(max(min(jobs, points), 1))
	return func() { runtime.GOMAXPROCS(prev) }
}

// GC makes the garbage collector run less often for a run whose clocks
// are all virtual (virtual.GCPercent, with virtual.MemoryLimit as a soft
// limit) and returns what restores it.
// A virtual point allocates a packet buffer or two per frame and keeps
// little: one 3-s 100M TCP and 1G UDP point used 15 % less CPU than at
// Go's default of 100, with the same records (collection does not touch
// model time). A run that measures in real time too keeps the default,
// and so does one whose GOGC or GOMEMLIMIT the environment sets.
func GC(clocks clock.Choice) (restore func()) {
	if !clocks.Only(clock.Virtual) || os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return func() {}
	}
	prevPercent := debug.SetGCPercent(virtual.GCPercent)
	prevLimit := debug.SetMemoryLimit(virtual.MemoryLimit)
	return func() {
		debug.SetGCPercent(prevPercent)
		debug.SetMemoryLimit(prevLimit)
	}
}
