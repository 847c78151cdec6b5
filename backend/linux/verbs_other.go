//go:build !linux || atmlab_stub

package linux

// Without Linux there is no kernel runtime: the verbs that need it say so
// (NeedsLinux); everything else builds and works.

import (
	"context"
	"io"

	"github.com/atmlab/atmlab/backend"
	"github.com/atmlab/atmlab/control"
	"github.com/atmlab/atmlab/topologies"
	"github.com/atmlab/atmlab/topologies/settings"
)

// DefaultLoop: no real-time loop runs here.
var DefaultLoop Loop

func NeedsKernel(verb string) error { return NeedsLinux(verb) }

func KeepAwakeIfAsked() {}

func InHolder() bool                     { return false }
func NeedsHolder() bool                  { return false }
func RunHolder(...*topologies.Lab) error { return NeedsLinux("lab run") }

func HolderRun(...*topologies.Lab) (int, error) { return 0, NeedsLinux("lab run") }
func MeasureLock(func(int)) (func(), error)     { return nil, NeedsLinux("lab run") }
func MeasureLockPath() string                   { return "" }

// Without labs there is no user's lab to reach.
func AsLabUser(string) error     { return nil }
func RefuseUserLab(string) error { return nil }

func Down(string) ([]string, error) { return nil, NeedsLinux("down") }

// Running: no lab runs in the kernel here.
func Running() ([]RunningLab, error) { return nil, nil }

func Exec(string, string, []string) error { return NeedsLinux("exec") }

func Stats(context.Context, string) (*control.Stats, error) { return nil, NeedsLinux("stats") }

func Set(context.Context, string, string, string, settings.Change) (*control.Changed, error) {
	return nil, NeedsLinux("set")
}

func Topology(context.Context, string) (*topologies.View, error) { return nil, NeedsLinux("web") }

func Capture(context.Context, string, string, bool, io.Writer, int) (int, bool, error) {
	return 0, false, NeedsLinux("capture")
}

// Foreground is atmlab up, which needs Linux.
type Foreground struct {
	Part     Part
	Loop     Loop
	Profile  string
	Out, Log io.Writer
	View     func(ctx context.Context, src Source) (url string, err error)
}

func (Foreground) Run(context.Context, *topologies.Lab) error { return NeedsLinux("up") }

// Source: no lab runs in this process for the live view to show.
type Source struct{}

func LiveSource(backend.Env) (Source, bool) { return Source{}, false }

func (Source) Topology(context.Context) (topologies.View, error) {
	return topologies.View{}, NeedsLinux("up")
}
func (Source) Stats(context.Context) (any, error) { return nil, NeedsLinux("up") }
func (Source) Set(context.Context, string, string, settings.Change) (any, error) {
	return nil, NeedsLinux("up")
}
