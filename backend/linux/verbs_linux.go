//go:build !atmlab_stub

package linux

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/atmlab/atmlab/backend"
	"github.com/atmlab/atmlab/backend/cut"
	"github.com/atmlab/atmlab/control"
	"github.com/atmlab/atmlab/internal/cpuprofile"
	"github.com/atmlab/atmlab/kernel"
	"github.com/atmlab/atmlab/topologies"
	"github.com/atmlab/atmlab/topologies/settings"
)

// DefaultLoop is the real-time loop's tuning unless up's flags change it.
var DefaultLoop = Loop{Spin: kernel.DefaultSpin, Linger: kernel.DefaultLinger, IdleSpin: kernel.DefaultIdleSpin}

// KeepAwakeIfAsked is the CPU keeper's body in the child up
// --keep-cpus-awake starts (kernel.KeepCPUsAwake), where it never
// returns; elsewhere it returns at once. main calls it first.
func KeepAwakeIfAsked() { kernel.KeepAwakeIfAsked() }

// NeedsKernel says whether verb can run here: always, on Linux.
func NeedsKernel(verb string) error { return nil }

// InHolder says whether this process runs in a rootless lab's holder.
func InHolder() bool { return kernel.InHolder() }

// NeedsHolder says whether a lab built now needs a holder (a normal user).
func NeedsHolder() bool { return kernel.NeedsHolder() }

// RunHolder runs this command again, as a normal user, in a rootless lab's
// holder (its own user, mount and network namespaces; see
// kernel/rootless.go) and exits with the holder's exit code.
// labs are what the holder will build. It returns only on failure.
func RunHolder(labs ...*topologies.Lab) error {
	code, err := HolderRun(labs...)
	if err != nil {
		return err
	}
	os.Exit(code)
	return nil
}

// HolderRun runs this command again in a rootless lab's holder and
// returns the holder's exit code.
func HolderRun(labs ...*topologies.Lab) (int, error) { return kernel.RunHolder(os.Args[1:], labs...) }

// MeasureLock takes the machine-wide measuring lock (kernel.MeasureLock).
func MeasureLock(waiting func(pid int)) (func(), error) { return kernel.MeasureLock(waiting) }

// MeasureLockPath is the measuring lock's file, for a message.
func MeasureLockPath() string { return kernel.MeasureLockPath() }

// Down removes what the lab named name left behind.
func Down(name string) ([]string, error) { return kernel.Down(name) }

// Running lists the labs whose control sockets answer this user.
func Running() ([]RunningLab, error) {
	labs, err := kernel.Running()
	out := make([]RunningLab, len(labs))
	for i, l := range labs {
		out[i] = RunningLab(l)
	}
	return out, err
}

// Exec runs argv in host node of lab; no argv is an interactive shell.
func Exec(lab, node string, argv []string) error {
	if len(argv) == 0 {
		argv = shellIn(lab, node)
	}
	return kernel.Exec(lab, node, argv)
}

// Stats asks a running lab for its counters.
func Stats(ctx context.Context, lab string) (*control.Stats, error) {
	return kernel.QueryStats(ctx, lab)
}

// Set changes a running lab's link.
func Set(ctx context.Context, lab, endpoint, direction string, c settings.Change) (*control.Changed, error) {
	return kernel.SetLink(ctx, lab, endpoint, direction, c)
}

// Topology asks a running lab for its topology.
func Topology(ctx context.Context, lab string) (*topologies.View, error) {
	return kernel.QueryTopology(ctx, lab)
}

// Capture captures the link that has endpoint into w.
func Capture(ctx context.Context, lab, endpoint string, cellMode bool, w io.Writer, count int) (int, bool, error) {
	return kernel.Capture(ctx, lab, endpoint, cellMode, w, count)
}

// AsLabUser runs this command again as the normal user whose rootless lab
// is named lab, when root runs it and has no lab of that name (see
// kernel.UserLab), and exits with its exit code. It returns nil at once
// when there is no such lab.
func AsLabUser(lab string) error {
	uid, gid, dir, ok, err := kernel.UserLab(lab)
	if err != nil || !ok {
		return err
	}
	code, err := kernel.AsUser(uid, gid, dir)
	if err != nil {
		return err
	}
	os.Exit(code)
	return nil
}

// RefuseUserLab refuses root's command on a user's rootless lab named
// lab, which it reaches only as that user.
func RefuseUserLab(lab string) error {
	uid, _, _, ok, err := kernel.UserLab(lab)
	if !ok {
		return err
	}
	return errors.Join(err, fmt.Errorf("lab %s is uid %d's rootless lab: run this as that user, such as sudo -u '#%d' atmlab %s", lab, uid, uid, strings.Join(os.Args[1:], " ")))
}

// Foreground is atmlab up: a lab built in the kernel and run until its
// context ends, saying what it does on Out and Log.
type Foreground struct {
	Part     Part // one part of a split lab, if Part.Name is set
	Loop     Loop
	Profile  string    // the emulator's CPU profile's file, or none
	Out, Log io.Writer // "ready" on Out; notes, changes and the end on Log
	// View starts the live view of src, if one was asked for, and returns
	// its URL ("" for none); it serves until its context ends.
	View func(ctx context.Context, src Source) (url string, err error)
}

