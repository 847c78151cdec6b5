//go:build linux && !atmlab_stub

package main

// The verbs' side of package kernel, the Linux-only runtime: every call
// into it is here, and kernel_other.go says "needs Linux" in its place on
// other systems (and in a Linux build with the tag atmlab_stub, which
// tests it).

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/atmlab/atmlab/backend"
	"github.com/atmlab/atmlab/control"
	"github.com/atmlab/atmlab/internal/cpuprofile"
	"github.com/atmlab/atmlab/kernel"
	"github.com/atmlab/atmlab/topologies"
	"github.com/atmlab/atmlab/topologies/settings"
	"github.com/atmlab/atmlab/web"
)

// defaultLoop is the real-time loop's tuning unless up's flags change it.
var defaultLoop = loopOptions{spin: kernel.DefaultSpin, linger: kernel.DefaultLinger, idleSpin: kernel.DefaultIdleSpin}

// needsKernel says whether verb can run here: always, on Linux.
func needsKernel(verb string) error { return nil }

func inHolder() bool    { return kernel.InHolder() }
func needsHolder() bool { return kernel.NeedsHolder() }

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

// holderRun runs this command again in a rootless lab's holder and
// returns the holder's exit code.
func holderRun(labs ...*topologies.Lab) (int, error) { return kernel.RunHolder(os.Args[1:], labs...) }

// measureLock takes the machine-wide measuring lock (kernel.MeasureLock).
func measureLock(waiting func(pid int)) (func(), error) { return kernel.MeasureLock(waiting) }
func measureLockPath() string                           { return kernel.MeasureLockPath() }

func downLab(name string) ([]string, error) { return kernel.Down(name) }

// runningLabs lists the labs whose control sockets answer (atmlab ls,
// completion); tests replace it.
var runningLabs = func() ([]runningLab, error) {
	labs, err := kernel.Running()
	out := make([]runningLab, len(labs))
	for i, l := range labs {
		out[i] = runningLab(l)
	}
	return out, err
}

func execIn(lab, node string, argv []string) error { return kernel.Exec(lab, node, argv) }

func queryStats(ctx context.Context, lab string) (*control.Stats, error) {
	return kernel.QueryStats(ctx, lab)
}

func setLink(ctx context.Context, lab, endpoint, direction string, c settings.Change) (*control.Changed, error) {
	return kernel.SetLink(ctx, lab, endpoint, direction, c)
}

func queryTopology(ctx context.Context, lab string) (*topologies.View, error) {
	return kernel.QueryTopology(ctx, lab)
}

func captureLink(ctx context.Context, lab, endpoint string, cellMode bool, w io.Writer, count int) (int, bool, error) {
	return kernel.Capture(ctx, lab, endpoint, cellMode, w, count)
}

// runUp builds lab in the kernel and runs it until cmd's context ends.
func runUp(cmd *cobra.Command, lab *topologies.Lab, loop loopOptions, profile string, view webFlags) error {
	if profile != "" {
		stop, err := cpuprofile.Start(profile)
		if err != nil {
			return err
		}
		defer stop()
	}
	k, err := kernel.Up(lab)
	if err != nil {
		return err
	}
	defer k.Close()
	k.Loop.Spin, k.Loop.Linger, k.Loop.IdleSpin = loop.spin, loop.linger, loop.idleSpin
	k.Events = cmd.ErrOrStderr()
	for _, n := range k.Notes {
		fmt.Fprintf(cmd.ErrOrStderr(), "note: %s\n", n)
	}
	webCtx, stopWeb := context.WithCancel(cmd.Context())
	defer stopWeb()
	if _, err := view.start(webCtx, cmd.OutOrStdout(), inProcess{k}); err != nil {
		return err
	}
	if view.bound != "" {
		defer kernel.AdvertiseWeb(lab.Name, "http://"+view.bound+"/")()
	}
	hosts := len(k.Namespaces())
	fmt.Fprintf(cmd.OutOrStdout(), "lab %s ready: %d hosts, %d links; atmlab exec %s NODE -- CMD to use it, Ctrl-C to stop\n",
		lab.Name, hosts, len(lab.Links), lab.Name)
	runErr := k.Run(cmd.Context())
	st := k.Loop.Stats()
	fmt.Fprintf(cmd.ErrOrStderr(), "lab %s stopping after %v: emulator CPU %.0f%%, release lateness p50 %v p99 %v max %v\n",
		lab.Name, st.Uptime.Round(time.Millisecond), 100*st.CPU, st.Lateness.P50, st.Lateness.P99, st.Lateness.Max)
	if err := k.Close(); err != nil {
		return fmt.Errorf("tear down %s: %w", lab.Name, err)
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "lab %s removed\n", lab.Name)
	return runErr
}

// liveHook is what shows a lab run's real-time lab in the live view while
// it is up (registry.Measure's up): nil without a live view.
func liveHook(live *web.Server) func(backend.Env) func() {
	if live == nil {
		return nil
	}
	return func(env backend.Env) func() {
		k, ok := env.(interface{ Kernel() *kernel.Lab })
		if !ok {
			return func() {} // a virtual lab has nothing to show live
		}
		live.SetSource(inProcess{k.Kernel()})
		return func() { live.SetSource(nil) }
	}
}

// inProcess is a lab this process runs (up --web, lab run --web), as the
// live view sees it.
type inProcess struct{ k *kernel.Lab }

func (p inProcess) Topology(context.Context) (topologies.View, error) { return p.k.Lab.View(), nil }

func (p inProcess) Stats(ctx context.Context) (any, error) { return p.k.Stats(ctx) }

func (p inProcess) Set(ctx context.Context, endpoint, direction string, c settings.Change) (any, error) {
	return p.k.Set(ctx, endpoint, direction, c)
}
