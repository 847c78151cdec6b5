//go:build !linux || atmlab_stub

package main

// Without Linux there is no kernel runtime: the verbs that need it say so
// (needsLinux); everything else builds and works.

import (
	"context"
	"io"

	"github.com/spf13/cobra"

	"github.com/atmlab/atmlab/backend"
	"github.com/atmlab/atmlab/control"
	"github.com/atmlab/atmlab/topologies"
	"github.com/atmlab/atmlab/topologies/settings"
	"github.com/atmlab/atmlab/web"
)

var defaultLoop loopOptions

func needsKernel(verb string) error { return needsLinux(verb) }

func inHolder() bool                     { return false }
func needsHolder() bool                  { return false }
func runHolder(...*topologies.Lab) error { return needsLinux("lab run") }

func holderRun(...*topologies.Lab) (int, error) { return 0, needsLinux("lab run") }
func measureLock(func(int)) (func(), error)     { return nil, needsLinux("lab run") }
func measureLockPath() string                   { return "" }

// Without labs there is no user's lab to reach.
func asLabUser(string) error     { return nil }
func refuseUserLab(string) error { return nil }

func downLab(string) ([]string, error) { return nil, needsLinux("down") }

// runningLabs: no lab runs in the kernel here.
var runningLabs = func() ([]runningLab, error) { return nil, nil }

func execIn(string, string, []string) error { return needsLinux("exec") }

func queryStats(context.Context, string) (*control.Stats, error) {
	return nil, needsLinux("stats")
}

func setLink(context.Context, string, string, string, settings.Change) (*control.Changed, error) {
	return nil, needsLinux("set")
}

func queryTopology(context.Context, string) (*topologies.View, error) {
	return nil, needsLinux("web")
}

func captureLink(context.Context, string, string, bool, io.Writer, int) (int, bool, error) {
	return 0, false, needsLinux("capture")
}

func runUp(*cobra.Command, *topologies.Lab, loopOptions, string, webFlags) error {
	return needsLinux("up")
}

// liveHook: no real-time lab runs here for the live view to show.
func liveHook(*web.Server) func(backend.Env) func() { return nil }