// Run builds lab in the kernel and runs it until ctx ends.
func (f Foreground) Run(ctx context.Context, lab *topologies.Lab) error {
	if f.Profile != "" {
		stop, err := cpuprofile.Start(f.Profile)
		if err != nil {
			return err
		}
		defer stop()
	}
	var part *cut.Part
	var standIns []string
	whole := lab
	if f.Part.Name != "" {
		var err error
		if part, err = cut.Of(lab, f.Part.Name); err != nil {
			return err
		}
		lab, standIns = part.Lab, part.StandIns
	}
	k, err := kernel.UpPart(lab, standIns, whole)
	if err != nil {
		return err
	}
	defer k.Close()
	stopAwake := func() error { return nil }
	k.Loop.Spin, k.Loop.Linger, k.Loop.IdleSpin = f.Loop.Spin, f.Loop.Linger, f.Loop.IdleSpin
	if part != nil && f.Loop.IdleSpin == DefaultLoop.IdleSpin {
		// A part's loop sleeps in epoll when idle instead of polling and
		// yielding the core: a frame from the peer or a host wakes it at
		// once, where two yielding loops on one busy machine waited for
		// each other's and other work's time slices (TCP_RR across a 1 ms
		// cut at half the model's rate; at it, with this).
		k.Loop.IdleSpin = 0
	}
	if f.Loop.KeepAwake {
		awake, err := kernel.KeepCPUsAwake()
		if err != nil {
			return err
		}
		defer awake.Close()
		stopAwake = awake.Close
	}
	if part != nil {
		cuts, err := f.cuts(ctx, whole, part, k)
		if err != nil {
			return err
		}
		defer cuts.Close()
	}
	k.Events = f.Log
	for _, n := range k.Notes {
		fmt.Fprintf(f.Log, "note: %s\n", n)
	}
	viewCtx, stopView := context.WithCancel(ctx)
	defer stopView()
	if f.View != nil {
		url, err := f.View(viewCtx, Source{k})
		if err != nil {
			return err
		}
		if url != "" {
			defer kernel.AdvertiseWeb(lab.Name, url)()
		}
	}
	fmt.Fprintf(f.Out, "lab %s ready: %d hosts, %d links; atmlab exec %s NODE -- CMD to use it, Ctrl-C to stop\n",
		lab.Name, len(k.Namespaces()), len(lab.Links), lab.Name)
	runErr := k.Run(ctx)
	stopAwake() // the CPUs are the teardown's
	st := k.Loop.Stats()
	fmt.Fprintf(f.Log, "lab %s stopping after %v: emulator CPU %.0f%%, release lateness p50 %v p99 %v max %v\n",
		lab.Name, st.Uptime.Round(time.Millisecond), 100*st.CPU, st.Lateness.P50, st.Lateness.P99, st.Lateness.Max)
	if err := k.Close(); err != nil {
		return fmt.Errorf("tear down %s: %w", lab.Name, err)
	}
	fmt.Fprintf(f.Log, "lab %s removed\n", lab.Name)
	return runErr
}

// cuts attaches a part's cut ports to its lab in the kernel and agrees
// on time with the peers, refusing a cut too short for the path between.
func (f Foreground) cuts(ctx context.Context, whole *topologies.Lab, part *cut.Part, k *kernel.Lab) (*cut.Cuts, error) {
	peers, err := cut.ParsePeers(f.Part.Peers)
	if err != nil {
		return nil, err
	}
	cfg := cut.Config{Listen: f.Part.Listen, Peers: peers, Wait: f.Part.Wait, Log: f.Log}
	cuts, err := cut.Attach(part, k.Net, k.Net.Sched, k.Loop, cut.Tag(whole), cfg)
	if err != nil {
		return nil, err
	}
	if err := cuts.Start(ctx, cfg); err != nil {
		cuts.Close()
		return nil, err
	}
	k.Cuts = cuts.Stats
	return cuts, nil
}

// Source is a lab this process runs (up --web, lab run --web), as the
// live view sees it.
type Source struct{ k *kernel.Lab }

// LiveSource is env's lab for the live view, if env is a lab in the
// kernel (a virtual lab has nothing to show live).
func LiveSource(env backend.Env) (Source, bool) {
	k, ok := env.(interface{ Kernel() *kernel.Lab })
	if !ok {
		return Source{}, false
	}
	return Source{k.Kernel()}, true
}

func (s Source) Topology(context.Context) (topologies.View, error) { return s.k.Lab.View(), nil }

func (s Source) Stats(ctx context.Context) (any, error) { return s.k.Stats(ctx) }

func (s Source) Set(ctx context.Context, endpoint, direction string, c settings.Change) (any, error) {
	return s.k.Set(ctx, endpoint, direction, c)
}
